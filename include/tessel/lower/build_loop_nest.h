// Pass 1: builds the loop nest of every stage from the schedule: inlines inlined stages, infers the
// region each stage must compute (bound inference), creates loops from the leaf axes, guards for
// non-dividing splits, reduction init/update, attached stages and buffer allocations.
// Establishes: multi-dimensional BufferLoad/BufferStore; For kinds from annotations; pragmas as AttrStmt.
#pragma once
#include "tessel/ir/stmt.h"
#include "tessel/schedule/schedule.h"

namespace tessel::lower {

/** Returns the function body; `params` receives one buffer per argument, in order. */
ir::Stmt build_loop_nest(const schedule::Schedule& sch, const std::vector<te::Tensor>& args,
                         std::vector<ir::Buffer>* params);

}  // namespace tessel::lower
