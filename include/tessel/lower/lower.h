// Lowering: schedule -> loop-nest IR, through the passes listed (in order) in src/lower/lower.cpp.
// Set TESSEL_DUMP_IR=pass1,pass2 (or all) to print the IR after passes, TESSEL_PASS_TIMING=1 for timings.
#pragma once
#include <string>
#include <vector>

#include "tessel/ir/stmt.h"
#include "tessel/schedule/schedule.h"

namespace tessel::lower {

struct LowerOptions {
  /** Run the simplifier between passes (off only for debugging the passes themselves). */
  bool simplify = true;
};

/** Lowers a schedule to a function taking `args` (inputs and outputs, by tensor name) in order.
 *  Throws UserError when an argument is missing or the schedule cannot be realized. */
ir::LoweredFunc lower(const schedule::Schedule& sch, const std::vector<te::Tensor>& args, const std::string& name,
                      const LowerOptions& options = {});

}  // namespace tessel::lower
