// Code features: the assembly reader on hand-written x86-64 text (hot-loop choice, counts by kind), and on
// real compiles of a naive and a register-tiled, vectorized matmul; the xgb-rank model that reads them
// (fit, file header, refusal of a file read without them).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "candidates.h"
#include "tessel/costmodel/code_features.h"
#include "tessel/costmodel/features.h"
#include "tessel/costmodel/learned_model.h"
#include "tessel/schedule/schedule.h"
#include "tessel/support/error.h"

using namespace tessel;
using namespace tessel::costmodel;

namespace {

float lg(double x) { return float(std::log2(1 + x)); }
size_t at(const char* name) {
  const auto& n = code_feature_names();
  size_t i = size_t(std::find(n.begin(), n.end(), name) - n.begin());
  REQUIRE(i < n.size());
  return i;
}

// An outer loop (.LBB0_1) around two innermost loops: a scalar one (.LBB0_2: one vaddss) and the hot one
// (.LBB0_3: three zmm FMAs, a broadcast from memory, a vector load, a spill reload and a store).
const char* kAsm = R"(	.text
	.globl	k
k:
	xorl	%eax, %eax
.LBB0_1:
	movq	%rax, %rcx
.LBB0_2:
	vaddss	(%rdi,%rcx,4), %xmm0, %xmm0
	incq	%rcx
	cmpq	$64, %rcx
	jne	.LBB0_2
	leaq	(%rsi,%rax), %rdx
.LBB0_3:
	vbroadcastss	(%rdx), %zmm1
	vmovups	64(%rsi,%rcx), %zmm2
	vfmadd231ps	%zmm1, %zmm2, %zmm3
	vfmadd231ps	%zmm1, %zmm2, %zmm4    # a comment (%rsp)
	vmovups	-48(%rsp), %zmm5
	vfmadd231ps	%zmm5, %zmm2, %zmm5
	vmovups	%zmm3, (%r8)
	addq	$4, %rdx
	cmpq	%r9, %rdx
	jb	.LBB0_3
	incq	%rax
	cmpq	$8, %rax
	jne	.LBB0_1
	retq
)";

const workload::Workload& mm64() {
  static workload::Workload w = workload::from_spec("matmul:M=64,N=64,K=64");
  return w;
}

// i.o, j.o, k, i.i (4, unrolled), j.i (16, vectorized): a 4 x 16 accumulator tile across k.
std::vector<schedule::Step> register_tiled() {
  schedule::Schedule s(mm64().outputs);
  auto n = s.leaf_names("C");
  auto t = s.tile("C", n[0], n[1], 4, 16);
  s.reorder("C", {t[0], t[1], n[2], t[2], t[3]});
  s.vectorize("C", t[3]);
  s.unroll("C", t[2]);
  return s.trace();
}

}  // namespace

TEST_CASE("code features: layout named and versioned", "[costmodel][code]") {
  CHECK(kCodeFeatureVersion == 3);
  CHECK(code_feature_length_of(3) == code_feature_length_of(2));  // 3 changed how, not what
  const auto& n = code_feature_names();
  REQUIRE(int(n.size()) == kCodeFeatureLength);
  CHECK(std::set<std::string>(n.begin(), n.end()).size() == n.size());
  CHECK(n[0] == "instructions");
  CHECK(n[4] == "hot_fma");
}

TEST_CASE("code features: the hot loop of hand-written assembly", "[costmodel][code]") {
  auto f = code_features_from_assembly(kAsm);
  REQUIRE(int(f.size()) == kCodeFeatureLength);
  CHECK(f[at("instructions")] == Approx(lg(21)));
  CHECK(f[at("loops")] == Approx(lg(3)));
  // The hot loop is .LBB0_3 (96 FLOPs), not the scalar .LBB0_2 (1 FLOP) nor the outer .LBB0_1.
  CHECK(f[at("hot_instructions")] == Approx(lg(10)));
  CHECK(f[at("hot_fma")] == Approx(lg(3)));
  CHECK(f[at("hot_flops")] == Approx(lg(3 * 2 * 16)));
  CHECK(f[at("hot_fma_lanes")] == Approx(lg(16)));
  CHECK(f[at("hot_loads")] == Approx(lg(3)));   // broadcast, vector load, reload (cmpq reads no memory here)
  CHECK(f[at("hot_stores")] == Approx(lg(1)));
  CHECK(f[at("hot_stack")] == Approx(lg(1)));   // the reload; the (%rsp) in the comment does not count
  CHECK(f[at("hot_broadcasts")] == Approx(lg(1)));
  CHECK(f[at("hot_scalar_float")] == Approx(lg(0)));
  CHECK(f[at("hot_gathers")] == Approx(lg(0)));
  CHECK(f[at("flops_per_instruction")] == Approx(lg(96.0 / 10)));
  CHECK(f[at("flops_per_load")] == Approx(lg(96.0 / 3)));
  CHECK(f[at("flops_per_store")] == Approx(lg(96.0)));
  CHECK(f[at("hot_vector_arith")] == Approx(lg(0)));
  CHECK(f[at("hot_chain")] == Approx(lg(1)));  // zmm3 and zmm4 once each; zmm5 is reloaded first

  // Without the hot loop, the scalar loop is the hot one.
  std::string scalar = kAsm;
  scalar.erase(scalar.find(".LBB0_3:"), scalar.find("\tincq\t%rax") - scalar.find(".LBB0_3:"));
  auto g = code_features_from_assembly(scalar);
  CHECK(g[at("hot_flops")] == Approx(lg(1)));
  CHECK(g[at("hot_scalar_float")] == Approx(lg(1)));
  CHECK(g[at("hot_loads")] == Approx(lg(1)));
  CHECK(g[at("hot_fma_lanes")] == Approx(lg(0)));

  // No instructions (or no text): zeros.
  for (const char* text : {"", "\t.text\n\t.globl k\n"}) {
    auto z = code_features_from_assembly(text);
    REQUIRE(int(z.size()) == kCodeFeatureLength);
    for (float x : z) CHECK(x == 0.0f);
  }
}

// LLVM lays loops out of address order: here the outer loop's epilogue (eight zmm adds and maxes, 128
// FLOPs) and its backward branch come before the inner loop, which is rotated (entered at its condition)
// and jumps back to the epilogue. Between the outer header and its branch back lies no other loop, so as an
// address interval the outer loop looked innermost and, with the most FLOPs, hot (what LLVM made of
// padded NHWC convolutions: a third of their schedules had no FMA in the "hot loop"). As natural loops the
// inner one (2 FMAs, 64 FLOPs) is the only innermost loop.
// A bias-and-relu epilogue over four zmm accumulators: 8 vector adds and maxes, 128 FLOPs.
const std::string kEpilogue = R"(	vaddps	%zmm3, %zmm5, %zmm5
	vaddps	%zmm4, %zmm6, %zmm6
	vaddps	%zmm3, %zmm7, %zmm7
	vaddps	%zmm4, %zmm8, %zmm8
	vmaxps	%zmm0, %zmm5, %zmm5
	vmaxps	%zmm0, %zmm6, %zmm6
	vmaxps	%zmm0, %zmm7, %zmm7
	vmaxps	%zmm0, %zmm8, %zmm8
)";

const std::string kOutOfOrder = R"(	.text
	.globl	k
k:
	xorl	%eax, %eax
.LBB0_1:
	xorl	%edx, %edx
	jmp	.LBB0_3
.LBB0_2:
)" + kEpilogue + R"(	incq	%rax
	cmpq	$8, %rax
	jne	.LBB0_1
	retq
.LBB0_3:
	jmp	.LBB0_5
.LBB0_4:
	vfmadd231ps	%zmm1, %zmm2, %zmm3
	vfmadd231ps	%zmm1, %zmm2, %zmm4
	addq	$4, %rdx
.LBB0_5:
	cmpq	%r9, %rdx
	jb	.LBB0_4
	jmp	.LBB0_2
)";

TEST_CASE("code features: the hot loop is a natural loop, not an address interval", "[costmodel][code]") {
  auto f = code_features_from_assembly(kOutOfOrder);
  CHECK(f[at("hot_fma")] == Approx(lg(2)));
  CHECK(f[at("hot_flops")] == Approx(lg(2 * 2 * 16)));
  CHECK(f[at("hot_vector_arith")] == Approx(lg(0)));
  CHECK(f[at("hot_instructions")] == Approx(lg(5)));  // the body and the condition block
  CHECK(f[at("hot_chain")] == Approx(lg(1)));
  CHECK(f[at("loops")] == Approx(lg(3)));  // backward branches (jne, jb, jmp .LBB0_2), as before
  CHECK(hot_loop_flops_per_cycle(f) == Approx(64.0 / 4).epsilon(1e-4));  // the chain: 4 cycles an update

  // Every function symbol is an entry: the second function's loop (two FMAs, 64 FLOPs) is reached from its
  // own symbol, not from the first function (which returns), and is the hot one.
  const char* two = R"(	.text
f:
	xorl	%eax, %eax
.LBB0_1:
	vaddps	%zmm1, %zmm2, %zmm2
	vaddps	%zmm1, %zmm3, %zmm3
	incq	%rax
	cmpq	$8, %rax
	jne	.LBB0_1
	retq
g:
	xorl	%eax, %eax
.LBB1_1:
	vfmadd231ps	%zmm1, %zmm2, %zmm3
	vfmadd231ps	%zmm1, %zmm2, %zmm4
	incq	%rax
	cmpq	$8, %rax
	jne	.LBB1_1
	retq
)";
  auto g = code_features_from_assembly(two);
  CHECK(g[at("hot_flops")] == Approx(lg(64)));
  CHECK(g[at("hot_instructions")] == Approx(lg(5)));
  CHECK(g[at("hot_vector_arith")] == Approx(lg(0)));
  CHECK(g[at("hot_fma")] == Approx(lg(2)));

  // Depth: an epilogue loop (8 vector adds and maxes, 128 FLOPs) one loop deep against an FMA loop (64
  // FLOPs) two deep, which runs 4x as often by the depth weight (64 x 16 > 128 x 4): the FMA loop is hot.
  const std::string nest = R"(	.text
k:
	xorl	%eax, %eax
.LBB0_1:
	xorl	%ecx, %ecx
.LBB0_2:
	xorl	%edx, %edx
.LBB0_3:
	vfmadd231ps	%zmm1, %zmm2, %zmm3
	vfmadd231ps	%zmm1, %zmm2, %zmm4
	incq	%rdx
	cmpq	$16, %rdx
	jne	.LBB0_3
	incq	%rcx
	cmpq	$3, %rcx
	jne	.LBB0_2
	xorl	%edx, %edx
.LBB0_4:
)" + kEpilogue + R"(	incq	%rdx
	cmpq	$2, %rdx
	jne	.LBB0_4
	incq	%rax
	cmpq	$8, %rax
	jne	.LBB0_1
	retq
)";
  auto d = code_features_from_assembly(nest);
  CHECK(d[at("hot_fma")] == Approx(lg(2)));
  CHECK(d[at("hot_flops")] == Approx(lg(64)));
  CHECK(d[at("hot_vector_arith")] == Approx(lg(0)));
  // The same epilogue with 24 adds and maxes (384 FLOPs, 384 x 4 > 64 x 16) is the hot loop.
  std::string heavy = nest;
  heavy.insert(heavy.find("\tincq\t%rdx\n\tcmpq\t$2"), kEpilogue + kEpilogue);
  auto e = code_features_from_assembly(heavy);
  CHECK(e[at("hot_fma")] == Approx(lg(0)));
  CHECK(e[at("hot_vector_arith")] == Approx(lg(24)));

  // Code unreachable from any entry is no loop (the unreachable one, 4 adds and 64 FLOPs, would be the
  // hot one); a loop without a function symbol (text that starts with instructions) is entered at the
  // first instruction.
  const char* bare = "\txorl\t%eax, %eax\n.LBB0_1:\n\tvfmadd231ps\t%zmm1, %zmm2, %zmm3\n\tincq\t%rax\n\tjne\t.LBB0_1\n\tretq\n"
                     ".LBB0_9:\n\tvaddps\t%zmm1, %zmm2, %zmm2\n\tvaddps\t%zmm1, %zmm2, %zmm2\n"
                     "\tvaddps\t%zmm1, %zmm2, %zmm2\n\tvaddps\t%zmm1, %zmm2, %zmm2\n\tjmp\t.LBB0_9\n";
  auto b = code_features_from_assembly(bare);
  CHECK(b[at("hot_fma")] == Approx(lg(1)));
  CHECK(b[at("hot_flops")] == Approx(lg(32)));
}

TEST_CASE("code features: the longest accumulator chain bounds the roofline", "[costmodel][code]") {
  // Two accumulators, zmm0 updated three times an iteration (once through its xmm name's register
  // number), zmm1 once; zmm2 is zeroed first and zmm3 loaded first: they carry nothing.
  const char* chained = R"(
.LBB1_1:
	vbroadcastss	(%rdi,%rax,4), %zmm8
	vfmadd231ps	(%rsi), %zmm8, %zmm0
	vfmadd231ps	64(%rsi), %zmm8, %zmm0
	vaddps	%zmm8, %zmm0, %zmm0
	vfmadd231ps	128(%rsi), %zmm8, %zmm1
	vxorps	%xmm2, %xmm2, %xmm2
	vfmadd231ps	%zmm8, %zmm8, %zmm2
	vmovups	(%rdx), %zmm3
	vfmadd231ps	%zmm8, %zmm8, %zmm3
	vfmadd231ps	%zmm8, %zmm8, %zmm10
	incq	%rax
	cmpq	%rcx, %rax
	jne	.LBB1_1
)";
  auto f = code_features_from_assembly(chained);
  CHECK(f[at("hot_chain")] == Approx(lg(3)));
  // 6 FMAs + 1 add (3.5 cycles on 2 pipes), 13 instructions (3.25 cycles), 5 loads (2.5 cycles): the 3
  // updates of zmm0 (12 cycles of latency) decide.
  double flops = 6 * 32 + 16;
  CHECK(hot_loop_flops_per_cycle(f) == Approx(flops / 12));
  // Give every update its own register: one FMA's latency (4 cycles) is all that is left of the chain.
  std::string spread = chained;
  spread.replace(spread.find("%zmm0\n"), 6, "%zmm4\n");
  spread.replace(spread.find("%zmm0, %zmm0"), 12, "%zmm0, %zmm5");
  auto g = code_features_from_assembly(spread);
  CHECK(g[at("hot_chain")] == Approx(lg(1)));
  CHECK(hot_loop_flops_per_cycle(g) == Approx(flops / 4));
}

TEST_CASE("code features: compiled matmuls, naive against register-tiled", "[costmodel][code]") {
  auto host = codegen::Target::host();
  if (!code_features_supported(host)) {
    WARN("skipped: code features read x86-64 assembly; this host is " << host.triple);
    return;
  }
  auto naive = code_features(mm64(), {}, host);
  auto tiled = code_features(mm64(), register_tiled(), host);
  REQUIRE(int(naive.size()) == kCodeFeatureLength);
  REQUIRE(int(tiled.size()) == kCodeFeatureLength);
  // The tiled kernel's hot loop runs vector FMAs on a register tile: more FLOPs per load and per
  // instruction than the naive loop (one multiply-add per loaded pair; LLVM may vectorize it over k, but
  // then it reads B with a stride).
  CHECK(tiled[at("hot_fma_lanes")] >= lg(8));
  CHECK(tiled[at("hot_fma")] >= lg(4));
  CHECK(tiled[at("flops_per_load")] > naive[at("flops_per_load")]);
  CHECK(tiled[at("hot_flops")] > naive[at("hot_flops")]);
  for (float x : naive) CHECK(std::isfinite(x));
  // Deterministic.
  CHECK(code_features(mm64(), register_tiled(), host) == tiled);
  // An invalid trace or an unsupported target: no features.
  CHECK(code_features(mm64(), {schedule::SplitStep{"C", "no_such_axis", 4}}, host).empty());
  CHECK(code_features(mm64(), {}, codegen::Target::cuda()).empty());
}

TEST_CASE("xgb-rank with code features: learns, saves, and is refused where it does not fit", "[costmodel][code]") {
  auto host = codegen::Target::host();
  if (!code_features_supported(host)) {
    WARN("skipped: code features read x86-64 assembly; this host is " << host.triple);
    return;
  }
  auto w = std::make_shared<workload::Workload>(mm64());
  auto cands = testing::random_candidates(w, 48, 777);
  REQUIRE(cands.size() >= 40);
  auto m = make_learned_model("xgb-rank", {{"code_features", true}, {"min_samples", 8}, {"num_rounds", 30}, {"nthread", 1}});
  REQUIRE(m->uses_code_features());
  std::vector<Candidate> cs;
  for (auto& c : cands) cs.push_back({w.get(), &c.trace});
  auto fs = m->features_of(cs);
  // Every valid candidate compiles; a throughput that only the code features explain (FLOPs per load of
  // the hot loop) is learned.
  std::vector<double> truth;
  for (auto& f : fs) {
    REQUIRE(!f->rows.empty());
    REQUIRE(int(f->code.size()) == kCodeFeatureLength);
    truth.push_back(1e9 * (1 + f->code[at("flops_per_load")]));
  }
  std::vector<Candidate> train(cs.begin(), cs.begin() + 32), test(cs.begin() + 32, cs.end());
  m->update(train, std::vector<double>(truth.begin(), truth.begin() + 32));
  REQUIRE(m->trained());
  CHECK(testing::pairwise_accuracy(m->predict(test), std::vector<double>(truth.begin() + 32, truth.end()), 0.05) > 0.75);
  // The scores come from the code features, not only the loop-nest rows: the same rows with the code of
  // another candidate score differently.
  size_t moved = 0;
  for (size_t i = 32; i < fs.size(); ++i) {
    ProgramFeatures swapped{fs[i]->rows, fs[i == 32 ? fs.size() - 1 : i - 1]->code};
    moved += m->predict_features({&swapped})[0] != m->predict_features({fs[i].get()})[0];
  }
  CHECK(moved > 0);

  // The file says it reads code features; load_cost_model restores that, a model without them refuses it.
  auto path = (std::filesystem::temp_directory_path() / "tessel_test_code.model").string();
  m->save(path);
  {
    std::ifstream in(path);
    std::string sig, header;
    std::getline(in, sig);
    std::getline(in, header);
    auto h = nlohmann::json::parse(header);
    CHECK(h["code_feature_version"] == kCodeFeatureVersion);
    CHECK(h["code_feature_length"] == kCodeFeatureLength);
  }
  auto loaded = load_cost_model(path, {{"nthread", 1}});
  CHECK(loaded->uses_code_features());
  CHECK(loaded->predict(test) == m->predict(test));
  auto plain = make_learned_model("xgb-rank", {{"nthread", 1}});
  CHECK_THROWS_WITH(plain->load(path), Catch::Contains("trained with code features"));
  // A header that names a code feature version this tessel does not know, or a length that is not the
  // version's, is refused.
  auto with_header = [&](int version, int length) {
    std::ifstream in(path, std::ios::binary);
    std::string sig, header, rest((std::istreambuf_iterator<char>(in)), {});
    std::istringstream is(rest);
    std::getline(is, sig);
    std::getline(is, header);
    auto h = nlohmann::json::parse(header);
    h["code_feature_version"] = version, h["code_feature_length"] = length;
    std::string other = path + ".v";
    std::ofstream(other, std::ios::binary) << sig << '\n' << h.dump() << '\n' << rest.substr(size_t(is.tellg()));
    return other;
  };
  CHECK_THROWS_WITH(load_cost_model(with_header(kCodeFeatureVersion + 1, kCodeFeatureLength)),
                    Catch::Contains("reads versions 1 to"));
  CHECK_THROWS_WITH(load_cost_model(with_header(1, kCodeFeatureLength)), Catch::Contains("code feature version 1 (length"));
  CHECK(load_cost_model(with_header(kCodeFeatureVersion, kCodeFeatureLength))->predict(test) == m->predict(test));
  std::filesystem::remove(path + ".v");
  // A base must read what the model reads.
  CHECK_THROWS_WITH(plain->set_base(load_cost_model(path)), Catch::Contains("code features"));
  // Other kinds do not take the parameter.
  CHECK_THROWS_WITH(make_learned_model("xgb", {{"code_features", true}}), Catch::Contains("unknown parameter 'code_features'"));
  std::filesystem::remove(path);
}

TEST_CASE("a model of an earlier code feature version reads the first features of this one", "[costmodel][code]") {
  auto host = codegen::Target::host();
  if (!code_features_supported(host)) {
    WARN("skipped: code features read x86-64 assembly; this host is " << host.triple);
    return;
  }
  // A version-1 model (16 features; the code model shipped until 2026-12-01, kept as a test file); version 2
  // appends hot_chain.
  REQUIRE(code_feature_length_of(1) == 16);
  REQUIRE(code_feature_length_of(kCodeFeatureVersion) == kCodeFeatureLength);
  REQUIRE(kCodeFeatureVersion > 1);
  std::ifstream in(TESSEL_CODE_V1_MODEL);
  std::string sig, header;
  std::getline(in, sig);
  std::getline(in, header);
  int version = nlohmann::json::parse(header)["code_feature_version"].get<int>();
  REQUIRE(version == 1);
  auto m = load_cost_model(TESSEL_CODE_V1_MODEL, {{"nthread", 1}});
  auto w = std::make_shared<workload::Workload>(mm64());
  auto tiled_trace = register_tiled();
  std::vector<schedule::Step> naive_trace;
  auto s = m->predict(std::vector<Candidate>{{w.get(), &naive_trace}, {w.get(), &tiled_trace}});
  REQUIRE(s.size() == 2);
  CHECK(std::isfinite(s[0]));
  CHECK(s[1] > s[0]);  // the register-tiled kernel ranks above the naive one
  // Saved again, it keeps the version and length it was trained on, and reads back the same.
  auto path = (std::filesystem::temp_directory_path() / "tessel_test_code_resaved.model").string();
  m->save(path);
  std::ifstream again(path);
  std::getline(again, sig);
  std::getline(again, header);
  auto h = nlohmann::json::parse(header);
  CHECK(h["code_feature_version"] == version);
  CHECK(h["code_feature_length"] == code_feature_length_of(version));
  CHECK(load_cost_model(path, {{"nthread", 1}})->predict(std::vector<Candidate>{{w.get(), &naive_trace}, {w.get(), &tiled_trace}}) == s);
  std::filesystem::remove(path);
}

TEST_CASE("the hot loop's roofline (hot_loop_flops_per_cycle) on hand-written assembly", "[costmodel][code]") {
  // .LBB0_3: 96 FLOPs in 10 instructions (2.5 cycles at 4 a cycle), 3 FMAs (1.5 cycles on 2 pipes), 3 loads
  // (1.5 cycles on 2 ports), 1 store (1 cycle); but zmm3 and zmm4 each wait for last iteration's FMA (4
  // cycles of latency): latency bound, 96 / 4 FLOPs per cycle.
  CHECK(hot_loop_flops_per_cycle(code_features_from_assembly(kAsm)) == Approx(96.0 / 4).epsilon(1e-4));
  // Without the carried accumulators (zmm3, zmm4 loaded each iteration): issue bound, 96 / 2.5 (12
  // instructions: 3 cycles).
  std::string fresh = kAsm;
  fresh.insert(fresh.find("\tvfmadd231ps\t%zmm1, %zmm2, %zmm3"), "\tvmovups\t(%rdi), %zmm3\n\tvmovups\t(%rdi), %zmm4\n");
  CHECK(hot_loop_flops_per_cycle(code_features_from_assembly(fresh)) == Approx(96.0 / 3).epsilon(1e-4));
  // The scalar loop alone: 1 FLOP in 4 instructions, but xmm0 carries the sum: 4 cycles.
  std::string scalar = kAsm;
  scalar.erase(scalar.find(".LBB0_3:"), scalar.find("\tincq\t%rax") - scalar.find(".LBB0_3:"));
  CHECK(hot_loop_flops_per_cycle(code_features_from_assembly(scalar)) == Approx(1.0 / 4).epsilon(1e-4));
  // A gather costs ~4 cycles more: the same loop with one is slower.
  std::string gather = kAsm;
  gather.insert(gather.find("\tvmovups\t%zmm3"), "\tvgatherdps\t(%rdi,%zmm6,4), %zmm7 {%k1}\n");
  CHECK(hot_loop_flops_per_cycle(code_features_from_assembly(gather)) == Approx(96.0 / (4 + 4)).epsilon(1e-4));
  // No floating-point loop, or not a feature vector: 0.
  CHECK(hot_loop_flops_per_cycle(code_features_from_assembly("")) == 0);
  CHECK(hot_loop_flops_per_cycle({1.0f, 2.0f}) == 0);
}

// A register-tile loop: `accumulators` zmm registers, each updated by `updates` FMAs an iteration, fed by
// a broadcast of A and a load of B (folded into the FMA) for each FMA.
namespace {
std::string tile_loop(int accumulators, int updates) {
  std::string body;
  for (int u = 0; u < updates; ++u)
    for (int a = 0; a < accumulators; ++a)
      body += "\tvbroadcastss\t" + std::to_string(4 * a) + "(%rdi), %zmm30\n\tvfmadd231ps\t(%rsi), %zmm30, %zmm" +
              std::to_string(a) + "\n";
  return "\t.text\n\t.globl\tk\nk:\n.LBB0_1:\n" + body + "\taddq\t$64, %rsi\n\tcmpq\t%rdx, %rsi\n\tjb\t.LBB0_1\n\tretq\n";
}
}  // namespace

TEST_CASE("the hot loop's latency slack and FLOPs per load on hand-written assembly", "[costmodel][code]") {
  // 8 single-update accumulators on 2 FMA pipes: 4 cycles of FMAs, one chain of 4 cycles: no slack.
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(8, 1))) == Approx(0).margin(1e-4));
  // 16: twice what hides the latency; 4: half (the roofline already counts the latency bound).
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(16, 1))) == Approx(1).epsilon(1e-4));
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(4, 1))) == Approx(-1).epsilon(1e-4));
  // The same 16 FMAs on 8 registers updated twice each: a chain of 8 cycles, no slack.
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(8, 2))) == Approx(0).margin(1e-4));
  // Clamped to [-2, 2]: 28 accumulators (log2 3.5) is inside, 1 accumulator (log2 1/8) is not.
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(28, 1))) == Approx(std::log2(3.5)).epsilon(1e-4));
  CHECK(hot_loop_latency_slack(code_features_from_assembly(tile_loop(1, 1))) == Approx(-2).epsilon(1e-4));
  // kAsm's hot loop: 3 FMAs, zmm3 and zmm4 carried once (log2 of 1.5 cycles over 4); no loop: 0.
  CHECK(hot_loop_latency_slack(code_features_from_assembly(kAsm)) == Approx(std::log2(1.5 / 4)).epsilon(1e-4));
  CHECK(hot_loop_latency_slack(code_features_from_assembly("")) == 0);
  CHECK(hot_loop_latency_slack({1.0f, 2.0f}) == 0);
  // FLOPs per load: each FMA (32 FLOPs) comes with a broadcast and a folded load, 16 per load; kAsm: 96 / 3.
  CHECK(hot_loop_flops_per_load(code_features_from_assembly(tile_loop(8, 1))) == Approx(std::log2(1 + 16.0)).epsilon(1e-4));
  CHECK(hot_loop_flops_per_load(code_features_from_assembly(kAsm)) == Approx(std::log2(1 + 32.0)).epsilon(1e-4));
  CHECK(hot_loop_flops_per_load({1.0f, 2.0f}) == 0);
}

TEST_CASE("the analytic model: scores compiled code with no data, learns nothing, is a cold model's prior",
          "[costmodel][code]") {
  auto host = codegen::Target::host();
  if (!code_features_supported(host)) {
    WARN("skipped: the analytic model reads x86-64 assembly; this host is " << host.triple);
    return;
  }
  auto w = std::make_shared<workload::Workload>(mm64());
  auto m = make_learned_model("analytic", {{"nthread", 1}});
  CHECK(m->uses_code_features());
  CHECK(m->trained());  // from the start
  auto tiled_trace = register_tiled();
  std::vector<schedule::Step> naive_trace;
  std::vector<Candidate> pair = {{w.get(), &naive_trace}, {w.get(), &tiled_trace}};
  auto s = m->predict(pair);
  CHECK(s[1] > s[0]);  // the register tile's FMAs per cycle
  // Its score is the log2 of the roofline estimate, less 0.1 x the bytes per FLOP moved into a 1 MiB cache,
  // plus 0.1 x the hot loop's latency slack and 0.1 x its log2(1 + FLOPs per load).
  auto code = code_features(mm64(), tiled_trace, host);
  double roofline = std::log2(hot_loop_flops_per_cycle(code) + 1.0 / 64);
  double l2 = cache_traffic_per_flop(extract_features(mm64(), tiled_trace), 1);
  CHECK(l2 > 0);
  CHECK(hot_loop_flops_per_load(code) > 0);
  CHECK(s[1] == Approx(roofline - 0.1 * l2 + 0.1 * hot_loop_latency_slack(code) + 0.1 * hot_loop_flops_per_load(code)));
  // Kernels whose hot loops tie on the roofline are ordered by that traffic: less first.
  ProgramFeatures streams, stays;
  streams.code = stays.code = code_features(mm64(), tiled_trace, host);
  streams.rows = stays.rows = extract_features(mm64(), tiled_trace);
  float v = streams.rows[0][size_t(kCacheOffset + 1)];  // log2(1 + 1024 x bytes per FLOP)
  streams.rows[0][size_t(kCacheOffset + 1)] = v + 2;    // 3 x 2^v / 1024 more bytes per FLOP
  auto tie = m->predict_features({&streams, &stays});
  CHECK(tie[1] > tie[0]);
  CHECK(tie[1] - tie[0] == Approx(0.1 * 3 * std::exp2(double(v)) / 1024));
  CHECK(tie[1] == Approx(s[1]));
  // And by their latency slack: 8 and 16 single-update accumulators fed by a broadcast and a load each both
  // run at the load ports' 32 FLOPs a cycle and feed 16 FLOPs a load; 16 have a slack of 1, 8 of 0: 0.1 more.
  ProgramFeatures eight = stays, sixteen = stays;
  eight.code = code_features_from_assembly(tile_loop(8, 1));
  sixteen.code = code_features_from_assembly(tile_loop(16, 1));
  REQUIRE(hot_loop_flops_per_cycle(eight.code) == Approx(hot_loop_flops_per_cycle(sixteen.code)));
  auto slack = m->predict_features({&eight, &sixteen});
  CHECK(slack[1] - slack[0] == Approx(0.1).epsilon(1e-4));
  // Measurements change nothing, and there is nothing to save.
  m->update(pair, {5e9, 1e9});
  CHECK(m->num_samples() == 0);
  CHECK(m->predict(pair) == s);
  CHECK_THROWS_WITH(m->save("/tmp/tessel_test_analytic.model"), Catch::Contains("learns nothing"));
  CHECK_THROWS_WITH(make_learned_model("analytic", {{"num_rounds", 3}}), Catch::Contains("unknown parameter"));

  // As the base of an xgb-rank that reads code features (a cold refine model): its scores until the model
  // has fitted; afterwards it learns what the estimate gets wrong on this run's measurements.
  auto cold = make_learned_model("xgb-rank", {{"code_features", true}, {"min_samples", 8}, {"num_rounds", 30}, {"nthread", 1}});
  cold->set_base(make_learned_model("analytic", {{"nthread", 1}}));
  CHECK(cold->trained());
  CHECK(cold->predict(pair) == s);
  auto cands = testing::random_candidates(w, 40, 4242);
  REQUIRE(cands.size() >= 32);
  std::vector<Candidate> cs;
  for (auto& c : cands) cs.push_back({w.get(), &c.trace});
  // A throughput that inverts the estimate: the fitted model must move away from the base's order.
  std::vector<double> inverted;
  for (double x : m->predict(cs)) inverted.push_back(1e9 / (1 + std::exp2(x)));
  std::vector<Candidate> train(cs.begin(), cs.begin() + 24), test(cs.begin() + 24, cs.end());
  std::vector<double> truth_test(inverted.begin() + 24, inverted.end());
  double before = testing::pairwise_accuracy(cold->predict(test), truth_test, 0.05);
  cold->update(train, std::vector<double>(inverted.begin(), inverted.begin() + 24));
  double after = testing::pairwise_accuracy(cold->predict(test), truth_test, 0.05);
  INFO("pairwise accuracy on the inverted order: base alone " << before << ", after the fit " << after);
  CHECK(after > before);
  // Only a model that reads code features can start from it.
  auto plain = make_learned_model("xgb-rank", {{"nthread", 1}});
  CHECK_THROWS_WITH(plain->set_base(make_learned_model("analytic")), Catch::Contains("code features"));
}
