// The "analytic" cost model: no data, no training. It compiles each candidate and scores it by
// hot_loop_flops_per_cycle (code_features.h), the roofline of its inner kernel on a generic 4-wide x86-64
// core, on a log2 scale, less kL2TrafficWeight x the bytes per FLOP the loop nest moves into a 1 MiB cache
// (features.h, cache_traffic_per_flop: what comes from L3 or memory), plus small weights of the hot loop's
// latency slack and FLOPs per load (tie-breaks among kernels at the roofline). On the held-out workloads it orders
// ~0.79 of the pairs right with nothing measured (docs/costmodel.md), where a learned model is random until
// its warm-up samples: it is what a cold refine stage starts from (`tessel tune --refine-model cold`: an
// xgb-rank that learns this run's corrections to it) and can be asked for alone (`--refine-model analytic`,
// `--cost-model analytic`).
#include <cmath>

#include "tessel/costmodel/features.h"
#include "tessel/costmodel/learned_model.h"

namespace tessel::costmodel {

namespace {
// The hot loop's roofline ties whole families of kernels: every register tile that keeps both FMA pipes
// busy scores the same (on Zen 5, 27 of 128 random 512^3 matmul schedules, measured 122 to 260 GFLOP/s).
// What sets them apart is the memory system the roofline does not see. The L2 traffic breaks those ties: a
// kernel that moves fewer bytes per FLOP from L3 or memory comes first. A light weight (0.1 log2 units per
// byte per FLOP: ~7% of the score for a kernel that streams 1 byte per FLOP) keeps it a tie-break more than a
// second roofline: weighted as a bandwidth bound it ordered the held-out schedules worse (docs/costmodel.md).
constexpr double kL2TrafficWeight = 0.1;
// Two more tie-breaks among kernels at the roofline, read from the hot loop's code (code_features.h): its
// latency slack (more independent accumulators than the FMA latency needs: a late load stalls no pipe) and
// its FLOPs per load (a register tile that feeds more arithmetic from each load leaves the load ports and
// the L1 to the streamed operands). On 1,920 random Zen 5 512^3 matmul schedules, the analytic top 8 of 64
// held one within 95% of the best in 41% of draws with the roofline and L2 traffic alone, 54% with these;
// on the 26 workloads' records the top 8 of 64 went from 0.895 to 0.905 (docs/costmodel.md, "Latency slack").
// log2 units, 0.1 each: a tie-break, as the L2 traffic.
constexpr double kLatencySlackWeight = 0.1;
constexpr double kFlopsPerLoadWeight = 0.1;

class AnalyticModel : public LearnedModel {
 public:
  using LearnedModel::LearnedModel;
  std::string name() const override { return "analytic"; }
  bool uses_code_features() const override { return true; }

 protected:
  bool learns() const override { return false; }
  void fit(const std::vector<Sample>&, const std::vector<float>&, const std::vector<float>*) override {}
  std::vector<double> score(const std::vector<const ProgramFeatures*>& programs) override {
    std::vector<double> out;
    out.reserve(programs.size());
    // log2: a kernel twice as fast scores one more, the scale of a pairwise-ranking margin, so a model
    // that fits residuals on top of this one (set_base) starts from sensible odds.
    for (auto* p : programs)
      out.push_back(std::log2(hot_loop_flops_per_cycle(p->code) + 1.0 / 64) -
                    kL2TrafficWeight * cache_traffic_per_flop(p->rows, 1) +
                    kLatencySlackWeight * hot_loop_latency_slack(p->code) +
                    kFlopsPerLoadWeight * hot_loop_flops_per_load(p->code));
    return out;
  }
  std::string serialize() const override { return {}; }
  void deserialize(const std::string&) override {}
};
}  // namespace

std::unique_ptr<LearnedModel> make_analytic_model(const ModelParams& params) {
  return std::make_unique<AnalyticModel>(params);
}

}  // namespace tessel::costmodel
