// Structural equality and hashing of IR. Variables bound inside the compared trees (For, Let,
// LetStmt, Reduce axes) are matched by position; free variables must be the same variable.
#pragma once
#include <cstddef>

#include "tessel/ir/stmt.h"

namespace tessel::ir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
/** Consistent with structural_equal: equal trees hash equally. */
size_t structural_hash(const Expr& e);
size_t structural_hash(const Stmt& s);

}  // namespace tessel::ir
