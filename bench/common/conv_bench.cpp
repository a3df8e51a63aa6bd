// Conv2d benchmark: each ResNet-50 layer in NHWC and NCHW, 1 and 2 threads, against oneDNN.
//
// Fairness: input and output are in the plain layout (nhwc / nchw) for both libraries. Weights are a
// constant of the network, so both use their preferred packed format, reordered once outside the timed
// region: oneDNN's primitive chooses it (format "any"); tessel packs into OHWI panels with its own
// pack_conv2d_weights kernel. Outputs are compared element by element.
#include "conv_bench.h"

#include <algorithm>
#include <cstdio>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/conv2d.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/runtime/thread_pool.h"

namespace tessel::bench {

namespace {

using ops::Conv2dShape;
using ops::ConvLayout;

struct Layer {
  const char* name;
  Conv2dShape s;
};

std::unique_ptr<codegen::JitModule> compile(const schedule::Schedule& sch, const std::vector<te::Tensor>& args,
                                            const char* name) {
  return codegen::JitModule::compile(lower::lower(sch, args, name));
}

// oneDNN forward-inference convolution with plain src/dst and its preferred weight format.
struct OneDnnConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory src, wei, dst;

  OneDnnConv(const Conv2dShape& s, ConvLayout layout, float* in, float* w_plain, float* out) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    bool nhwc = layout == ConvLayout::kNHWC;
    dnnl::memory::dims sd = {s.N, s.CI, s.H, s.W}, wd = {s.CO, s.CI, s.KH, s.KW}, dd = {s.N, s.CO, s.HO(), s.WO()};
    auto src_md = dnnl::memory::desc(sd, dt::f32, nhwc ? tag::nhwc : tag::nchw);
    auto dst_md = dnnl::memory::desc(dd, dt::f32, nhwc ? tag::nhwc : tag::nchw);
    auto wei_plain = dnnl::memory::desc(wd, dt::f32, nhwc ? tag::hwio : tag::oihw);
    auto wei_any = dnnl::memory::desc(wd, dt::f32, tag::any);
    auto d = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src_md, wei_any, dst_md, {s.stride, s.stride}, {s.pad, s.pad},
                                             {s.pad, s.pad});
    auto pd = dnnl::convolution_forward::primitive_desc(d, eng);
    conv = dnnl::convolution_forward(pd);
    src = dnnl::memory(src_md, eng, in);
    dst = dnnl::memory(dst_md, eng, out);
    dnnl::memory plain(wei_plain, eng, w_plain);
    wei = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(plain, wei).execute(strm, plain, wei);  // once, outside the timed region
    strm.wait();
    impl = pd.impl_info_str();
  }
  void run() {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  std::string impl;
};

}  // namespace

double onednn_conv_gflops(int N, int H, int W, int CI, int CO, int K, int stride, int pad, bool nhwc, int threads) {
  Conv2dShape s{N, H, W, CI, CO, K, K, stride, pad};
  ConvLayout layout = nhwc ? ConvLayout::kNHWC : ConvLayout::kNCHW;
  std::vector<int64_t> in_shape = nhwc ? std::vector<int64_t>{N, H, W, CI} : std::vector<int64_t>{N, CI, H, W};
  std::vector<int64_t> w_shape = nhwc ? std::vector<int64_t>{K, K, CI, CO} : std::vector<int64_t>{CO, CI, K, K};
  std::vector<int64_t> out_shape = nhwc ? std::vector<int64_t>{N, s.HO(), s.WO(), CO}
                                        : std::vector<int64_t>{N, CO, s.HO(), s.WO()};
  runtime::NDArray in(in_shape, "float32"), w(w_shape, "float32"), out(out_shape, "float32");
  in.fill_random(3);
  w.fill_random(4);
  omp_set_num_threads(threads);
  OneDnnConv dn(s, layout, in.data_as<float>(), w.data_as<float>(), out.data_as<float>());
  double t = 1e30;
  for (int round = 0; round < 3; ++round) t = std::min(t, time_it([&] { dn.run(); }).median_s);
  return s.flops() / t / 1e9;
}

int run_conv_benchmarks(Table& table, double peak, bool quick) {
  std::vector<Layer> layers = {
      {"conv_56x56_64-64_3x3", {1, 56, 56, 64, 64, 3, 3, 1, 1}},
      {"conv_28x28_128-128_3x3", {1, 28, 28, 128, 128, 3, 3, 1, 1}},
      {"conv_14x14_256-256_3x3", {1, 14, 14, 256, 256, 3, 3, 1, 1}},
      {"conv_7x7_512-512_3x3", {1, 7, 7, 512, 512, 3, 3, 1, 1}},
      {"conv_56x56_64-256_1x1", {1, 56, 56, 64, 256, 1, 1, 1, 0}},
  };
  if (quick) layers.resize(1);
  int failures = 0;
  int vbytes = codegen::Target::host().vector_bytes();
  for (auto& L : layers) {
    for (ConvLayout layout : {ConvLayout::kNHWC, ConvLayout::kNCHW}) {
      const Conv2dShape& s = L.s;
      bool nhwc = layout == ConvLayout::kNHWC;
      ops::Conv2dKernel k = ops::conv2d_cpu_kernel(s, layout, vbytes);
      auto kernel = compile(k.schedule, k.args, "conv");
      std::vector<int64_t> in_shape = nhwc ? std::vector<int64_t>{s.N, s.H, s.W, s.CI}
                                           : std::vector<int64_t>{s.N, s.CI, s.H, s.W};
      std::vector<int64_t> w_shape = nhwc ? std::vector<int64_t>{s.KH, s.KW, s.CI, s.CO}
                                          : std::vector<int64_t>{s.CO, s.CI, s.KH, s.KW};
      std::vector<int64_t> out_shape = nhwc ? std::vector<int64_t>{s.N, s.HO(), s.WO(), s.CO}
                                            : std::vector<int64_t>{s.N, s.CO, s.HO(), s.WO()};
      runtime::NDArray in(in_shape, "float32"), w(w_shape, "float32"), out(out_shape, "float32"),
          ref(out_shape, "float32");
      in.fill_random(3);
      w.fill_random(4);
      // Weights in the kernel's layout: packed once (untimed) when the kernel wants panels.
      runtime::NDArray wp;
      void* kernel_weights = w.data();
      if (!k.weight_pack.empty()) {
        std::vector<int64_t> wp_shape;
        for (auto& e : k.weight_pack[1].shape()) wp_shape.push_back(*ir::as_const_int(e));
        wp = runtime::NDArray(wp_shape, "float32");
        auto packer = compile(schedule::Schedule({k.weight_pack[1]}), k.weight_pack, "pack");
        void* pack_args[] = {w.data(), wp.data()};
        packer->call_packed(pack_args);
        kernel_weights = wp.data();
      }
      void* args[] = {in.data(), kernel_weights, out.data()};
      for (int threads : {1, 2}) {
        runtime::set_num_threads(threads);
        // oneDNN here uses OpenMP and fixes its thread count when a primitive is created.
        omp_set_num_threads(threads);
        OneDnnConv dn(s, layout, in.data_as<float>(), w.data_as<float>(), ref.data_as<float>());
        out.fill_bytes(0xFF);
        kernel->call_packed(args);
        dn.run();
        double err = max_rel_error(out.data_as<float>(), ref.data_as<float>(), out.num_elements());
        if (!(err < 1e-3)) {
          std::fprintf(stderr, "WRONG RESULT %s %s threads=%d: max rel error %g\n", L.name,
                       ops::layout_name(layout), threads, err);
          ++failures;
        }
        double tb = 1e30, tt = 1e30;
        for (int round = 0; round < 3; ++round) {
          tb = std::min(tb, time_it([&] { dn.run(); }).median_s);
          tt = std::min(tt, time_it([&] { kernel->call_packed(args); }).median_s);
        }
        double g = s.flops() / tt / 1e9, gb = s.flops() / tb / 1e9;
        table.add({L.name, ops::layout_name(layout), std::to_string(threads), fmt(g, 1), "onednn(" + dn.impl + ")",
                   fmt(gb, 1), fmt(g / gb, 3), fmt(100 * g / (peak * threads), 1), ""});
      }
    }
  }
  return failures;
}

}  // namespace tessel::bench
