// Pass: a For marked Unrolled (constant extent) is replaced by copies of its body; inside an
// AttrStmt "pragma_auto_unroll_max_step" = N, innermost serial loops whose total unrolled size is at
// most N steps are unrolled too. Requires: simplified (constant) extents.
#pragma once
#include "tessel/ir/stmt.h"

namespace tessel::lower {

ir::Stmt unroll_loops(const ir::Stmt& s);

}  // namespace tessel::lower
