// Operator library: every registered operator has test specs, spec parsing errors list what is accepted,
// builders refuse impossible shapes with specific messages, and default_schedule's shape (inlined
// intermediates, parallel root stages). The example specs build, lower and compile.
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "oplib_harness.h"
#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/support/error.h"

using namespace tessel;
using Catch::Matchers::Contains;

namespace {
std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}
std::string spec_error(const std::string& spec) {
  return user_error([&] {
    auto [def, args] = ops::parse_op_spec(spec);
    def->build(args);
  });
}
}  // namespace

TEST_CASE("oplib: every registered operator has test specs and a reference", "[oplib][registry]") {
  std::set<std::string> covered, registered;
  for (auto& c : oplib::all_cases()) {
    INFO("case " << c.op);
    CHECK(c.ref);
    CHECK(!c.specs.empty());
    if (!c.specs.empty()) covered.insert(c.op);
    for (auto& spec : c.specs) {
      INFO("spec " << spec);
      auto [def, args] = ops::parse_op_spec(spec);
      CHECK(def->name == c.op);
      // The canonical form parses back to the same arguments.
      CHECK(ops::parse_op_spec(ops::format_op_spec(*def, args)).second.values() == args.values());
    }
  }
  for (auto* d : ops::all_ops()) {
    registered.insert(d->name);
    INFO("operator " << d->name << " is registered but no test in tests/ops/test_oplib_*.cpp covers it");
    CHECK(covered.count(d->name) == 1);
    CHECK(!d->summary.empty());
  }
  for (auto& c : covered) {
    INFO("test case for " << c << ", which is not a registered operator");
    CHECK(registered.count(c) == 1);
  }
  for (const char* name : {"matmul",
                           "batch_matmul",
                           "dense",
                           "conv2d_nchw",
                           "conv2d_nhwc",
                           "depthwise_conv2d",
                           "conv2d_transpose",
                           "max_pool",
                           "avg_pool",
                           "global_avg_pool",
                           "softmax",
                           "layer_norm",
                           "reduce",
                           "add",
                           "mul",
                           "relu",
                           "sigmoid",
                           "tanh",
                           "exp",
                           "elementwise_chain",
                           "transpose",
                           "pad"})
    CHECK(registered.count(name) == 1);
}

TEST_CASE("oplib: spec errors list what is accepted", "[oplib][registry][error]") {
  std::string e = spec_error("matmull:M=1,N=1,K=1");
  CHECK_THAT(e, Contains("unknown operator 'matmull'"));
  for (const char* name : {"conv2d_nhwc", "depthwise_conv2d", "layer_norm", "matmul", "softmax", "transpose"})
    CHECK_THAT(e, Contains(name));
  e = spec_error("conv2d_nhwc:H=8,W=8,CI=3,CO=4,Q=3");
  CHECK_THAT(e, Contains("operator conv2d_nhwc has no parameter 'Q'"));
  for (const char* p : {"stride", "pad", "dilation", "groups", "dtype=float32|int8"}) CHECK_THAT(e, Contains(p));
  CHECK_THAT(spec_error("matmul:M=4,N=4"), Contains("parameter K is required"));
  CHECK_THAT(spec_error("dense:M=1,N=1,K=1,activation=swish"),
             Contains("activation=swish is not one of none|relu|gelu"));
  CHECK_THAT(spec_error("reduce:D0=3,op=avg"), Contains("op=avg is not one of sum|max|min|mean"));
  CHECK_THAT(spec_error("conv2d_nchw:H=8,W=8,CI=3,CO=4,stride=0"), Contains("stride=0 is out of range [1, 64]"));
  CHECK_THAT(spec_error("matmul:M=4,N=4,K=x"), Contains("K=x is not an integer"));
  CHECK_THAT(spec_error("depthwise_conv2d:H=8,W=8,C=3,layout=NCWH"), Contains("is not one of NCHW|NHWC"));
}

TEST_CASE("oplib: builders refuse impossible shapes naming the operator", "[oplib][error]") {
  CHECK_THAT(spec_error("conv2d_nhwc:H=8,W=8,CI=3,CO=4,groups=2"), Contains("groups=2 must divide CI=3"));
  CHECK_THAT(spec_error("conv2d_nchw:H=2,W=2,CI=1,CO=1,KH=5,KW=5"), Contains("larger than the padded input"));
  CHECK_THAT(spec_error("conv2d_nchw:H=5,W=5,CI=2,CO=2,KH=3,KW=3,dilation=3"),
             Contains("larger than the padded input"));
  CHECK_THAT(spec_error("max_pool:C=1,H=4,W=4,KH=2,KW=2,pad=2"), Contains("must be smaller than the kernel"));
  CHECK_THAT(spec_error("pad:H=2,W=2,top=2,mode=reflect"), Contains("must be smaller than its extent"));
  CHECK_THAT(spec_error("conv2d_transpose:H=4,W=4,CI=1,CO=1,stride=2,output_padding=2"),
             Contains("output_padding=2 must be smaller than stride or dilation"));
  CHECK_THAT(spec_error("conv2d_transpose:H=1,W=1,CI=1,CO=1,KH=1,KW=1,pad=1"), Contains("empty output"));
  CHECK_THAT(spec_error("conv2d_nchw:H=4,W=4,CI=1,CO=1,dtype=int8,activation=gelu"),
             Contains("activation gelu needs float32"));
}

TEST_CASE("oplib: default_schedule inlines elementwise intermediates and parallelizes root stages", "[oplib]") {
  auto sched = [](const std::string& spec, ops::DefaultScheduleParams p = {}) {
    auto [def, args] = ops::parse_op_spec(spec);
    return ops::default_schedule(def->build(args), p);
  };
  auto conv = sched("conv2d_nhwc:N=1,H=9,W=9,CI=3,CO=4,KH=3,KW=3,pad=1");
  CHECK(conv.stage("Ipad").attach == schedule::AttachKind::kInline);
  CHECK(conv.stage("Out").attach == schedule::AttachKind::kRoot);
  CHECK(conv.stage("Out").annotations.size() == 1);
  CHECK(conv.stage("Out").annotations.begin()->second == "parallel");
  auto fused = sched("conv2d_nchw:H=9,W=9,CI=3,CO=4,KH=3,KW=3,pad=1,bias=1,activation=relu");
  CHECK(fused.stage("Conv").attach == schedule::AttachKind::kRoot);
  CHECK(fused.stage("Out").attach == schedule::AttachKind::kRoot);
  auto sm = sched("softmax:M=7,N=13");
  CHECK(sm.stage("E").attach == schedule::AttachKind::kInline);
  for (const char* s : {"Max", "Sum", "Out"}) CHECK(sm.stage(s).attach == schedule::AttachKind::kRoot);
  auto ln = sched("layer_norm:M=4,N=8", {false, 16});
  CHECK(ln.stage("Mean").attach == schedule::AttachKind::kInline);
  for (const char* s : {"Sum", "VarSum", "Out"}) CHECK(ln.stage(s).annotations.empty());
  // Extent-1 outer loops are fused with the next ones until there is work to share.
  auto gap = sched("global_avg_pool:N=1,C=64,H=7,W=7");
  CHECK(gap.stage("S").annotations.begin()->first == "i.j.f");
  auto one = sched("reduce:D0=5,D1=3,D2=17,axes=012");
  CHECK(one.stage("Out").annotations.empty());  // one output element: nothing to parallelize
}

TEST_CASE("oplib: the issue's example specs build, lower and compile, the conv runs correctly", "[oplib]") {
  auto [mdef, margs] = ops::parse_op_spec("matmul:M=1024,N=1024,K=1024");
  auto mt = mdef->build(margs);
  REQUIRE(codegen::JitModule::compile(lower::lower(ops::default_schedule(mt), mt.args(), "mm")));

  auto [def, args] = ops::parse_op_spec("conv2d_nhwc:N=1,H=56,W=56,CI=64,CO=64,KH=3,KW=3,stride=1,pad=1");
  auto t = def->build(args);
  auto jit = codegen::JitModule::compile(lower::lower(ops::default_schedule(t), t.args(), "conv"));
  runtime::NDArray in({1, 56, 56, 64}, "float32"), w({3, 3, 64, 64}, "float32"), out({1, 56, 56, 64}, "float32");
  in.fill_random(11);
  w.fill_random(12);
  out.fill_bytes(0xFF);
  void* a[] = {in.data(), w.data(), out.data()};
  jit->call_packed(a);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    int y = int(rng() % 56), x = int(rng() % 56), co = int(rng() % 64);
    double acc = 0;
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) {
        int iy = y + kh - 1, ix = x + kw - 1;
        if (iy < 0 || iy >= 56 || ix < 0 || ix >= 56) continue;
        for (int ci = 0; ci < 64; ++ci)
          acc += double(in.data_as<float>()[(iy * 56 + ix) * 64 + ci]) *
                 w.data_as<float>()[((kh * 3 + kw) * 64 + ci) * 64 + co];
      }
    INFO("y=" << y << " x=" << x << " co=" << co);
    REQUIRE(std::fabs(out.data_as<float>()[(y * 56 + x) * 64 + co] - acc) <= 1e-4 * (1 + std::fabs(acc)));
  }
}
