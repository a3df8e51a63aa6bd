// Schedule steps: the trace a schedule is made of. Each step names its stage and axes by string so a
// trace can be stored (JSON), mutated by a search and replayed on a fresh schedule of the same
// computation to produce identical code.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tessel::schedule {

/** split axis into (axis.o, axis.i): inner extent = factor, or outer extent = nparts. */
struct SplitStep { std::string stage, axis; int64_t factor = 0; bool nparts = false; };
/** tile two axes x, y by (fx, fy): x.o, y.o, x.i, y.i. */
struct TileStep { std::string stage, x, y; int64_t fx = 0, fy = 0; };
/** fuse adjacent leaf axes (outer to inner) into one. */
struct FuseStep { std::string stage; std::vector<std::string> axes; };
/** put the named leaf axes in this relative order (others keep their places). */
struct ReorderStep { std::string stage; std::vector<std::string> order; };
/** compute stage inside the loop `axis` of `target`. */
struct ComputeAtStep { std::string stage, target, axis; };
struct ComputeInlineStep { std::string stage; };
struct ComputeRootStep { std::string stage; };
/** new stage "<tensor>.<scope>" copying tensor, read by `readers` instead of tensor. */
struct CacheReadStep { std::string tensor, scope; std::vector<std::string> readers; };
/** new stage "<stage>.<scope>" computing stage's body; stage becomes a copy of it. */
struct CacheWriteStep { std::string stage, scope; };
/** mark a leaf loop: "vectorize", "unroll", "parallel" or "serial". */
struct AnnotateStep { std::string stage, axis, annotation; };
/** factor a reduction: new stage "<stage>.rf" keeps `axis` (a reduce leaf) as a data axis. */
struct RfactorStep { std::string stage, axis; };
/** pad the stride of dimension dim of stage's buffer so stride % factor == offset. */
struct StorageAlignStep { std::string stage; int dim = 0; int64_t factor = 0, offset = 0; };
/** store stage's buffer with dimension dim blocked by factor: the block index becomes the outermost
 *  dimension and the offset inside the block the innermost (packing, e.g. B[k][j] -> [j/32][k][j%32]). */
struct TransformLayoutStep { std::string stage; int dim = 0; int64_t factor = 0; };
/** pragma on a loop; "auto_unroll_max_step" unrolls inner loops up to value steps; "software_pipeline" = 1
 *  (GPU) overlaps the global loads of the next shared-memory fetch at this loop with the compute
 *  (lower/software_pipeline.h); "min_blocks_per_sm" = N (GPU, on any loop of the kernel) asks ptxas to fit N
 *  blocks per multiprocessor (it caps registers per thread; .minnctapersm). */
struct PragmaStep { std::string stage, axis, key; int64_t value = 0; };

/** bind a data-parallel leaf loop to a GPU index: "blockIdx.x|y|z", "threadIdx.x|y|z" or "vthread"
 *  (a virtual thread: an unrolled loop that shared-memory stages cover as if it were a thread loop). */
struct BindStep { std::string stage, axis, thread_tag; };

/** store stage's buffer in `scope` ("global", "local", "shared"): e.g. an rfactor stage in shared memory,
 *  filled by threads and reduced across them. */
struct SetScopeStep { std::string stage, scope; };

using Step = std::variant<SplitStep, TileStep, FuseStep, ReorderStep, ComputeAtStep, ComputeInlineStep,
                          ComputeRootStep, CacheReadStep, CacheWriteStep, AnnotateStep, RfactorStep,
                          StorageAlignStep, PragmaStep, TransformLayoutStep, BindStep, SetScopeStep>;

/** The trace format version written into JSON; readers refuse newer versions. */
constexpr int kTraceVersion = 1;

/** {"version":1,"steps":[{"kind":"split","stage":"C","axis":"i","factor":32}, ...]} */
nlohmann::json trace_to_json(const std::vector<Step>& steps);
/** Parses a trace; throws UserError naming the step index and field on malformed input. */
std::vector<Step> trace_from_json(const nlohmann::json& j);
/** One-line text form of a step, e.g. `split(C, i, factor=32)`. */
std::string step_to_string(const Step& s);

}  // namespace tessel::schedule
