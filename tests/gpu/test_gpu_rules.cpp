// The GPU sketch rules: random points of the generated spaces give schedules that pass the GPU checks
// (or are rejected with a reason), build to PTX that ptxas accepts, and compute the right answer when
// their IR runs on the CPU (against the operator's default CPU schedule).
#include <cmath>
#include <random>
#include <set>

#include "gpu_test_util.h"
#include "tessel/codegen/jit.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/tuner/search_space.h"

using namespace tessel;
using runtime::NDArray;

namespace {

// The candidate's IR run on the CPU matches `want` (the default CPU schedule's outputs, input seed 99).
// The software_pipeline pragma is left out: the JIT runs thread loops as loops, so a fetch's thread loop
// inside a simulated thread would share that thread's staging registers (the pass is checked on the CPU
// in tests/correctness and on the GPU by the worker's reference check).
void require_matches_default(const workload::Workload& w, const std::vector<schedule::Step>& trace,
                             const std::vector<NDArray>& want) {
  std::vector<schedule::Step> plain;
  for (auto& st : trace)
    if (auto* pr = std::get_if<schedule::PragmaStep>(&st); !pr || pr->key != "software_pipeline") plain.push_back(st);
  schedule::Schedule sp(w.outputs);
  REQUIRE(sp.apply_all(plain).is_ok());
  auto got = gputest::run_on_cpu(lower::lower(sp, w.args(), "cand"), w.inputs.size(), {}, 99);
  for (size_t i = w.inputs.size(); i < got.size(); ++i)
    for (int64_t e = 0; e < got[i].num_elements(); ++e) {
      double g = got[i].get(e), r = want[i].get(e);
      if (!(std::fabs(g - r) <= 1e-4 * std::max(1.0, std::fabs(r)))) {
        INFO("schedule:\n" << sp.to_string() << "element " << e << ": " << g << " vs " << r);
        REQUIRE(false);
      }
    }
}

std::vector<NDArray> default_outputs(const workload::Workload& w) {
  ops::OpTensors t{w.inputs, w.outputs};
  return gputest::run_on_cpu(lower::lower(ops::default_schedule(t), w.args(), "ref"), w.inputs.size(), {}, 99);
}

}  // namespace


TEST_CASE("gpu rules: random candidates are valid kernels with the right answer", "[gpu][rules]") {
  const char* specs[] = {"matmul:M=64,N=64,K=32", "dense:M=16,N=32,K=64", "conv2d_nhwc:H=8,W=8,CI=8,CO=16,pad=1",
                         "conv2d_nchw:H=6,W=6,CI=4,CO=8,pad=1,activation=relu", "softmax:M=8,N=40",
                         "layer_norm:M=4,N=24", "add:M=5,N=77", "max_pool:C=4,H=8,W=8",
                         "reduce:D0=3,D1=1000,op=sum,axes=1"};
  std::mt19937_64 rng(gputest::seed());
  for (const char* spec : specs) {
    auto w = std::make_shared<const workload::Workload>(workload::from_spec(spec));
    auto space = tuner::make_gpu_rule_space(w);
    INFO(spec);
    REQUIRE_FALSE(space->knobs().empty());
    auto want = default_outputs(*w);
    int built = 0, rejected = 0;
    for (int trial = 0; trial < 40 && built < 3; ++trial) {
      tuner::KnobValues k;
      for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
      std::vector<schedule::Step> trace;
      if (!space->make_trace(k, &trace)) {
        ++rejected;
        continue;
      }
      schedule::Schedule s(w->outputs);
      REQUIRE(s.apply_all(trace).is_ok());
      ir::LoweredFunc f = lower::lower(s, w->args(), "cand");
      Status valid = codegen::validate_gpu_kernel(f);
      if (!valid) {
        INFO(valid.message());
        CHECK_FALSE(valid.message().empty());
        ++rejected;
        continue;
      }
      ++built;
      auto kernel = codegen::build_cuda(f);
      gputest::require_ptxas_accepts(kernel);
      require_matches_default(*w, trace, want);
    }
    INFO("built " << built << ", rejected " << rejected);
    CHECK(built >= 1);
  }
  // The knobs of a matmul: thread and per-thread tiles, the reduction slice, shared operands.
  auto mm = tuner::make_gpu_rule_space(std::make_shared<const workload::Workload>(workload::from_spec("matmul:M=64,N=64,K=64")));
  std::set<std::string> names;
  for (auto& k : mm->knobs()) names.insert(k.name);
  CHECK(names.count("C.gpu_tile.i"));
  CHECK(names.count("C.gpu_tile.j"));
  CHECK(names.count("C.gpu_tile.k"));
  CHECK(names.count("C.shared.A"));
  CHECK(names.count("C.shared.B"));
  CHECK(names.count("C.fetch_vector"));
  auto red = tuner::make_gpu_rule_space(
      std::make_shared<const workload::Workload>(workload::from_spec("reduce:D0=3,D1=1000,op=sum,axes=1")));
  int cross = -1;
  for (size_t i = 0; i < red->knobs().size(); ++i)
    if (red->knobs()[i].name.find(".cross_thread") != std::string::npos) cross = int(i);
  REQUIRE(cross >= 0);
  // Every cross-thread width gives a valid kernel with the right sums.
  const auto& rw = red->workload();
  ops::OpTensors rt{rw.inputs, rw.outputs};
  auto want = gputest::run_on_cpu(lower::lower(ops::default_schedule(rt), rw.args(), "ref"), rw.inputs.size(), {}, 5);
  for (size_t o = 1; o < red->knobs()[cross].options.size(); ++o) {
    tuner::KnobValues k(red->knobs().size(), 0);
    k[cross] = int(o);
    std::vector<schedule::Step> trace;
    Status made = red->make_trace(k, &trace);
    INFO(made.message());
    REQUIRE(made.is_ok());
    schedule::Schedule s(rw.outputs);
    REQUIRE(s.apply_all(trace).is_ok());
    ir::LoweredFunc f = lower::lower(s, rw.args(), "cross");
    auto kernel = codegen::build_cuda(f);
    CHECK(kernel.launch.block[0] == red->knobs()[cross].options[o][0]);
    CHECK(kernel.launch.grid[0] == 3);
    gputest::require_ptxas_accepts(kernel);
    auto got = gputest::run_on_cpu(f, rw.inputs.size(), {}, 5);
    for (int64_t e = 0; e < got[1].num_elements(); ++e)
      CHECK(std::fabs(got[1].get(e) - want[1].get(e)) <= 1e-4 * std::max(1.0, std::fabs(want[1].get(e))));
  }
}

TEST_CASE("gpu rules: tiled reductions use whole warps; pipelining and min blocks are knobs", "[gpu][rules]") {
  auto count = [](const std::string& spec, bool whole_warps) {
    auto w = std::make_shared<const workload::Workload>(workload::from_spec(spec));
    tuner::GpuRuleParams p;
    p.whole_warps = whole_warps;
    auto space = tuner::make_gpu_rule_space(w, {}, p);
    std::mt19937_64 rng(gputest::seed());
    int partial = 0, valid = 0, pipelined = 0;
    for (int trial = 0; trial < 300; ++trial) {
      tuner::KnobValues k;
      for (auto& kn : space->knobs()) k.push_back(std::uniform_int_distribution<int>(0, int(kn.options.size()) - 1)(rng));
      std::vector<schedule::Step> trace;
      if (!space->make_trace(k, &trace)) continue;
      schedule::Schedule s(w->outputs);
      REQUIRE(s.apply_all(trace).is_ok());
      lower::GpuLaunch launch;
      if (!codegen::validate_gpu_kernel(lower::lower(s, w->args(), "cand"), {}, &launch).is_ok()) continue;
      ++valid;
      partial += launch.threads_per_block() % 32 != 0;
      for (auto& st : trace)
        if (auto* pr = std::get_if<schedule::PragmaStep>(&st); pr && pr->key == "software_pipeline") ++pipelined;
    }
    return std::tuple{valid, partial, pipelined};
  };
  auto [valid, partial, pipelined] = count("matmul:M=256,N=256,K=64", true);
  CHECK(valid > 20);
  CHECK(partial == 0);
  CHECK(pipelined > 0);
  auto [valid2, partial2, pipelined2] = count("matmul:M=256,N=256,K=64", false);  // without the rule: some
  CHECK(valid2 > 20);
  CHECK(partial2 > 0);
  // 63 x 65 outputs: no whole number of warps divides them, so the rule does not apply and the space stays.
  auto [valid3, partial3, pipelined3] = count("matmul:M=63,N=65,K=16", true);
  CHECK(valid3 > 0);
  CHECK(partial3 == valid3);
  (void)pipelined2, (void)pipelined3;
}

TEST_CASE("gpu rules: the hand-tuned matmul kernels are seeds of the space, valid and right", "[gpu][rules]") {
  auto w = std::make_shared<const workload::Workload>(workload::from_spec("matmul:M=256,N=256,K=64"));
  auto space = tuner::make_gpu_rule_space(w);
  auto seeds = space->seeds();
  REQUIRE(seeds.size() == 3);
  auto want = default_outputs(*w);
  std::vector<int64_t> threads;
  int virtual_threads = 0;
  for (auto& k : seeds) {
    nlohmann::json d = space->describe(k);
    INFO(d.dump());
    CHECK(d["C.pipeline"] == nlohmann::json::array({1}));
    CHECK(d["C.shared.A"] == nlohmann::json::array({1}));
    CHECK(d["C.shared.B"] == nlohmann::json::array({1}));
    std::vector<schedule::Step> trace;
    REQUIRE(space->make_trace(k, &trace).is_ok());
    schedule::Schedule s(w->outputs);
    REQUIRE(s.apply_all(trace).is_ok());
    lower::GpuLaunch launch;
    REQUIRE(codegen::validate_gpu_kernel(lower::lower(s, w->args(), "seed"), {}, &launch).is_ok());
    threads.push_back(launch.threads_per_block());
    for (auto& st : trace)
      if (auto* b = std::get_if<schedule::BindStep>(&st); b && b->thread_tag == "vthread") ++virtual_threads;
    require_matches_default(*w, trace, want);
  }
  // 64x64 tiles of 8x4 per thread: 128 threads; 128x64 and 128x128 of 8x8: 128 and 256.
  CHECK((threads == std::vector<int64_t>{128, 128, 256}));
  CHECK(virtual_threads == 4);  // two virtual-thread axes in each of the last two
  // Where the tiles do not fit the shape, no seed.
  auto odd = std::make_shared<const workload::Workload>(workload::from_spec("matmul:M=63,N=65,K=16"));
  CHECK(tuner::make_gpu_rule_space(odd)->seeds().empty());
}
