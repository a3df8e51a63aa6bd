// Reductions (float32) of a tensor over a set of axes: sum, max, min, mean (= sum / count).
#pragma once
#include <string>
#include <vector>

#include "tessel/ops/registry.h"

namespace tessel::ops {

/** The reductions; mean is the sum divided by the number of reduced elements. */
enum class ReduceOp { kSum, kMax, kMin, kMean };
/** Parses sum|max|min|mean (UserError listing them otherwise). */
ReduceOp parse_reduce_op(const std::string& s);

/** Out = op of In[shape] over `axes` (distinct, in range). Out drops the reduced axes (keepdims: keeps
 *  them with extent 1); reducing every axis without keepdims gives shape [1]. mean is two stages,
 *  "S" (the sum) and "Out" = S / count. Returns {{In}, {Out}}. */
OpTensors reduce(ReduceOp op, const std::vector<int>& shape, const std::vector<int>& axes, bool keepdims);

}  // namespace tessel::ops
