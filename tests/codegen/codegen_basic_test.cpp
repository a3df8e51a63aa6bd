// Hand-written lowered IR through the LLVM JIT: loops, vector/masked/gather memory access, floor
// division, casts, allocations, if_then_else laziness, debug output.
#include <cmath>
#include <cstring>
#include <limits>

#include "tessel/codegen/target.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/support/error.h"
#include "test_util.h"

using namespace tessel::test;
using tessel::codegen::JitModule;

TEST_CASE("codegen: scalar loop", "[codegen]") {
  const int n = 1003;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
  Var i("i");
  Stmt body = loop(i, n, Store::make(B, Load::make(A, i) * f32(2.0) + f32(1.0), i));
  NDArray a = random_array(n, "float32", -10, 10, 1), b = poison_array(n, "float32");
  REQUIRE(run({"scalar_loop", {A, B}, body}, {&a, &b}) == 0);
  for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[k] * 2.0f + 1.0f);
}

TEST_CASE("codegen: vector (Ramp) copy and scale", "[codegen]") {
  const int n = 256;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
  Var io("io");
  Expr idx = ramp(io * 8, 1, 8);
  Stmt body = loop(io, n / 8, Store::make(B, Load::make(A, idx) * f32(3.0), idx));
  NDArray a = random_array(n, "float32", -1, 1, 2), b = poison_array(n, "float32");
  LoweredFunc f{"vec_scale", {A, B}, body};
  auto jit = JitModule::compile(f);
  std::vector<void*> args{a.data(), b.data()};
  REQUIRE(jit->call_packed(args.data()) == 0);
  for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[k] * 3.0f);
  // The typed entry point works as well.
  auto fn = reinterpret_cast<int32_t (*)(float*, float*)>(jit->symbol("vec_scale"));
  b.fill_bytes(0xAB);
  REQUIRE(fn(a.data_as<float>(), b.data_as<float>()) == 0);
  for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[k] * 3.0f);
  REQUIRE_THROWS_AS(jit->symbol("no_such_symbol"), tessel::UserError);
}

TEST_CASE("codegen: masked (predicated) tail", "[codegen]") {
  const int n = 100, padded = 112;  // B has room past n: those elements must stay untouched
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
  Var io("io");
  Expr idx = ramp(io * 8, 1, 8);
  Expr pred = idx < Broadcast::make(i32(n), 8);
  Stmt body = loop(io, (n + 7) / 8, Store::make(B, Load::make(A, idx, pred) + f32(0.5), idx, pred));
  NDArray a = random_array(padded, "float32", -1, 1, 3), b = poison_array(padded, "float32");
  REQUIRE(run({"masked_tail", {A, B}, body}, {&a, &b}) == 0);
  for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[k] + 0.5f);
  const uint8_t* raw = static_cast<const uint8_t*>(b.data());
  for (int k = n * 4; k < padded * 4; ++k) REQUIRE(raw[k] == 0xAB);
}

TEST_CASE("codegen: gather and scatter with stride 2", "[codegen]") {
  const int n = 64;
  auto A = buf1("A", DataType::float32(), 2 * n), B = buf1("B", DataType::float32(), n),
       C = buf1("C", DataType::float32(), 2 * n);
  Var io("io");
  Stmt s1 = Store::make(B, Load::make(A, ramp(io * 16, 2, 8)), ramp(io * 8, 1, 8));             // gather
  Stmt s2 = Store::make(C, Load::make(A, ramp(io * 8, 1, 8)) * f32(2.0), ramp(io * 16, 2, 8));  // scatter
  Stmt body = loop(io, n / 8, Seq::make({s1, s2}));
  NDArray a = random_array(2 * n, "float32", -1, 1, 4), b = poison_array(n, "float32"),
          c = poison_array(2 * n, "float32");
  REQUIRE(run({"gather", {A, B, C}, body}, {&a, &b, &c}) == 0);
  const uint32_t* craw = c.data_as<uint32_t>();
  for (int k = 0; k < n; ++k) {
    REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[2 * k]);
    REQUIRE(c.data_as<float>()[2 * k] == a.data_as<float>()[k] * 2.0f);
    REQUIRE(craw[2 * k + 1] == 0xABABABABu);
  }
}

namespace {
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a % b < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }
}  // namespace

TEST_CASE("codegen: floor division and modulo", "[codegen]") {
  for (DataType t : {DataType::int32(), DataType::int64()}) {
    std::string tn = t.to_string();
    SECTION(tn) {
      const int n = 256;
      auto A = buf1("A", t, n), B = buf1("B", t, n);
      std::vector<Buffer> outs;
      std::vector<std::string> names{"div", "mod", "div8", "mod8", "div7", "mod7", "divm3", "modm3", "vdiv", "vmod"};
      for (auto& nm : names) outs.push_back(buf1(nm, t, n));
      Var i("i", t);
      Expr a = Load::make(A, i), b = Load::make(B, i);
      auto c = [&](int64_t v) { return IntImm::make(t, v); };
      std::vector<Stmt> st{Store::make(outs[0], a / b, i),     Store::make(outs[1], a % b, i),
                           Store::make(outs[2], a / c(8), i),  Store::make(outs[3], a % c(8), i),
                           Store::make(outs[4], a / c(7), i),  Store::make(outs[5], a % c(7), i),
                           Store::make(outs[6], a / c(-3), i), Store::make(outs[7], a % c(-3), i)};
      Stmt scalar = loop(i, n, Seq::make(st));
      Var io("io", t);
      Expr idx = Ramp::make(io * c(8), c(1), 8);
      Expr va = Load::make(A, idx), vb = Load::make(B, idx);
      Stmt vec = loop(io, n / 8, Seq::make({Store::make(outs[8], va / vb, idx), Store::make(outs[9], va % vb, idx)}));
      std::vector<Buffer> params{A, B};
      params.insert(params.end(), outs.begin(), outs.end());
      NDArray a_arr = random_array(n, tn, -1000, 1000, 5), b_arr = random_array(n, tn, -20, 20, 6);
      for (int k = 0; k < n; ++k)
        if (b_arr.get(k) == 0) b_arr.set(k, 3);
      a_arr.set(0, -7), b_arr.set(0, 2);  // the examples from expr.h
      std::vector<NDArray> out_arrs;
      for (size_t k = 0; k < outs.size(); ++k) out_arrs.push_back(poison_array(n, tn));
      std::vector<NDArray*> args{&a_arr, &b_arr};
      for (auto& o : out_arrs) args.push_back(&o);
      REQUIRE(run({"floordiv_" + tn, params, Seq::make({scalar, vec})}, args) == 0);
      CHECK(out_arrs[0].get(0) == -4);
      CHECK(out_arrs[1].get(0) == 1);
      for (int k = 0; k < n; ++k) {
        int64_t x = int64_t(a_arr.get(k)), y = int64_t(b_arr.get(k));
        INFO("a = " << x << ", b = " << y);
        REQUIRE(int64_t(out_arrs[0].get(k)) == floor_div(x, y));
        REQUIRE(int64_t(out_arrs[1].get(k)) == floor_mod(x, y));
        REQUIRE(int64_t(out_arrs[2].get(k)) == floor_div(x, 8));
        REQUIRE(int64_t(out_arrs[3].get(k)) == floor_mod(x, 8));
        REQUIRE(int64_t(out_arrs[4].get(k)) == floor_div(x, 7));
        REQUIRE(int64_t(out_arrs[5].get(k)) == floor_mod(x, 7));
        REQUIRE(int64_t(out_arrs[6].get(k)) == floor_div(x, -3));
        REQUIRE(int64_t(out_arrs[7].get(k)) == floor_mod(x, -3));
        REQUIRE(int64_t(out_arrs[8].get(k)) == floor_div(x, y));
        REQUIRE(int64_t(out_arrs[9].get(k)) == floor_mod(x, y));
      }
    }
  }
}

TEST_CASE("codegen: min/max follow a < b ? a : b with NaN", "[codegen]") {
  const int n = 8;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
  auto Mn = buf1("Mn", DataType::float32(), n), Mx = buf1("Mx", DataType::float32(), n);
  Var i("i");
  Expr a = Load::make(A, i), b = Load::make(B, i);
  Stmt body = loop(i, n, Seq::make({Store::make(Mn, min(a, b), i), Store::make(Mx, max(a, b), i)}));
  NDArray aa({n}, "float32"), bb({n}, "float32"), mn = poison_array(n, "float32"), mx = poison_array(n, "float32");
  float nan = std::numeric_limits<float>::quiet_NaN();
  float av[n] = {1, 2, nan, 4, nan, -0.0f, 7, 8}, bv[n] = {2, 1, 3, nan, nan, 0.0f, 7, -8};
  std::memcpy(aa.data(), av, sizeof av);
  std::memcpy(bb.data(), bv, sizeof bv);
  REQUIRE(run({"minmax", {A, B, Mn, Mx}, body}, {&aa, &bb, &mn, &mx}) == 0);
  for (int k = 0; k < n; ++k) {
    float rmin = av[k] < bv[k] ? av[k] : bv[k], rmax = av[k] > bv[k] ? av[k] : bv[k];
    float gmin = mn.data_as<float>()[k], gmax = mx.data_as<float>()[k];
    REQUIRE(std::memcmp(&gmin, &rmin, 4) == 0);
    REQUIRE(std::memcmp(&gmax, &rmax, 4) == 0);
  }
}

TEST_CASE("codegen: casts and float16/bfloat16 round trips", "[codegen]") {
  const int n = 64;
  auto A = buf1("A", DataType::float32(), n);
  auto H = buf1("H", DataType::float16(), n), BF = buf1("BF", DataType::bfloat16(), n);
  auto HB = buf1("HB", DataType::float32(), n), BFB = buf1("BFB", DataType::float32(), n);
  auto I8 = buf1("I8", DataType::int8(), n), U8 = buf1("U8", DataType::uint8(), n);
  auto I64 = buf1("I64", DataType::int64(), n), D = buf1("D", DataType::float64(), n);
  auto BL = buf1("BL", DataType::boolean(), n), BLF = buf1("BLF", DataType::float32(), n);
  auto HSUM = buf1("HSUM", DataType::float16(), n), BFSUM = buf1("BFSUM", DataType::bfloat16(), n);
  Var io("io");
  Expr idx = ramp(io * 8, 1, 8);
  Expr a = Load::make(A, idx);
  Expr h = cast(DataType::float16(8), a), bf = cast(DataType::bfloat16(8), a);
  std::vector<Stmt> st{
      Store::make(H, h, idx),
      Store::make(BF, bf, idx),
      Store::make(HB, cast(DataType::float32(8), Load::make(H, idx)), idx),
      Store::make(BFB, cast(DataType::float32(8), Load::make(BF, idx)), idx),
      Store::make(I8, cast(DataType::int8(8), a), idx),
      Store::make(U8, cast(DataType::uint8(8), cast(DataType::int32(8), a) + Broadcast::make(i32(200), 8)), idx),
      Store::make(I64, cast(DataType::int64(8), cast(DataType::int8(8), a)), idx),
      Store::make(D, cast(DataType::float64(8), cast(DataType::float16(8), cast(DataType::float64(8), a))), idx),
      Store::make(BL, a > Broadcast::make(f32(0), 8), idx),
      Store::make(BLF, cast(DataType::float32(8), Load::make(BL, idx)), idx),
      Store::make(HSUM, h * h + h, idx),
      Store::make(BFSUM, bf * bf + bf, idx),
  };
  Stmt body = loop(io, n / 8, Seq::make(st));
  NDArray a_arr = random_array(n, "float32", -100, 100, 7);
  a_arr.data_as<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  a_arr.data_as<float>()[1] = 70000.0f;  // overflows float16
  std::vector<std::string> types{"float16", "bfloat16", "float32", "float32", "int8",    "uint8",
                                 "int64",   "float64",  "bool",    "float32", "float16", "bfloat16"};
  std::vector<NDArray> outs;
  for (auto& t : types) outs.push_back(poison_array(n, t));
  std::vector<NDArray*> args{&a_arr};
  for (auto& o : outs) args.push_back(&o);
  REQUIRE(run({"casts", {A, H, BF, HB, BFB, I8, U8, I64, D, BL, BLF, HSUM, BFSUM}, body}, args) == 0);
  using namespace tessel::runtime;
  for (int k = 0; k < n; ++k) {
    float x = a_arr.data_as<float>()[k];
    INFO("k = " << k << ", x = " << x);
    REQUIRE(outs[0].data_as<uint16_t>()[k] == float_to_half(x));
    if (std::isnan(x)) {
      REQUIRE(std::isnan(bfloat16_to_float(outs[1].data_as<uint16_t>()[k])));
      REQUIRE(std::isnan(outs[2].data_as<float>()[k]));
      continue;
    }
    REQUIRE(outs[1].data_as<uint16_t>()[k] == float_to_bfloat16(x));
    REQUIRE(outs[2].data_as<float>()[k] == half_to_float(float_to_half(x)));
    REQUIRE(outs[3].data_as<float>()[k] == bfloat16_to_float(float_to_bfloat16(x)));
    if (k == 1) continue;  // 70000 does not fit the integer types
    REQUIRE(outs[4].data_as<int8_t>()[k] == int8_t(int32_t(x)));
    REQUIRE(outs[5].data_as<uint8_t>()[k] == uint8_t(int32_t(x) + 200));
    REQUIRE(outs[6].data_as<int64_t>()[k] == int64_t(int8_t(x)));
    REQUIRE(outs[7].data_as<double>()[k] == double(half_to_float(float_to_half(x))));
    REQUIRE(outs[8].data_as<uint8_t>()[k] == (x > 0 ? 1 : 0));
    REQUIRE(outs[9].data_as<float>()[k] == (x > 0 ? 1.0f : 0.0f));
    float hx = half_to_float(float_to_half(x));
    float hsum = half_to_float(float_to_half(half_to_float(float_to_half(hx * hx)) + hx));
    // float16 arithmetic may run in float32 with one final rounding; allow one ulp either way.
    REQUIRE(std::fabs(half_to_float(outs[10].data_as<uint16_t>()[k]) - hsum) <= std::fabs(hsum) * 2e-3f + 1e-3f);
    float bx = bfloat16_to_float(float_to_bfloat16(x));
    float bsum = bfloat16_to_float(float_to_bfloat16(bfloat16_to_float(float_to_bfloat16(bx * bx)) + bx));
    REQUIRE(bfloat16_to_float(outs[11].data_as<uint16_t>()[k]) == bsum);
  }
}

TEST_CASE("codegen: stack and heap Allocate", "[codegen]") {
  for (int n : {100, 100000}) {  // 400 bytes on the stack, 400 KB on the heap
    SECTION("n = " + std::to_string(n)) {
      auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
      auto T = make_buffer("T", DataType::float32(), {i32(n)}, {}, MemScope::kLocal, 64);
      Var i("i"), j("j");
      Stmt fill = loop(i, n, Store::make(T, Load::make(A, i) * f32(2.0), i));
      Stmt use = loop(j, n, Store::make(B, Load::make(T, i32(n - 1) - j) + f32(1.0), j));
      Var r("r");
      Stmt body = loop(r, 3, Allocate::make(T, Seq::make({fill, use})));  // allocation inside a loop
      NDArray a = random_array(n, "float32", -1, 1, 8), b = poison_array(n, "float32");
      REQUIRE(run({"alloc" + std::to_string(n), {A, B}, body}, {&a, &b}) == 0);
      for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[n - 1 - k] * 2.0f + 1.0f);
    }
  }
}

TEST_CASE("codegen: if_then_else evaluates only the chosen side", "[codegen]") {
  // A guarded load whose address is far outside the address space (it would fault if evaluated).
  const int n = 16;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n),
       C = buf1("C", DataType::float32(), n), D = buf1("D", DataType::float32(), n);
  const int64_t far = int64_t(1) << 45;
  Var i("i", DataType::int64());
  Expr bad = Load::make(A, i * i64(far));
  Stmt scalar = Store::make(B, if_then_else(i < i64(1), bad, Load::make(A, i) + f32(100)), i);
  Var io("io", DataType::int64());
  Expr idx = Ramp::make(io * i64(8), i64(1), 8);
  Expr vbad = Load::make(A, Ramp::make(io * i64(8 * far), i64(far), 8));
  Expr vcond = idx < Broadcast::make(i64(1), 8);
  Stmt vec = Store::make(C, if_then_else(vcond, vbad, Load::make(A, idx) - Broadcast::make(f32(1), 8)), idx);
  // Scalar condition with vector branches; vector condition with branches that cannot fault (a select).
  Stmt svec = Store::make(D,
                          if_then_else(io < i64(0), vbad, Load::make(A, idx)) +
                              if_then_else(vcond, Broadcast::make(f32(10), 8), Broadcast::make(f32(20), 8)),
                          idx);
  Stmt body = Seq::make({loop(i, n, scalar), loop(io, n / 8, Seq::make({vec, svec}))});
  NDArray a = random_array(n, "float32", -1, 1, 9), b = poison_array(n, "float32"), c = poison_array(n, "float32"),
          d = poison_array(n, "float32");
  REQUIRE(run({"lazy_ite", {A, B, C, D}, body}, {&a, &b, &c, &d}) == 0);
  const float* av = a.data_as<float>();
  REQUIRE(b.data_as<float>()[0] == av[0]);
  REQUIRE(c.data_as<float>()[0] == av[0]);
  for (int k = 1; k < n; ++k) {
    REQUIRE(b.data_as<float>()[k] == av[k] + 100.0f);
    REQUIRE(c.data_as<float>()[k] == av[k] - 1.0f);
  }
  for (int k = 0; k < n; ++k) REQUIRE(d.data_as<float>()[k] == av[k] + (k < 1 ? 10.0f : 20.0f));
}

TEST_CASE("codegen: Let, LetStmt, Select, IfThenElse, bool logic", "[codegen]") {
  const int n = 200;
  auto A = buf1("A", DataType::int32(), n), B = buf1("B", DataType::int32(), n);
  Var i("i"), x("x"), y("y");
  Expr a = Load::make(A, i);
  Expr sel = select((a > i32(0)) && !(eq(a % i32(2), i32(0))), a, i32(0) - a);
  Stmt st = LetStmt::make(x, Let::make(y, a * i32(3), y + i32(1)),
                          IfThenElse::make(x > i32(50) || x < i32(-50), Store::make(B, sel, i), Store::make(B, x, i)));
  Stmt body = loop(i, n, AttrStmt::make("pragma", i32(1), st));
  NDArray a_arr = random_array(n, "int32", -40, 40, 10), b = poison_array(n, "int32");
  REQUIRE(run({"lets", {A, B}, body}, {&a_arr, &b}) == 0);
  for (int k = 0; k < n; ++k) {
    int32_t av = a_arr.data_as<int32_t>()[k], xv = av * 3 + 1;
    int32_t s = (av > 0 && av % 2 != 0) ? av : -av;
    REQUIRE(b.data_as<int32_t>()[k] == ((xv > 50 || xv < -50) ? s : xv));
  }
}

TEST_CASE("codegen: JIT exposes LLVM IR and FMA assembly", "[codegen]") {
  const int n = 1024;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n),
       C = buf1("C", DataType::float32(), n);
  Var i("i");
  Stmt body = loop(i, n, Store::make(C, Load::make(A, i) * Load::make(B, i) + Load::make(C, i), i));
  auto target = tessel::codegen::Target::host();
  auto jit = JitModule::compile({"fma_loop", {A, B, C}, body}, target);
  std::string ir = jit->llvm_ir(), as = jit->assembly();
  REQUIRE(ir.find("define") != std::string::npos);
  REQUIRE(ir.find("fma_loop_packed") != std::string::npos);
  REQUIRE(ir.find("noalias") != std::string::npos);
  REQUIRE(!as.empty());
  if (target.has_feature("fma") && target.has_feature("avx2")) {
    REQUIRE(as.find("vfmadd") != std::string::npos);
    // vectorized by LLVM: 8 lanes on AVX2, 16 where the CPU prefers 512-bit vectors (Zen 4/5)
    REQUIRE((ir.find("<8 x float>") != std::string::npos || ir.find("<16 x float>") != std::string::npos));
  }
  NDArray a = random_array(n, "float32", -1, 1, 11), b = random_array(n, "float32", -1, 1, 12),
          c = random_array(n, "float32", -1, 1, 13);
  NDArray c0 = c.copy();
  std::vector<void*> args{a.data(), b.data(), c.data()};
  REQUIRE(jit->call_packed(args.data()) == 0);
  for (int k = 0; k < n; ++k) {
    float ref = std::fma(a.data_as<float>()[k], b.data_as<float>()[k], c0.data_as<float>()[k]);
    REQUIRE(c.data_as<float>()[k] == Approx(ref).margin(1e-6));
  }
}

TEST_CASE("codegen: malformed input gives InternalError", "[codegen]") {
  auto A = buf1("A", DataType::float32(), 8), B = buf1("B", DataType::float32(), 8);
  Var i("i"), free_var("free_var");
  REQUIRE_THROWS_AS(JitModule::compile({"unbound", {A}, Store::make(A, f32(1), free_var)}), tessel::InternalError);
  Stmt bl = loop(i, 8, Store::make(A, BufferLoad::make(B, {i}), i));
  REQUIRE_THROWS_AS(JitModule::compile({"bufload", {A, B}, bl}), tessel::InternalError);
  Stmt unknown = loop(i, 8, Store::make(A, Load::make(B, i), i));  // B is not a parameter
  REQUIRE_THROWS_AS(JitModule::compile({"unknown_buf", {A}, unknown}), tessel::InternalError);
  REQUIRE_THROWS_AS(JitModule::compile({"bad name", {A}, Store::make(A, f32(1), i32(0))}), tessel::UserError);
}

TEST_CASE("codegen: Target host, printing and parsing", "[codegen]") {
  using tessel::codegen::Target;
  Target h = Target::host();
  INFO(h.to_string());
  REQUIRE(!h.triple.empty());
  REQUIRE(h.to_string().rfind("llvm -mtriple=", 0) == 0);
  REQUIRE(Target::parse(h.to_string()) == h);
  REQUIRE(Target::parse("host") == h);
  REQUIRE(h.vector_bytes() >= 16);
  if (h.has_feature("avx2") && !h.has_feature("avx512f")) REQUIRE(h.vector_bytes() == 32);
  if (h.has_feature("avx512f")) REQUIRE(h.vector_bytes() == 64);
  Target t = Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512");
  REQUIRE(t.vector_bytes() == 64);
  REQUIRE(Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f").vector_bytes() == 32);
  REQUIRE(Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64").vector_bytes() == 16);
  REQUIRE_THROWS_AS(Target::parse("llvm -mfoo=bar"), tessel::UserError);
}
