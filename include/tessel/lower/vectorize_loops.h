// Pass: a For marked Vectorized (constant extent) becomes vector operations (Ramp/Broadcast, vector
// Load/Store, guards turned into lane predicates). A loop that cannot be vectorized (inner loops, a
// store whose lanes collide) stays a scalar loop. Requires: flat Load/Store.
#pragma once
#include "tessel/ir/stmt.h"

namespace tessel::lower {

ir::Stmt vectorize_loops(const ir::Stmt& s);

}  // namespace tessel::lower
