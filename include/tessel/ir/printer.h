// Human-readable IR text (what TESSEL_DUMP_IR and `tessel explain` print).
#pragma once
#include <ostream>
#include <string>

#include "tessel/ir/stmt.h"

namespace tessel::ir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::string to_string(const LoweredFunc& f);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace tessel::ir
