// Every registered operator with its default GPU schedule: builds to PTX that ptxas accepts, and the
// GPU-scheduled IR run on the CPU agrees with the operator's default CPU schedule on random data.
#include <cmath>

#include "gpu_test_util.h"
#include "tessel/codegen/jit.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/workload/workload.h"

using namespace tessel;
using runtime::NDArray;


TEST_CASE("gpu default schedules of the operator library: PTX and CPU semantics", "[gpu][ops]") {
  const char* specs[] = {
      "add:M=7,N=33",
      "avg_pool:C=4,H=9,W=9",
      "batch_matmul:batch=2,M=16,N=24,K=8",
      "conv2d_nchw:H=8,W=8,CI=4,CO=8,pad=1,bias=1,activation=gelu",
      "conv2d_nhwc:H=8,W=8,CI=8,CO=16,pad=1,activation=relu",
      "dense:M=8,N=16,K=32",
      "depthwise_conv2d:H=8,W=8,C=8",
      "exp:N=300",
      "global_avg_pool:C=8,H=5,W=5",
      "layer_norm:M=8,N=40",
      "matmul:M=128,N=128,K=16",
      "matmul:M=64,N=192,K=24",
      "matmul:M=30,N=20,K=10",
      "max_pool:C=4,H=8,W=8",
      "pad:H=5,W=6",
      "reduce:D0=37",
      "sigmoid:N=100",
      "softmax:M=8,N=50",
      "tanh:N=100",
      "transpose:D0=9,D1=13",
  };
  for (const char* spec : specs) {
    DYNAMIC_SECTION(spec) {
      workload::Workload w = workload::from_spec(spec);
      ops::OpTensors t{w.inputs, w.outputs};
      schedule::Schedule gs = ops::default_gpu_schedule(t);
      ir::LoweredFunc gf = lower::lower(gs, w.args(), "k");
      codegen::CudaKernel k = codegen::build_cuda(gf);
      CHECK(k.artifact.args.size() == w.args().size());
      gputest::require_ptxas_accepts(k);
      // The same IR on the CPU against the CPU default schedule.
      std::vector<NDArray> inputs;
      for (size_t i = 0; i < w.inputs.size(); ++i) {
        std::vector<int64_t> shape;
        for (auto& e : w.inputs[i].shape()) shape.push_back(*ir::as_const_int(e));
        inputs.emplace_back(shape, runtime::DType::parse(w.inputs[i].dtype().to_string()));
        inputs.back().fill_random(gputest::seed() + i, -1.0, 1.0);
      }
      ir::LoweredFunc cf = lower::lower(ops::default_schedule(t), w.args(), "ref");
      auto got = gputest::run_on_cpu(gf, w.inputs.size(), inputs);
      auto want = gputest::run_on_cpu(cf, w.inputs.size(), inputs);
      for (size_t i = w.inputs.size(); i < got.size(); ++i)
        for (int64_t e = 0; e < got[i].num_elements(); ++e) {
          double g = got[i].get(e), r = want[i].get(e);
          INFO(spec << " output " << i << " element " << e << ": " << g << " vs " << r << " (seed " << gputest::seed()
                    << ")");
          REQUIRE(std::fabs(g - r) <= 1e-4 * std::max(1.0, std::fabs(r)));
        }
    }
  }
}
