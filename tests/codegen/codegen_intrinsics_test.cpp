// Each math intrinsic against std:: on random inputs, as scalars, 8-lane vectors, float64, float16.
#include <cmath>
#include <functional>

#include "tessel/runtime/ndarray.h"
#include "test_util.h"

using namespace tessel::test;

namespace {

struct Case {
  const char* name;
  std::function<Expr(Expr, Expr, Expr)> make;
  std::function<double(double, double, double)> ref;
  double lo, hi;  // input range of the first argument
};

std::vector<Case> cases() {
  return {
      {"exp", [](Expr a, Expr, Expr) { return exp(a); }, [](double a, double, double) { return std::exp(a); }, -10, 10},
      {"log", [](Expr a, Expr, Expr) { return log(a); }, [](double a, double, double) { return std::log(a); }, 0.01,
       100},
      {"sqrt", [](Expr a, Expr, Expr) { return sqrt(a); }, [](double a, double, double) { return std::sqrt(a); }, 0,
       100},
      {"tanh", [](Expr a, Expr, Expr) { return tanh(a); }, [](double a, double, double) { return std::tanh(a); }, -5,
       5},
      {"erf", [](Expr a, Expr, Expr) { return erf(a); }, [](double a, double, double) { return std::erf(a); }, -3, 3},
      {"sigmoid", [](Expr a, Expr, Expr) { return sigmoid(a); },
       [](double a, double, double) { return 1.0 / (1.0 + std::exp(-a)); }, -10, 10},
      {"pow", [](Expr a, Expr b, Expr) { return pow(a, b); }, [](double a, double b, double) { return std::pow(a, b); },
       0.1, 4},
      {"abs", [](Expr a, Expr, Expr) { return abs(a); }, [](double a, double, double) { return std::fabs(a); }, -5, 5},
      {"floor", [](Expr a, Expr, Expr) { return floor(a); }, [](double a, double, double) { return std::floor(a); }, -5,
       5},
      {"ceil", [](Expr a, Expr, Expr) { return ceil(a); }, [](double a, double, double) { return std::ceil(a); }, -5,
       5},
      {"fma", [](Expr a, Expr b, Expr c) { return fma(a, b, c); },
       [](double a, double b, double c) { return std::fma(a, b, c); }, -5, 5},
  };
}

void check_intrinsic(const Case& c, DataType t, int lanes, double rel_tol) {
  const int n = 64;
  std::string tn = t.to_string();
  auto A = buf1("A", t, n), B = buf1("B", t, n), C = buf1("C", t, n), O = buf1("O", t, n);
  Var io("io");
  Stmt body;
  if (lanes == 1) {
    body = loop(io, n, Store::make(O, c.make(Load::make(A, io), Load::make(B, io), Load::make(C, io)), io));
  } else {
    Expr idx = ramp(io * lanes, 1, lanes);
    body = loop(io, n / lanes, Store::make(O, c.make(Load::make(A, idx), Load::make(B, idx), Load::make(C, idx)), idx));
  }
  NDArray a = random_array(n, tn, c.lo, c.hi, 50), b = random_array(n, tn, -2, 2, 51),
          cc = random_array(n, tn, -2, 2, 52), o = poison_array(n, tn);
  REQUIRE(run({std::string("intrin_") + c.name + "_" + tn + "x" + std::to_string(lanes), {A, B, C, O}, body},
              {&a, &b, &cc, &o}) == 0);
  for (int k = 0; k < n; ++k) {
    double ref = c.ref(a.get(k), b.get(k), cc.get(k));
    if (t.bits == 16)
      ref = t.code == DataType::kBFloat
                ? tessel::runtime::bfloat16_to_float(tessel::runtime::float_to_bfloat16(float(ref)))
                : tessel::runtime::half_to_float(tessel::runtime::float_to_half(float(ref)));
    INFO(c.name << " on " << tn << " x" << lanes << ": inputs " << a.get(k) << ", " << b.get(k) << ", " << cc.get(k));
    REQUIRE(o.get(k) == Approx(ref).epsilon(rel_tol).margin(rel_tol));
  }
}

}  // namespace

TEST_CASE("codegen: math intrinsics match std::", "[codegen][intrinsics]") {
  for (const Case& c : cases()) {
    SECTION(c.name) {
      check_intrinsic(c, DataType::float32(), 1, 2e-6);
      check_intrinsic(c, DataType::float32(), 8, 2e-6);
      check_intrinsic(c, DataType::float64(), 1, 1e-14);
      check_intrinsic(c, DataType::float64(), 4, 1e-14);
      check_intrinsic(c, DataType::float16(), 8, 2e-3);
    }
  }
}

TEST_CASE("codegen: integer abs", "[codegen][intrinsics]") {
  const int n = 64;
  auto A = buf1("A", DataType::int32(), n), O = buf1("O", DataType::int32(), n);
  Var io("io");
  Expr idx = ramp(io * 8, 1, 8);
  Stmt body = loop(io, n / 8, Store::make(O, abs(Load::make(A, idx)), idx));
  NDArray a = random_array(n, "int32", -1000, 1000, 53), o = poison_array(n, "int32");
  REQUIRE(run({"iabs", {A, O}, body}, {&a, &o}) == 0);
  for (int k = 0; k < n; ++k) REQUIRE(o.data_as<int32_t>()[k] == std::abs(a.data_as<int32_t>()[k]));
}

TEST_CASE("codegen: prefetch is a no-op on values", "[codegen][intrinsics]") {
  const int n = 128;
  auto A = buf1("A", DataType::float32(), n), O = buf1("O", DataType::float32(), n);
  Var i("i");
  Stmt body = loop(i, n - 16,
                   Seq::make({Evaluate::make(Call::make(Intrinsic::kPrefetch, {Load::make(A, i + 16)})),
                              Store::make(O, Load::make(A, i), i)}));
  NDArray a = random_array(n, "float32", -1, 1, 54), o = poison_array(n, "float32");
  REQUIRE(run({"prefetch", {A, O}, body}, {&a, &o}) == 0);
  for (int k = 0; k < n - 16; ++k) REQUIRE(o.data_as<float>()[k] == a.data_as<float>()[k]);
}
