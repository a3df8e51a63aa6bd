// eval_interval, constant bounds and can_prove.
#include <catch2/catch.hpp>
#include <sstream>

#include "tessel/ir/interval.h"
#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"

using namespace tessel::ir;

namespace {
Interval range(int lo, int hi) { return {Expr(lo), Expr(hi)}; }
std::string I(const Expr& e, const VarRanges& r) {
  Interval iv = eval_interval(e, r);
  std::ostringstream os;
  os << "[" << (iv.min.defined() ? to_string(iv.min) : "-inf") << ", "
     << (iv.max.defined() ? to_string(iv.max) : "+inf") << "]";
  return os.str();
}
}  // namespace

TEST_CASE("interval: helpers", "[interval]") {
  Var x("x");
  CHECK(Interval::single_point(x).is_single_point());
  CHECK(Interval::everything().is_everything());
  CHECK(range(0, 3).is_const());
  CHECK_FALSE(Interval{Expr(0), x}.is_const());
  CHECK_FALSE(Interval{Expr(0), Expr()}.has_upper_bound());
}

TEST_CASE("interval: arithmetic over ranged and symbolic variables", "[interval]") {
  Var x("x"), y("y"), z("z");
  // The consumer's footprint for one iteration of the outer (symbolic) loop x.
  VarRanges yz{{y.get(), range(0, 31)}, {z.get(), range(0, 2)}};
  CHECK(I(x * 32 + y + z, yz) == "[(x * 32), ((x * 32) + 33)]");
  CHECK(I(x, yz) == "[x, x]");
  CHECK(I(y - z, yz) == "[-2, 31]");
  CHECK(I(y * -2, yz) == "[-62, 0]");
  CHECK(I(y * z, yz) == "[0, 62]");
  CHECK(I(y / 4, yz) == "[0, 7]");
  CHECK(I(y / -4, yz) == "[-8, 0]");
  CHECK(I(y % 8, yz) == "[0, 7]");
  CHECK(I(x % 8, yz) == "[(x % 8), (x % 8)]");  // no ranged variable: a single (symbolic) point
  CHECK(I((x * 32 + y) % 32, yz) == "[0, 31]");
  CHECK(I((x * 32 + y) / 8, yz) == "[(x * 4), ((x * 4) + 3)]");
  CHECK(I((y + 3) % 64, yz) == "[3, 34]");
  CHECK(I(min(y, 10), yz) == "[0, 10]");
  CHECK(I(max(y, x), yz) == "[max(x, 0), max(x, 31)]");
  CHECK(I(min(y, x), yz) == "[min(x, 0), min(x, 31)]");
  CHECK(I(select(x < 0, y, z + 40), yz) == "[0, 42]");
  CHECK(I(cast(DataType::int64(), y), yz) == "[0_int64, 31_int64]");
  CHECK(I(Ramp::make(y * 8, 1, 8), yz) == "[0, 255]");
  CHECK(I(Ramp::make(y, -1, 4), yz) == "[-3, 31]");
  CHECK(I(Broadcast::make(z, 4), yz) == "[0, 2]");
  CHECK(I(y * x, yz) == "[-inf, +inf]");
}

TEST_CASE("interval: ranges that refer to other variables", "[interval]") {
  Var x("x"), y("y");
  VarRanges sym{{y.get(), Interval{x * 4, x * 4 + 3}}};
  CHECK(I(y, sym) == "[(x * 4), ((x * 4) + 3)]");
  CHECK(I(y - x * 4, sym) == "[0, 3]");
  VarRanges both = sym;
  both[x.get()] = range(0, 7);
  CHECK(I(y, both) == "[0, 31]");
  VarRanges half{{x.get(), Interval{Expr(0), Expr()}}};
  CHECK(I(x + 1, half) == "[1, +inf]");
}

TEST_CASE("interval: constant bounds", "[interval]") {
  Var x("x"), y("y");
  VarRanges r{{x.get(), range(0, 7)}, {y.get(), range(0, 7)}};
  CHECK(const_upper_bound(x * 8 + y, r) == 63);
  CHECK(const_lower_bound(x * 8 + y, r) == 0);
  CHECK(const_upper_bound(x * 8 - y * 8 + y, r) == 56);
  CHECK_FALSE(const_upper_bound(x * 8 + Var("free"), r).has_value());
  CHECK(const_upper_bound(Var("free") % 16) == 15);
  VarRanges sym{{y.get(), Interval{x * 4, x * 4 + 3}}};
  CHECK(const_upper_bound(y - x * 4, sym) == 3);
}

TEST_CASE("interval: can_prove", "[interval]") {
  Var x("x"), y("y"), n("n");
  VarRanges r{{x.get(), range(0, 7)}, {y.get(), range(0, 7)}};
  CHECK(can_prove(x * 8 + y < 64, r));
  CHECK_FALSE(can_prove(x * 8 + y < 63, r));
  CHECK(can_prove(x * 8 + y <= 63, r));
  CHECK(can_prove(ne(x * 8 + y, 64), r));
  CHECK_FALSE(can_prove(eq(x, y), r));
  CHECK(can_prove(x >= 0 && y < 8, r));
  CHECK(can_prove(x < 0 || y < 8, r));
  CHECK(can_prove(!(x < 0), r));
  CHECK_FALSE(can_prove(x < n, r));
  CHECK(can_prove(x * 4 + 3 < x * 4 + 5));
  VarRanges sym{{y.get(), Interval{x * 4, x * 4 + 3}}};
  CHECK(can_prove(y < x * 4 + 4, sym));
  CHECK_FALSE(can_prove(y < x * 4 + 3, sym));
}
