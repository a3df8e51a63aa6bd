// 2-D convolution (batch N, stride, zero padding) in NHWC and NCHW, with the CPU schedules used by the
// fast-CPU-code benchmarks. The fast forms take weights already re-laid-out into output-channel panels
// (OHWI-blocked: Wp[co / nr][kh][kw][ci][co % nr]), the layout a deployment packs once at compile time
// (as oneDNN reorders weights once into its preferred format); pack_conv2d_weights builds that kernel.
#pragma once
#include "tessel/schedule/schedule.h"
#include "tessel/te/tensor.h"

namespace tessel::ops {

enum class ConvLayout { kNHWC, kNCHW };
const char* layout_name(ConvLayout l);

struct Conv2dShape {
  int N = 1, H = 56, W = 56, CI = 64, CO = 64, KH = 3, KW = 3, stride = 1, pad = 1;
  int HO() const { return (H + 2 * pad - KH) / stride + 1; }
  int WO() const { return (W + 2 * pad - KW) / stride + 1; }
  double flops() const { return 2.0 * N * HO() * WO() * CO * CI * KH * KW; }
};

/** Plain conv2d: {In, W, Out}. NHWC: In[N][H][W][CI], W[KH][KW][CI][CO], Out[N][HO][WO][CO];
 *  NCHW: In[N][CI][H][W], W[CO][CI][KH][KW], Out[N][CO][HO][WO]. Padding through stage "Ipad". */
std::vector<te::Tensor> conv2d(const Conv2dShape& s, ConvLayout layout);

/** Conv2d with panel-packed weights: {In, Wp, Out} with Wp[CO/nr][KH][KW][CI][nr] (CO % nr == 0).
 *  NCHW computes an NHWC tile "T" and transposes it into Out. */
std::vector<te::Tensor> conv2d_packed(const Conv2dShape& s, ConvLayout layout, int nr);

/** {W, Wp}: the kernel that packs plain weights (HWIO for NHWC, OIHW for NCHW) into Wp. */
std::vector<te::Tensor> pack_conv2d_weights(const Conv2dShape& s, ConvLayout layout, int nr);

struct Conv2dCpuParams {
  int mr = 7;   // output pixels along W per register tile (must divide WO)
  int nr = 32;  // output channels per tile (vectorized; a multiple of the vector width)
  int cunroll = 4;
  bool parallel = true;
};

/** Parameters for vectors of vector_bytes, choosing mr to divide the output width. */
Conv2dCpuParams conv2d_cpu_params(const Conv2dShape& s, int vector_bytes);

/** Register-tiled schedule for conv2d_packed: mr x nr accumulators over the full (kh, kw, ci)
 *  reduction; padding computed at the root in parallel; (co-panel, row) pairs in parallel. */
schedule::Schedule schedule_conv2d_packed_cpu(const std::vector<te::Tensor>& t, const Conv2dShape& s,
                                              ConvLayout layout, const Conv2dCpuParams& p);

/** A complete CPU kernel for one conv2d: the function's arguments {In, weights, Out}, its schedule,
 *  and the weight-packing kernel {W, Wp} to run once beforehand (empty when the kernel takes the plain
 *  weights). */
struct Conv2dKernel {
  std::vector<te::Tensor> args;
  schedule::Schedule schedule;
  std::vector<te::Tensor> weight_pack;
};

/** The hand-written strategy for a shape and layout: NCHW pointwise (1x1, stride 1, no padding) is a
 *  GEMM over the flattened spatial axis (vectorized along it, plain OIHW weights); everything else is
 *  conv2d_packed with schedule_conv2d_packed_cpu. */
Conv2dKernel conv2d_cpu_kernel(const Conv2dShape& s, ConvLayout layout, int vector_bytes);

}  // namespace tessel::ops
