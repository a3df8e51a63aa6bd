// The conv2d part of the cpu benchmark: ResNet-50 layers in NHWC and NCHW, tessel vs oneDNN.
#pragma once
#include "bench_util.h"

namespace tessel::bench {

/** Adds one row per layer, layout and thread count; returns the number of wrong results. */
int run_conv_benchmarks(Table& table, double peak_gflops, bool quick);

}  // namespace tessel::bench
