// Neural-network operators of the operator library (float32): dense + bias + activation, max / avg /
// global average pooling, softmax and layer_norm. Multi-stage operators name their stages so a schedule
// can refer to them; every builder returns {{inputs in argument order}, {the one output}}.
#pragma once
#include <string>

#include "tessel/ops/activation.h"
#include "tessel/ops/conv2d.h"
#include "tessel/ops/registry.h"

namespace tessel::ops {

/** Out[M, N] = act(sum_k X[M, K] W[N, K] + bias[N]) (W stored [N, K], as a linear layer's weight).
 *  Inputs {X, W} or {X, W, bias}; the product is stage "D" when anything follows it. */
OpTensors dense(int M, int N, int K, bool bias, Activation act);

/** A 2-D pooling window (square stride and padding). Padding must be smaller than the kernel, so every
 *  window holds at least one input element. */
struct PoolParams {
  int N = 1, C = 1, H = 1, W = 1, KH = 2, KW = 2, stride = 2, pad = 0;
  ConvLayout layout = ConvLayout::kNCHW;
  /** Output extents: (H + 2 pad - KH) / stride + 1, likewise for W. */
  int HO() const;
  int WO() const;
};

/** Out = max over each window of In (padding never wins: it is the lowest float). In and Out in
 *  p.layout ([N, C, H, W] or [N, H, W, C]). */
OpTensors max_pool(const PoolParams& p);

/** Out = mean over each window. count_include_pad = false divides by the number of input elements the
 *  window covers (padding excluded, as PyTorch's count_include_pad=False); true by KH * KW. Stages:
 *  "Ipad" (when padded), "S" (the window sum), "Out". */
OpTensors avg_pool(const PoolParams& p, bool count_include_pad);

/** Out = mean of In over H and W: NCHW [N, C, 1, 1], NHWC [N, 1, 1, C]. Stages "S", "Out". */
OpTensors global_avg_pool(int N, int C, int H, int W, ConvLayout layout);

/** Softmax of each row of X[M, N]: Out = exp(X - max) / sum exp(X - max). Stages "Max", "E", "Sum", "Out". */
OpTensors softmax(int M, int N);

/** Layer normalization of each row of X[M, N] with gamma[N], beta[N]:
 *  Out = (X - mean) / sqrt(var + eps) * gamma + beta, var = mean((X - mean)^2) (two passes).
 *  Stages "Sum", "Mean", "VarSum", "Out". */
OpTensors layer_norm(int M, int N, double eps);

}  // namespace tessel::ops
