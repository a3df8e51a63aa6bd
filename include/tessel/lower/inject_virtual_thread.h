// Pass: virtual threads (schedule bind(..., "vthread")), after storage flattening.
//
// A loop bound to "vthread" reaches this pass as AttrStmt "virtual_thread" around a serial loop over v.
// Its n iterations behave like n extra threads of the block: they never depend on each other except
// through shared memory (whose fetches cover all of them), so the loop may be moved inside any loop that
// does not depend on v. The pass removes it, as TVM's virtual-thread injection does:
//
//  - buffers allocated inside the loop whose contents depend on v (the local accumulators) get one copy
//    per virtual thread: n times the size, indexed at v * size;
//  - a statement that does not mention v (a cooperative shared-memory fetch) runs once;
//  - a loop that does not depend on v (blockIdx/threadIdx loops, the k loop) keeps one instance, with
//    the virtual threads moved into its body; vectorized loops, guards and lets that depend on v, and
//    single statements are copied once per virtual thread, with v replaced by 0 .. n-1.
//
// So a 2 x 2 grid of virtual threads over a 4 x 4 thread tile gives each thread four 4 x 4 tiles 64
// elements apart, sharing one k loop and one fetch per step: the interleaved ownership that makes
// per-thread shared-memory reads consecutive across a warp (no bank conflicts), which a contiguous 8 x 8
// tile does not.
#pragma once
#include "tessel/ir/stmt.h"

namespace tessel::lower {

/** The AttrStmt key build_loop_nest puts around a loop bound to "vthread". */
constexpr const char* kVirtualThreadAttr = "virtual_thread";

ir::Stmt inject_virtual_thread(const ir::Stmt& s);

}  // namespace tessel::lower
