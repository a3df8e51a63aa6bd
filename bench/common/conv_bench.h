// The conv2d part of the cpu benchmark: ResNet-50 layers in NHWC and NCHW, tessel vs oneDNN.
#pragma once
#include "bench_util.h"

namespace tessel::bench {

/** oneDNN's GFLOP/s for one conv2d (plain layouts, weights reordered once), measured now. */
double onednn_conv_gflops(int N, int H, int W, int CI, int CO, int K, int stride, int pad, bool nhwc, int threads);

/** Adds one row per layer, layout and thread count; returns the number of wrong results. */
int run_conv_benchmarks(Table& table, double peak_gflops, bool quick);

}  // namespace tessel::bench
