// The general 2-D convolution family of the operator library: conv2d (NCHW / NHWC, stride, zero padding,
// dilation, groups), depthwise conv2d and conv2d_transpose, in float32 or int8 (int8 x int8 -> int32:
// operands are cast to int32 before the multiply). Registered as conv2d_nchw, conv2d_nhwc,
// depthwise_conv2d and conv2d_transpose. The fast fp32 kernels the benchmarks use are in conv2d.h.
#pragma once
#include "tessel/ops/activation.h"
#include "tessel/ops/conv2d.h"
#include "tessel/ops/registry.h"

namespace tessel::ops {

/** Shape of one convolution: square stride / padding / dilation, channels split into `groups`. */
struct ConvParams {
  int N = 1, H = 56, W = 56, CI = 64, CO = 64, KH = 3, KW = 3;
  int stride = 1, pad = 0, dilation = 1, groups = 1;
  ir::DataType dtype = ir::DataType::float32();  // of input and weights; the output is int32 for int8
  bool bias = false;                             // add Bias[CO] (int32 for int8) to each output channel
  Activation act = Activation::kNone;            // then apply act (gelu: float32 only)
  /** Output extents of a forward convolution. */
  int HO() const;
  int WO() const;
};

// With a bias or an activation, the convolution is stage "Conv" and the output "Out" = act(Conv + Bias)
// (inputs {In, W, Bias}); without, the convolution is "Out" itself (inputs {In, W}).

/** Grouped conv2d. NCHW: In[N][CI][H][W], W[CO][CI/groups][KH][KW] -> Out[N][CO][HO][WO];
 *  NHWC: In[N][H][W][CI], W[KH][KW][CI/groups][CO] -> Out[N][HO][WO][CO]. Padding is stage "Ipad" (present
 *  when pad > 0; always for fp32 with groups = dilation = 1, which is exactly ops::conv2d). */
OpTensors conv2d_general(const ConvParams& p, ConvLayout layout);

/** Depthwise conv2d with channel multiplier CO / CI (output channel c * mult + m reads input channel c).
 *  NCHW: W[CI][mult][KH][KW]; NHWC: W[KH][KW][CI][mult]; groups is ignored. */
OpTensors depthwise_conv2d(const ConvParams& p, ConvLayout layout);

/** conv2d_transpose (the gradient of conv2d w.r.t. its input), NCHW: In[N][CI][H][W],
 *  W[CI][CO][KH][KW] -> Out[N][CO][HO][WO], HO = (H-1) stride - 2 pad + dilation (KH-1) + output_padding + 1.
 *  Out[y] sums In[iy] * W[kh] over iy * stride + kh * dilation - pad == y; groups, bias, act are ignored. */
OpTensors conv2d_transpose(const ConvParams& p, int output_padding);

}  // namespace tessel::ops
