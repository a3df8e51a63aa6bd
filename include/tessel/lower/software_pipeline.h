// Pass: software pipelining of shared-memory fetches (GPU), for loops marked with the schedule pragma
// "software_pipeline" (AttrStmt "pragma_software_pipeline" after build_loop_nest).
//
// A marked loop whose body is "fetch into shared buffers, then compute from them" (the cooperative
// fetch of a cache_read "shared" stage computed at that loop, then its reader):
//
//   for ko { allocate S (shared) { S[...] = G[f(ko)]; compute(S) } }
//
// becomes a register-staged pipeline: the global loads of the next iteration are issued before this
// iteration's compute and stored to shared memory after it, so their latency hides behind the compute:
//
//   allocate R (local, per thread) { allocate S {
//     S[...] = G[f(0)]                                  // prologue: the first tile
//     for ko { if (ko + 1 < n) R[...] = G[f(ko + 1)]    // loads in flight during the compute
//              compute(S)
//              if (ko + 1 < n) S[...] = R[...] } } }    // the next tile
//
// insert_gpu_barriers then places one barrier at the top of the loop (the tile is complete) and one
// before the stores (every thread has finished reading). Loops bound to thread indices inside a fetch
// stay; its other loops index R (and are unrolled, so R lives in registers). A marked loop that does not
// have this shape, or whose staging would exceed kMaxStagedElements per thread, is left unchanged
// (the pragma only ever affects speed).
#pragma once
#include "tessel/ir/stmt.h"

namespace tessel::lower {

/** Per-thread registers the staging of one loop may use (elements, all fetches together). */
constexpr int64_t kMaxStagedElements = 64;

ir::Stmt software_pipeline(const ir::Stmt& s);

}  // namespace tessel::lower
