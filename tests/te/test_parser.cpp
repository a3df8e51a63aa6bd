// The .te format: parsing the documented examples, print -> parse round trips (text and lowered IR),
// and end-to-end runs of parsed programs against plain C++ references.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tessel/codegen/jit.h"
#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/schedule/schedule.h"
#include "tessel/te/parser.h"

using namespace tessel;
using te::parse_te;
using te::print_te;
using te::TeProgram;

namespace {

const char* kMatmul = R"(# C = A x B
const N = 64
input A: float32[N, 48]
input B: float32[48, N]
C[i, j] = sum(A[i, k] * B[k, j], k)
)";

const char* kConv = R"(
const C = 3
const H = 9
const W = 7
const F = 4
input I: float32[C, H, W]
input Wt: float32[F, C, 3, 3]
# zero padding by one pixel on each side
P[c, y, x]: float32[C, H + 2, W + 2] = if_then_else(y >= 1 && y < H + 1 && x >= 1 && x < W + 1, I[c, y - 1, x - 1], 0.0)
O[f, y, x]: float32[F, H, W] = sum(P[c, y + r, x + s] * Wt[f, c, r, s], c, r, s)
)";

const char* kSoftmax = R"(
input X: float32[8, 33]
M[i] = max_reduce(X[i, r], r)
E[i, j] = exp(X[i, j] - M[i])
S[i] = sum(E[i, r], r)
Y[i, j] = E[i, j] / S[i]
)";

const char* kElementwise = R"(
input A: float32[13, 29]
input B: float32[13, 29]
T[i, j] = A[i, j] * B[i, j] + 1
D[i, j] = max(T[i, j], 0.0) * sigmoid(A[i, j]) + tanh(B[i, j]) - sqrt(abs(A[i, j]))
G[i, j] = pow(abs(D[i, j]) + 0.5, 2.0) + erf(A[i, j]) * exp(-abs(B[i, j])) + floor(A[i, j]) - ceil(B[i, j])
)";

const char* kMisc = R"(
const K = 16
input V: float64[K]
input I: int32[K, 4]
input Mask: bool[K]
S[i]: float64[K] = select(Mask[i] || !(V[i] < 0), fma(V[i], 2, 1.5), -V[i])
Q[i] = prod(float64(I[i, c]) + 0.25, c: 0..4, where I[i, c] % 3 != 0 && c <= i)
R[i] = min_reduce(I[i, c] / 2 - c, c)
U[i]: int64 = int64(R[i]) * 3000000000 + int64(5)
Z[i]: float16[K] = cast<float16>(V[i]) + float16(1)
output B[i]: bool = Mask[i] == (I[i, 0] > 2)
W[i] = B[i] && true
)";

/** Default schedule, lowered; the text of the lowered function. */
std::string lowered_text(const TeProgram& p) {
  std::vector<te::Tensor> args = p.inputs;
  args.insert(args.end(), p.outputs.begin(), p.outputs.end());
  schedule::Schedule s(p.outputs);
  return ir::to_string(lower::lower(s, args, "f"));
}

/** print -> parse -> print gives the same text, and both programs lower to the same IR. */
void check_round_trip(const std::string& text) {
  TeProgram p = parse_te(text, "orig.te");
  std::string printed = print_te(p);
  INFO("printed:\n" << printed);
  TeProgram q = parse_te(printed, "printed.te");
  CHECK(print_te(q) == printed);
  REQUIRE(q.inputs.size() == p.inputs.size());
  REQUIRE(q.outputs.size() == p.outputs.size());
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    CHECK(q.outputs[k].name() == p.outputs[k].name());
    CHECK(q.outputs[k].dtype() == p.outputs[k].dtype());
  }
  CHECK(lowered_text(q) == lowered_text(p));
}

std::vector<int64_t> shape_of(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (auto& e : t.shape()) s.push_back(*ir::as_const_int(e));
  return s;
}

/** JIT-runs p's default schedule on seeded random inputs (outputs poisoned with 0xFF first). */
std::vector<runtime::NDArray> run(const TeProgram& p, uint64_t seed) {
  std::vector<te::Tensor> args = p.inputs;
  args.insert(args.end(), p.outputs.begin(), p.outputs.end());
  std::vector<runtime::NDArray> arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    arrays.emplace_back(shape_of(args[i]), args[i].dtype().to_string());
    if (i < p.inputs.size())
      arrays.back().fill_random(seed + i, -1.0, 1.0);
    else
      arrays.back().fill_bytes(0xFF);
  }
  auto jit = codegen::JitModule::compile(lower::lower(schedule::Schedule(p.outputs), args, "f"));
  std::vector<void*> ptrs;
  for (auto& a : arrays) ptrs.push_back(a.data());
  REQUIRE(jit->call_packed(ptrs.data()) == 0);
  return arrays;
}

void expect_close(const runtime::NDArray& got, const std::vector<double>& want, uint64_t seed) {
  REQUIRE(size_t(got.num_elements()) == want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    double tol = 1e-4 * std::max(1.0, std::fabs(want[k]));
    if (!(std::fabs(got.get(int64_t(k)) - want[k]) <= tol)) {
      FAIL("seed " << seed << ": element " << k << " = " << got.get(int64_t(k)) << ", expected " << want[k]);
    }
  }
}

}  // namespace

TEST_CASE("te parser: matmul with inferred extents", "[te][parser]") {
  TeProgram p = parse_te(kMatmul, "matmul.te");
  REQUIRE(p.inputs.size() == 2);
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.inputs[0].name() == "A");
  CHECK(p.inputs[1].name() == "B");
  const te::Tensor& C = p.outputs[0];
  CHECK(C.name() == "C");
  CHECK(shape_of(C) == std::vector<int64_t>{64, 64});
  CHECK(C.dtype() == ir::DataType::float32());
  auto* op = te::as_compute(C.op());
  REQUIRE(op);
  REQUIRE(op->axis.size() == 2);
  CHECK(op->axis[0]->var.name() == "i");
  CHECK(op->axis[1]->var.name() == "j");
  REQUIRE(op->reduce_axis.size() == 1);
  CHECK(op->reduce_axis[0]->var.name() == "k");
  CHECK(*ir::as_const_int(op->reduce_axis[0]->extent) == 48);
  // Schedules refer to the axes by their .te names.
  schedule::Schedule s({C});
  s.split("C", "k", 8);
  s.reorder("C", {"i", "k.o", "j", "k.i"});
  CHECK_NOTHROW(lower::lower(s, {p.inputs[0], p.inputs[1], C}, "f"));
}

TEST_CASE("te parser: conv2d with padding", "[te][parser]") {
  TeProgram p = parse_te(kConv, "conv.te");
  REQUIRE(p.inputs.size() == 2);
  REQUIRE(p.outputs.size() == 1);  // P is read by O, so only O is an output
  CHECK(p.outputs[0].name() == "O");
  CHECK(shape_of(p.outputs[0]) == std::vector<int64_t>{4, 9, 7});
  auto* o = te::as_compute(p.outputs[0].op());
  REQUIRE(o->reduce_axis.size() == 3);
  CHECK(*ir::as_const_int(o->reduce_axis[1]->extent) == 3);  // r from Wt dimension 2
  auto inputs = o->inputs();
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0]->name() == "P");
  CHECK(shape_of(te::Tensor(inputs[0])) == std::vector<int64_t>{3, 11, 9});
}

TEST_CASE("te parser: softmax DAG with two reductions", "[te][parser]") {
  TeProgram p = parse_te(kSoftmax, "softmax.te");
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].name() == "Y");
  auto order = te::topo_order(p.outputs);
  std::vector<std::string> names;
  for (auto& op : order) names.push_back(op->name());
  CHECK(names == std::vector<std::string>{"X", "M", "E", "S", "Y"});
  CHECK(te::as_compute(order[1])->reduce()->op == ir::ReduceKind::kMax);
  CHECK(te::as_compute(order[3])->reduce()->op == ir::ReduceKind::kSum);
}

TEST_CASE("te parser: elementwise chain with intrinsics, literals adopt types", "[te][parser]") {
  TeProgram p = parse_te(kElementwise, "ew.te");
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].name() == "G");
  // `+ 1` next to a float32 operand is the float32 constant 1.0.
  auto* t = te::as_compute(te::topo_order(p.outputs)[2]);
  REQUIRE(t->name() == "T");
  auto* add = t->body.as<ir::Add>();
  REQUIRE(add);
  REQUIRE(add->b.as<ir::FloatImm>());
  CHECK(add->b.dtype() == ir::DataType::float32());

  TeProgram m = parse_te(kMisc, "misc.te");
  std::vector<std::string> outs;
  for (auto& o : m.outputs) outs.push_back(o.name() + ":" + o.dtype().to_string());
  CHECK(outs == std::vector<std::string>{"S:float64", "Q:float64", "U:int64", "Z:float16", "B:bool", "W:bool"});
  auto* u = te::as_compute(m.outputs[2].op());
  // int64(R[i]) * 3000000000 + int64(5): 3000000000 adopts int64.
  REQUIRE(u->body.as<ir::Add>());
  CHECK(ir::to_string(u->body).find("3000000000") != std::string::npos);
}

TEST_CASE("te parser: constants fold exactly, explicit output, several statements per line", "[te][parser]") {
  TeProgram p = parse_te(
      "const N = 2 * (3 + 4) - 7 % 3 ; const D = -7 / 2  # floor division: -4\n"
      "input A: float64[N]\n"
      "output T[i] = A[i] * (1 / 3)\n"
      "U[i] = T[i] + D; V[i]: float64[3] = A[i + 1] * 0.1\n",
      "fold.te");
  CHECK(shape_of(p.inputs[0]) == std::vector<int64_t>{13});
  REQUIRE(p.outputs.size() == 3);
  CHECK(p.outputs[0].name() == "T");
  auto* t = te::as_compute(p.outputs[0].op())->body.as<ir::Mul>();
  REQUIRE(t);
  // 1 / 3 between integers is floor division: 0; it becomes the float64 constant 0.0.
  CHECK(t->b.as<ir::FloatImm>()->value == 0.0);
  auto* u = te::as_compute(p.outputs[1].op())->body.as<ir::Add>();
  CHECK(u->b.as<ir::FloatImm>()->value == -4.0);
  auto* v = te::as_compute(p.outputs[2].op())->body.as<ir::Mul>();
  CHECK(v->b.as<ir::FloatImm>()->value == 0.1);  // exact in float64, not rounded through float32
}

TEST_CASE("te printer: canonical text", "[te][printer]") {
  std::string text = print_te(parse_te(kMatmul));
  CHECK(text ==
        "input A: float32[64, 48]\n"
        "input B: float32[48, 64]\n"
        "C[i, j]: float32[64, 64] = sum(A[i, k] * B[k, j], k: 0..48)\n");
  std::string conv = print_te(parse_te(kConv));
  CHECK(conv.find("P[c, y, x]: float32[3, 11, 9] = if_then_else(1 <= y && y < 10 && 1 <= x && x < 8, "
                  "I[c, y - 1, x - 1], 0.0)") != std::string::npos);
  CHECK(conv.find("O[f, y, x]: float32[4, 9, 7] = sum(P[c, y + r, x + s] * Wt[f, c, r, s], c: 0..3, r: 0..3, "
                  "s: 0..3)") != std::string::npos);
}

TEST_CASE("te round trip: print -> parse -> print and lowered IR identical", "[te][roundtrip]") {
  for (const char* text : {kMatmul, kConv, kSoftmax, kElementwise, kMisc}) check_round_trip(text);
  check_round_trip(
      "input A: int8[4, 5]\n"
      "B[i, j]: int8 = A[i, j] * -3 + max(A[i, j], 7) - (0 - A[i, j]) / 2 % 5\n"
      "C[i, j] = (int32(B[i, j]) < 2) == (A[i, j] >= -128)\n"
      "S8[i] = sum(int32(A[i, j]), j)\n"
      "D[i]: uint8[4] = uint8(S8[i]) + 255\n"
      "E[i]: float32[4] = max_reduce(if_then_else(A[i, j] > 0, float32(A[i, j]), -inf), j)\n");
}

TEST_CASE("te round trip: the fuzz seed corpus", "[te][roundtrip]") {
  int n = 0;
  for (auto& entry : std::filesystem::directory_iterator(TESSEL_TE_CORPUS_DIR)) {
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(entry.path().string());
    check_round_trip(text);
    ++n;
  }
  CHECK(n >= 5);
}

TEST_CASE("te round trip: programs built in C++", "[te][roundtrip]") {
  using namespace tessel::ir;
  te::Tensor A = te::placeholder({16, 8}, DataType::float32(), "A");
  te::Tensor L = te::placeholder({16}, DataType::int64(), "L");
  ir::IterVar k = te::reduce_axis(2, 6, "k");
  te::Tensor C = te::compute(
      {16}, [&](Var i) { return te::sum(A(i, k->var) * 2.0f, {k}, k->var < 5); }, "C");
  te::Tensor D = te::compute(
      {16, 8},
      [&](Var i, Var j) {
        Expr lit = Add::make(IntImm::make(DataType::int64(), 2), IntImm::make(DataType::int64(), 3));
        return select(L(i) > lit, C(i) - A(i, j), ir::cast(DataType::float32(), L(i)) * 0.5f) +
               Max::make(FloatImm::make(DataType::float32(), 1.5), FloatImm::make(DataType::float32(), 0.25));
      },
      "D");
  TeProgram p{{A, L}, {C, D}};
  std::string printed = print_te(p);
  INFO(printed);
  TeProgram q = parse_te(printed);
  CHECK(print_te(q) == printed);
  CHECK(lowered_text(q) == lowered_text(p));
  CHECK(printed.find("output C[i]") != std::string::npos);  // an output that D also reads
  CHECK(printed.find("int64(2) + 3") != std::string::npos);  // kept unfolded, with its type
}

TEST_CASE("te end to end: matmul from text matches the reference", "[te][correctness]") {
  TeProgram p = parse_te(kMatmul, "matmul.te");
  for (uint64_t seed : {1u, 2u}) {
    auto arrays = run(p, seed);
    const float* A = arrays[0].data_as<float>();
    const float* B = arrays[1].data_as<float>();
    std::vector<double> want(64 * 64);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double acc = 0;
        for (int k = 0; k < 48; ++k) acc += double(A[i * 48 + k]) * B[k * 64 + j];
        want[i * 64 + j] = acc;
      }
    expect_close(arrays[2], want, seed);
  }
}

TEST_CASE("te end to end: padded conv2d from text matches the reference", "[te][correctness]") {
  TeProgram p = parse_te(kConv, "conv.te");
  const int C = 3, H = 9, W = 7, F = 4;
  for (uint64_t seed : {3u, 4u}) {
    auto arrays = run(p, seed);
    const float* I = arrays[0].data_as<float>();
    const float* Wt = arrays[1].data_as<float>();
    std::vector<double> want(F * H * W);
    for (int f = 0; f < F; ++f)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          double acc = 0;
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < 3; ++r)
              for (int s = 0; s < 3; ++s) {
                int yy = y + r - 1, xx = x + s - 1;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                acc += double(I[(c * H + yy) * W + xx]) * Wt[((f * C + c) * 3 + r) * 3 + s];
              }
          want[(f * H + y) * W + x] = acc;
        }
    expect_close(arrays[2], want, seed);
  }
}

TEST_CASE("te end to end: softmax DAG from text matches the reference", "[te][correctness]") {
  TeProgram p = parse_te(kSoftmax, "softmax.te");
  auto arrays = run(p, 5);
  const float* X = arrays[0].data_as<float>();
  std::vector<double> want(8 * 33);
  for (int i = 0; i < 8; ++i) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < 33; ++j) m = std::max(m, double(X[i * 33 + j]));
    for (int j = 0; j < 33; ++j) s += std::exp(double(X[i * 33 + j]) - m);
    for (int j = 0; j < 33; ++j) want[i * 33 + j] = std::exp(double(X[i * 33 + j]) - m) / s;
  }
  expect_close(arrays[1], want, 5);
}

TEST_CASE("te files: parse_te_file and unreadable files", "[te][parser]") {
  std::string path = "te_parser_test_tmp.te";
  {
    std::ofstream out(path);
    out << kSoftmax;
  }
  CHECK(te::parse_te_file(path).outputs.size() == 1);
  std::remove(path.c_str());
  CHECK_THROWS_WITH(te::parse_te_file("/nonexistent/x.te"), Catch::Contains("cannot read /nonexistent/x.te"));
  CHECK_THROWS_AS(te::parse_te_file("/nonexistent/x.te"), UserError);
}
