// Program features for the learned cost models (after Ansor, "Ansor: Generating High-Performance Tensor
// Programs for Deep Learning", OSDI'20, sec. 5.2): one fixed-length row per buffer store of a
// candidate's loop nest. A program's predicted score is the sum of its stores' scores ("pack-sum").
// The layout is listed in docs/costmodel.md with indices; changing it bumps kFeatureVersion, which
// saved models carry (a model trained on another version is refused at load).
#pragma once
#include <string>
#include <vector>

#include "tessel/ir/stmt.h"
#include "tessel/schedule/step.h"
#include "tessel/workload/workload.h"

namespace tessel::costmodel {

/** Version of the feature layout below; saved models record it. */
constexpr int kFeatureVersion = 4;

/** Buffers described per store (the ones with the most bytes accessed, in fixed slots). */
constexpr int kFeatureBufferSlots = 5;
/** Features per buffer slot. */
constexpr int kFeaturesPerBuffer = 12;

// Offsets of the feature groups in a row (see docs/costmodel.md for every index).
constexpr int kComputeOffset = 0;     // 14: arithmetic counts by kind, weighted by trip counts
constexpr int kLoopOffset = 14;       // 20: loop nest, vectorize/unroll/parallel
constexpr int kBufferOffset = 34;     // kFeatureBufferSlots * kFeaturesPerBuffer = 60
constexpr int kIntensityOffset = 94;  // 3: arithmetic intensity
constexpr int kAllocOffset = 97;      // 4: allocations
constexpr int kOtherOffset = 101;     // 3: program-level
constexpr int kCurveOffset = 104;     // kCurvePoints: arithmetic-intensity curve (version 2)
/** Points of the arithmetic-intensity curve: FLOPs per unique byte touched inside each loop level, from
 *  the innermost loop to the whole nest, sampled at evenly spaced log2(FLOPs) (after Ansor). */
constexpr int kCurvePoints = 10;
/** GPU group (version 3): launch shape, shared/local bytes, sm_90 occupancy estimate, store scope,
 *  coalescing. All zeros for programs without loops bound to blockIdx/threadIdx (CPU programs). */
constexpr int kGpuOffset = kCurveOffset + kCurvePoints;  // 114
/** Features in the GPU group. */
constexpr int kGpuFeatures = 26;
/** Cache and register-tile group (version 4): estimated bytes moved into caches of three sizes (an
 *  outermost-fitting-loop model of the store's accesses), the accumulator tile held across the innermost
 *  loop the store does not depend on, and the arithmetic intensity inside that loop. */
constexpr int kCacheOffset = kGpuOffset + kGpuFeatures;  // 140
/** Features in the cache group. */
constexpr int kCacheFeatures = 5;
/** Floats per row. */
constexpr int kFeatureLength = kCacheOffset + kCacheFeatures;

/** One name per feature index (e.g. "float_mul", "buf0.bytes"); size kFeatureLength. */
const std::vector<std::string>& feature_names();

/** Rows, one per Store (or BufferStore) of f, in program order. Works on the partially lowered IR
 *  (loop kinds kept, see extraction_ir) and on fully lowered functions (vector lanes from Ramp). */
std::vector<std::vector<float>> extract_features(const ir::LoweredFunc& f);

/** The IR the features are read from: the trace applied to Schedule(w.outputs), then the lowering passes
 *  up to storage flattening (vectorize/unroll are still loop kinds, not copies). Throws UserError when
 *  the trace cannot be applied or lowered. */
ir::LoweredFunc extraction_ir(const workload::Workload& w, const std::vector<schedule::Step>& trace);

/** Rows of a candidate: extract_features(extraction_ir(w, trace)); empty when the trace is invalid. */
std::vector<std::vector<float>> extract_features(const workload::Workload& w, const std::vector<schedule::Step>& trace);

/** Bytes moved into the cache of `level` (0: 32 KiB, 1: 1 MiB, 2: 32 MiB) per FLOP of the program: the
 *  traffic_l1/l2/l3 features of the rows with their per-FLOP scale and log undone, summed. 0 for no rows. */
double cache_traffic_per_flop(const std::vector<std::vector<float>>& rows, int level);

/** Sum of the rows (the per-program vector the ranking models use); zeros for no rows. */
std::vector<float> sum_features(const std::vector<std::vector<float>>& rows);

}  // namespace tessel::costmodel
