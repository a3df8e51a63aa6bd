// Features of a candidate's compiled code (x86-64): what LLVM made of the loop nest after O3. The loop
// nest's features (features.h) say which loops are unrolled and vectorized; only the machine code says
// whether the accumulator tile stayed in registers, how many loads and spills feed each FMA and how wide
// the FMAs came out, which is what orders the good schedules of a workload (docs/costmodel.md).
// One row per program, read from the assembly text of its hot loop: the innermost natural loop (of the
// control-flow graph's dominators: one that holds no other loop's header) with the most floating-point
// operations per iteration.
// Costs one compile (lower + LLVM O3 + instruction selection, ~70 ms for a 512^3 matmul), so the models
// use it to re-rank a shortlist (the search's refine stage), not to screen thousands of candidates.
#pragma once
#include <string>
#include <vector>

#include "tessel/codegen/target.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::costmodel {

/** Version of the layout below; models trained with code features record it. */
constexpr int kCodeFeatureVersion = 3;  // 2: hot_chain; 3: the hot loop is a natural loop (same layout)
/** Floats per program. */
constexpr int kCodeFeatureLength = 17;
/** The length of an earlier version's layout: each version appends to the one before (version 1: the
 *  first 16), so a model trained on an earlier version reads the first that many features of this one.
 *  Version 3 keeps version 2's layout: it finds the hot loop as a natural loop of the control-flow graph
 *  instead of an address interval (the same quantities, read from the right loop where LLVM lays a loop's
 *  blocks out of order). 0 for a version this tessel does not know. */
constexpr int code_feature_length_of(int version) {
  return version == 1 ? 16 : version == 2 || version == 3 ? 17 : 0;
}

/** One name per code feature (e.g. "hot_fma"); size kCodeFeatureLength. */
const std::vector<std::string>& code_feature_names();

/** The features of x86-64 assembly text in AT&T syntax (as LLVM prints it), log2(1 + x) of each value.
 *  Text without instructions gives zeros. */
std::vector<float> code_features_from_assembly(const std::string& assembly);

/** An estimate of the FLOPs per cycle of the hot loop, from its code features alone (no data): its FLOPs per
 *  iteration over the cycles the busiest port class needs on a 4-wide out-of-order x86-64 core (2 FMA or
 *  vector pipes, 2 loads and 1 store per cycle, a gather ~4 cycles), or the latency of its longest
 *  accumulator chain (4 cycles an update) when that is longer. A roofline of the inner kernel:
 *  what the "analytic" cost model scores, and the prior of a cold refine model (docs/costmodel.md).
 *  0 for code without a floating-point loop. */
double hot_loop_flops_per_cycle(const std::vector<float>& code_features);

/** How far the hot loop's independent accumulator chains go beyond hiding the FMA latency: log2 of the
 *  cycles its arithmetic needs on the 2 FMA pipes over the latency of its longest accumulator chain (4 cycles
 *  an update), clamped to [-2, 2]. 0: exactly enough independent accumulators (8 single-update chains for 8
 *  FMAs); 1: twice as many (16), so a load or a broadcast that comes late stalls no pipe. The roofline counts
 *  both as full speed; on Zen 5, of 491 random 512^3 matmul schedules at the roofline's top, those with 0
 *  measured a median of 150 GFLOP/s and none within 95% of the best, those with 1 a median of 199 and 23 of
 *  the 24 within it (docs/costmodel.md, "Latency slack"). 0 without a carried chain. */
double hot_loop_latency_slack(const std::vector<float>& code_features);

/** log2(1 + FLOPs per load) of the hot loop (the flops_per_load feature): how much arithmetic each load of a
 *  register tile feeds. 0 for code without a floating-point loop. */
double hot_loop_flops_per_load(const std::vector<float>& code_features);

/** True when code features can be read for target (x86-64 CPUs). */
bool code_features_supported(const codegen::Target& target);

/** Compiles the candidate for target (the trace applied to Schedule(w.outputs), lower::lower, LLVM O3)
 *  and returns code_features_from_assembly of it; empty when the trace does not apply or lower, or the
 *  target is not supported. Thread-safe (each compile has its own LLVM context). */
std::vector<float> code_features(const workload::Workload& w, const std::vector<schedule::Step>& trace,
                                 const codegen::Target& target);

}  // namespace tessel::costmodel
