// The row-block GPU schedule of softmax-like operators (ops::schedule_row_block_gpu, the gpu_row_block
// rule, default_gpu_schedule): which operators it applies to, every point of the rule's space builds,
// assembles and computes the right answer on the CPU, and the kernel's structure (rows over blocks,
// rfactor stages in shared memory over threads, barriers between their writes and reads, O(N/threads)
// work per thread instead of O(N) per element).
#include <cmath>
#include <map>

#include "gpu_test_util.h"
#include "tessel/ir/functor.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/ops/row_block_gpu.h"
#include "tessel/tuner/search_space.h"
#include "tessel/workload/workload.h"

using namespace tessel;
using runtime::NDArray;

namespace {

std::shared_ptr<const workload::Workload> spec(const char* s) {
  return std::make_shared<const workload::Workload>(workload::from_spec(s));
}

// What one thread of a kernel does: stores it executes (serial loops multiply, loops bound to blocks
// and threads do not), the extents of bound loops, shared and local allocations.
struct KernelShape : ir::IRVisitor {
  int64_t mult = 1, stores = 0;
  std::vector<std::pair<ir::ForKind, int64_t>> bound;
  std::map<std::string, std::pair<ir::MemScope, int64_t>> allocs;  // name -> scope, elements
  void visit_(const ir::For* op) override {
    int64_t e = *ir::as_const_int(op->extent);
    bool b = ir::is_gpu_bound(op->for_kind);
    if (b) bound.push_back({op->for_kind, e});
    mult *= b ? 1 : e;
    ir::IRVisitor::visit_(op);
    mult /= b ? 1 : e;
  }
  void visit_(const ir::Store* op) override {
    stores += mult;
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::BufferStore* op) override {
    stores += mult;
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::Allocate* op) override {
    int64_t n = 1;
    for (auto& e : op->buffer->shape) n *= *ir::as_const_int(e);
    allocs[op->buffer->name] = {op->buffer->scope, n};
    ir::IRVisitor::visit_(op);
  }
};

KernelShape shape_of(const ir::LoweredFunc& f) {
  KernelShape k;
  k.visit(f.body);
  return k;
}

// The schedule of a point of the space (REQUIREs that the rules accept it).
schedule::Schedule make(const tuner::SearchSpace& space, const tuner::KnobValues& k) {
  std::vector<schedule::Step> trace;
  Status made = space.make_trace(k, &trace);
  INFO(made.message());
  REQUIRE(made.is_ok());
  schedule::Schedule s(space.workload().outputs);
  REQUIRE(s.apply_all(trace).is_ok());
  return s;
}

// Index of the option `want` of knob `name` (REQUIREd to exist).
std::pair<int, int> option(const tuner::SearchSpace& space, const std::string& name, std::vector<int64_t> want) {
  for (size_t i = 0; i < space.knobs().size(); ++i)
    if (space.knobs()[i].name == name)
      for (size_t o = 0; o < space.knobs()[i].options.size(); ++o)
        if (space.knobs()[i].options[o] == want) return {int(i), int(o)};
  FAIL("no option of knob " << name);
  return {-1, -1};
}

}  // namespace

TEST_CASE("row-block: which operators read per-row reductions", "[gpu][rules][rowblock]") {
  auto rows = [](const char* s) {
    auto w = spec(s);
    schedule::Schedule sch(w->outputs);
    return ops::row_reductions(sch, w->outputs[0].name());
  };
  CHECK((rows("softmax:M=4,N=64") == std::vector<std::string>{"Max", "Sum"}));
  CHECK((rows("layer_norm:M=4,N=64") == std::vector<std::string>{"Sum", "VarSum"}));
  CHECK(rows("add:M=5,N=77").empty());                       // no reduction
  CHECK(rows("reduce:D0=3,D1=1000,op=sum,axes=1").empty());  // the reduction is the output
  CHECK(rows("dense:M=16,N=32,K=64,bias=1").empty());        // a full-shape producer (tiled epilogue)
  CHECK(rows("avg_pool:C=4,H=8,W=8").empty());
  // Out[i, j] = X[i, j] - Max[j]: the reduction is not indexed by the row.
  te::Tensor X = te::placeholder({8, 8}, ir::DataType::float32(), "X");
  auto k = te::reduce_axis(8, "k");
  te::Tensor mx = te::compute(
      {8}, [&](te::Var i) { return te::reduce_max(X(i, k->var), {k}); }, "Max");
  te::Tensor out = te::compute(
      {8, 8}, [&](te::Var i, te::Var j) { return X(i, j) - mx(j); }, "Out");
  schedule::Schedule t({out});
  CHECK(ops::row_reductions(t, "Out").empty());
  Status st = ops::schedule_row_block_gpu(t, "Out");
  CHECK_FALSE(st.is_ok());
  CHECK(st.message().find("Out") != std::string::npos);
  // Spaces without per-row reductions have no row_block knob.
  for (const char* s : {"add:M=5,N=77", "reduce:D0=3,D1=1000,op=sum,axes=1", "matmul:M=64,N=64,K=32"}) {
    auto space = tuner::make_gpu_rule_space(spec(s));
    for (auto& kn : space->knobs()) CHECK(kn.name.find("row_block") == std::string::npos);
  }
}

TEST_CASE("row-block: every point of the softmax and layer_norm spaces builds and is right", "[gpu][rules][rowblock]") {
  for (const char* s : {"softmax:M=6,N=300", "layer_norm:M=5,N=96"}) {
    auto w = spec(s);
    auto space = tuner::make_gpu_rule_space(w);
    INFO(s);
    // The knobs: S.row_block (mode, threads), S.vector; the reductions have none of their own.
    REQUIRE(space->knobs().size() == 2);
    const auto& modes = space->knobs()[0];
    REQUIRE(modes.name == "Out.row_block");
    int row_options = 0;
    for (auto& o : modes.options) row_options += o[0] == 1;
    CHECK(modes.options[0][0] == 1);                     // the default is the row-block structure
    CHECK(row_options * 2 > int(modes.options.size()));  // and most of the space
    ops::OpTensors t{w->inputs, w->outputs};
    auto want = gputest::run_on_cpu(lower::lower(ops::default_schedule(t), w->args(), "ref"), w->inputs.size(), {}, 7);
    for (size_t m = 0; m < modes.options.size(); ++m)
      for (size_t v = 0; v < space->knobs()[1].options.size(); ++v) {
        schedule::Schedule sch = make(*space, {int(m), int(v)});
        INFO("schedule:\n" << sch.to_string());
        ir::LoweredFunc f = lower::lower(sch, w->args(), "cand");
        Status valid = codegen::validate_gpu_kernel(f);
        INFO(valid.message());
        REQUIRE(valid.is_ok());
        auto kernel = codegen::build_cuda(f);
        if (modes.options[m][0] == 1) {
          CHECK(kernel.launch.grid[0] == *ir::as_const_int(w->outputs[0].shape()[0]));
          // Out's vectorized row may use fewer threads than the reductions (guarded).
          CHECK(kernel.launch.block[0] ==
                std::min<int64_t>(modes.options[m][1], *ir::as_const_int(w->outputs[0].shape()[1])));
        }
        gputest::require_ptxas_accepts(kernel);
        auto got = gputest::run_on_cpu(f, w->inputs.size(), {}, 7);
        auto& g = got.back();
        for (int64_t e = 0; e < g.num_elements(); ++e) {
          double a = g.get(e), r = want.back().get(e);
          INFO("element " << e << ": " << a << " vs " << r);
          REQUIRE(std::fabs(a - r) <= 1e-4 * std::max(1.0, std::fabs(r)));
        }
      }
  }
}

TEST_CASE("row-block: softmax kernel structure, barriers and work per thread", "[gpu][rules][rowblock]") {
  const int64_t M = 4, N = 4096, T = 256;
  auto space = tuner::make_gpu_rule_space(spec("softmax:M=4,N=4096"));
  auto [mk, row] = option(*space, "Out.row_block", {1, T});
  auto [vk, vec] = option(*space, "Out.vector", {4});
  tuner::KnobValues k(space->knobs().size(), 0);
  k[mk] = row, k[vk] = vec;
  schedule::Schedule sch = make(*space, k);
  INFO(sch.to_string());
  CHECK(sch.stage("Max.rf").scope == ir::MemScope::kShared);
  CHECK(sch.stage("Sum.rf").scope == ir::MemScope::kShared);
  CHECK(sch.stage("Max.rf").attach_stage == "Out");
  CHECK(sch.stage("Sum").attach_stage == "Out");
  auto kernel = codegen::build_cuda(lower::lower(sch, space->workload().args(), "softmax"));
  CHECK((kernel.launch.grid == std::array<int64_t, 3>{M, 1, 1}));
  CHECK((kernel.launch.block == std::array<int64_t, 3>{T, 1, 1}));
  CHECK(kernel.launch.shared_bytes == 2 * T * 4);
  KernelShape shape = shape_of(kernel.device_func);
  // Rows over blocks; Max.rf, Sum.rf and Out's row over the same T threads.
  REQUIRE(shape.bound.size() == 4);
  CHECK(shape.bound[0] == std::pair{ir::ForKind::kBlockIdxX, M});
  for (size_t i = 1; i < 4; ++i) CHECK(shape.bound[i] == std::pair{ir::ForKind::kThreadIdxX, T});
  CHECK(shape.allocs["Max.rf"] == std::pair{ir::MemScope::kShared, T});
  CHECK(shape.allocs["Sum.rf"] == std::pair{ir::MemScope::kShared, T});
  CHECK(shape.allocs["Max"] == std::pair{ir::MemScope::kLocal, int64_t(1)});
  CHECK(shape.allocs["Sum"] == std::pair{ir::MemScope::kLocal, int64_t(1)});
  // Per thread: N/T elements of each row pass (Out as N/T/4 vector stores) plus the T partial results
  // of each reduction (and the initializations): O(N/T + T), not O(N) per output element.
  CHECK(shape.stores == 2 * (1 + N / T) + 2 * (1 + T) + N / T / 4);
  // Barriers: after each rfactor stage's writes, before the reduction over its partial results reads them.
  std::string text = ir::to_string(kernel.device_func);
  INFO(text);
  size_t max_rf = text.find("Max.rf[k.i] ="), sync1 = text.find("sync_threads()"),
         max_read = text.find("Max.rf[", text.find("Max[0] = -inf"));
  size_t sum_rf = text.find("Sum.rf[k.i] ="), sync2 = text.find("sync_threads()", sync1 + 1),
         sum_read = text.find("Sum.rf[", text.find("Sum[0] = 0"));
  CHECK(max_rf < sync1);
  CHECK(sync1 < max_read);
  CHECK(max_read < sum_rf);
  CHECK(sum_rf < sync2);
  CHECK(sync2 < sum_read);
  CHECK(text.find("sync_threads()", sync2 + 1) == std::string::npos);  // distinct buffers, one row: no WAR barrier
  gputest::require_ptxas_accepts(kernel);
  // The one-element-per-thread option (the old structure) recomputes both reductions in every thread.
  auto [mk0, old] = option(*space, "Out.row_block", {0, 256});
  k[mk0] = old;
  auto old_kernel = codegen::build_cuda(lower::lower(make(*space, k), space->workload().args(), "softmax_old"));
  CHECK(shape_of(old_kernel.device_func).stores >= 2 * N);
}

TEST_CASE("row-block: several row axes fused over blocks", "[gpu][rowblock]") {
  // Out[b, i, j] = X[b, i, j] - Max[b, i] over a 3 x 5 x 70 input: 15 blocks of 32 threads.
  te::Tensor X = te::placeholder({3, 5, 70}, ir::DataType::float32(), "X");
  auto k = te::reduce_axis(70, "k");
  te::Tensor mx = te::compute(
      {3, 5}, [&](te::Var b, te::Var i) { return te::reduce_max(X(b, i, k->var), {k}); }, "Max");
  te::Tensor out = te::compute(
      {3, 5, 70}, [&](te::Var b, te::Var i, te::Var j) { return X(b, i, j) - mx(b, i); }, "Out");
  testing::Workload w{"row_max", {X, out}, 1, nullptr, 1e-5};
  w.reference = [](std::vector<NDArray*>& t) {
    for (int r = 0; r < 15; ++r) {
      double m = -INFINITY;
      for (int j = 0; j < 70; ++j) m = std::max(m, t[0]->get(r * 70 + j));
      for (int j = 0; j < 70; ++j) t[1]->set(r * 70 + j, t[0]->get(r * 70 + j) - m);
    }
  };
  schedule::Schedule s({out});
  REQUIRE(ops::row_reductions(s, "Out") == std::vector<std::string>{"Max"});
  Status st = ops::schedule_row_block_gpu(s, "Out", {32, 2});
  INFO(st.message());
  REQUIRE(st.is_ok());
  auto kernel = gputest::build(w, s, "row_max");
  CHECK((kernel.launch.grid == std::array<int64_t, 3>{15, 1, 1}));
  CHECK((kernel.launch.block == std::array<int64_t, 3>{32, 1, 1}));
  gputest::require_ptxas_accepts(kernel);
  gputest::require_cpu_semantics(w, s);
  // A vector width that does not divide the row is refused with a reason.
  schedule::Schedule s4({out});
  Status bad = ops::schedule_row_block_gpu(s4, "Out", {32, 4});
  CHECK(bad.message().find("does not divide the row length 70") != std::string::npos);
}

TEST_CASE("row-block: default_gpu_schedule of softmax and layer_norm", "[gpu][ops][rowblock]") {
  for (const char* s : {"softmax:M=4,N=1000", "layer_norm:M=3,N=200"}) {
    INFO(s);
    auto w = spec(s);
    ops::OpTensors t{w->inputs, w->outputs};
    schedule::Schedule gs = ops::default_gpu_schedule(t);
    auto kernel = codegen::build_cuda(lower::lower(gs, w->args(), "k"));
    int64_t M = *ir::as_const_int(w->outputs[0].shape()[0]), N = *ir::as_const_int(w->outputs[0].shape()[1]);
    int64_t threads = 256;  // the fewest warps covering a row, at most 256
    CHECK((kernel.launch.grid == std::array<int64_t, 3>{M, 1, 1}));
    CHECK(kernel.launch.block[0] == std::min(threads, N));
    CHECK(kernel.launch.shared_bytes == 2 * std::min(threads, N) * 4);
    int64_t per_thread = (N + threads - 1) / threads;  // two reductions and Out over the row, two over partials
    CHECK(shape_of(kernel.device_func).stores == 3 * per_thread + 2 * (1 + std::min(threads, N)) + 2);
  }
}
