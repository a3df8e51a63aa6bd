// Before/after tests for each simplifier rule (expressions and statements).
#include <catch2/catch.hpp>
#include <climits>

#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/ir/simplify.h"
#include "tessel/ir/structural.h"

using namespace tessel::ir;

namespace {
std::string S(const Expr& e, const VarRanges& r = {}) { return to_string(simplify(e, r)); }
std::string S(const Stmt& s, const VarRanges& r = {}) { return to_string(simplify(s, r)); }
Interval range(int lo, int hi) { return {Expr(lo), Expr(hi)}; }
Expr bcast(Expr v, int lanes) { return Broadcast::make(std::move(v), lanes); }
}  // namespace

TEST_CASE("simplify: integer constant folding uses floor division and wraps", "[simplify]") {
  CHECK(S(Expr(-7) / Expr(2)) == "-4");
  CHECK(S(Expr(-7) % Expr(2)) == "1");
  CHECK(S(Expr(7) / Expr(-2)) == "-4");
  CHECK(S(Expr(7) % Expr(-2)) == "-1");
  CHECK(S(Expr(INT_MAX) + Expr(1)) == "-2147483648");
  CHECK(S(IntImm::make(DataType::int8(), 100) + IntImm::make(DataType::int8(), 100)) == "-56_int8");
  CHECK(S(Expr(int64_t(1) << 40) * Expr(int64_t(4))) == "4398046511104_int64");
  CHECK(S(Expr(3) < Expr(4)) == "true");
  CHECK(S(eq(Expr(3), Expr(4))) == "false");
  CHECK(S(min(Expr(3), Expr(5)) + max(Expr(3), Expr(5))) == "8");
  CHECK(S((Expr(1) < Expr(2)) && !(Expr(2) <= Expr(1))) == "true");
  Var x("x");
  CHECK(S(x / 0) == "(x / 0)");  // undefined: left alone
  CHECK(S(Expr(4) / Expr(0)) == "(4 / 0)");
}

TEST_CASE("simplify: floats fold only exactly and never reassociate", "[simplify]") {
  Var f("f", DataType::float32());
  CHECK(S(Expr(1.5f) + Expr(2.25f)) == "3.75");
  CHECK(S(Expr(1.0f) / Expr(3.0f)) == to_string(FloatImm::make(DataType::float32(), 1.0f / 3.0f)));
  CHECK(S(f + 0.0f) == "(f + 0.0)");  // -0.0 + 0.0 is +0.0
  CHECK(S(f * 1.0f) == "(f * 1.0)");
  CHECK(S((f + 1.0f) - 1.0f) == "((f + 1.0) - 1.0)");
  CHECK(S(f - f) == "(f - f)");  // NaN - NaN is NaN
  CHECK(S(min(f, f)) == "f");
  CHECK(S(Expr(1.0f) < Expr(2.0f)) == "true");
  CHECK(S(cast(DataType::float32(), Expr(3))) == "3.0");
  CHECK(S(cast(DataType::int32(), Expr(2.7f))) == "2");
  CHECK(S(cast(DataType::int32(), Expr(-2.7f))) == "-2");
  CHECK(S(cast(DataType::int8(), Expr(300))) == "44_int8");
  CHECK(S(select(Expr(1) < Expr(2), f, f * 2.0f)) == "f");
}

TEST_CASE("simplify: canonical linear form", "[simplify]") {
  Var x("x"), y("y");
  CHECK(S((x * 4 + 2) - x * 4) == "2");
  CHECK(S(x * 8 + y - x * 8) == "y");
  CHECK(S((x + 3) * 4) == "((x * 4) + 12)");
  CHECK(S(x + x) == "(x * 2)");
  CHECK(S(x - x) == "0");
  CHECK(S((x + y) - (y + x)) == "0");
  CHECK(S((x - y) * 2 + y) == "((x * 2) - y)");
  CHECK(S(Expr(3) - y) == "(3 - y)");
  CHECK(S(Expr(0) - y - 3) == "((y * -1) - 3)");
  CHECK(S(x * 0 + y * 1) == "y");
  CHECK(S((x * y) * 2 - y * x * 2) == "(((x * y) * 2) - ((y * x) * 2))");  // atoms are not reordered
  CHECK(S((x * y) * 2 - (x * y)) == "(x * y)");
  CHECK(S(x / 8 * 8 + x % 8) == "x");
  CHECK(S((x + 1) / 4 * 8 + (x + 1) % 4 * 2) == "((x * 2) + 2)");
  // Already canonical: the same node comes back.
  Expr e = x * 4 + y;
  CHECK(simplify(e).same_as(e));
}

TEST_CASE("simplify: Div and Mod by constants with ranges", "[simplify]") {
  Var x("x"), y("y"), i("i"), j("j");
  VarRanges r{{y.get(), range(0, 7)}};
  CHECK(S((x * 8 + y) / 8, r) == "x");
  CHECK(S((x * 8 + y) % 8, r) == "y");
  CHECK(S((x * 8 + y) / 8) == "(x + (y / 8))");
  CHECK(S((x * 8 + y) % 8) == "(y % 8)");
  CHECK(S((x * 16) / 8) == "(x * 2)");
  CHECK(S((x * 16) % 8) == "0");
  CHECK(S(y % 8, r) == "y");
  CHECK(S(y / 8, r) == "0");
  CHECK(S((y + 8) / 8, r) == "1");
  CHECK(S((x / 4) / 2) == "(x / 8)");
  CHECK(S(x / 1) == "x");
  CHECK(S(x % 1) == "0");
  CHECK(S((x * 8 + 17) / 8) == "(x + 2)");
  CHECK(S((x * 8 + 17) % 8) == "1");
  CHECK(S((x + 9) / 8) == "(((x + 1) / 8) + 1)");
  CHECK(S((x + 9) % 8) == "((x + 1) % 8)");
  CHECK(S((x * 4 + 2) / 8) == "(((x * 2) + 1) / 4)");
  CHECK(S((x * 6 + 3) / 4) == "(((x * 6) + 3) / 4)");
  CHECK(S((x % 16) % 8) == "(x % 8)");
  CHECK(S(x / -2) == "(x / -2)");
  CHECK(S((x - 1) % 8, {{x.get(), range(1, 8)}}) == "(x - 1)");
  CHECK(S((x - 8) / 8, {{x.get(), range(1, 7)}}) == "-1");
  // Fused loop index i*16 + j.
  VarRanges f{{i.get(), range(0, 3)}, {j.get(), range(0, 15)}};
  CHECK(S((i * 16 + j) / 16, f) == "i");
  CHECK(S((i * 16 + j) % 16, f) == "j");
  CHECK(S((i * 16 + j) / 4 % 4, f) == "(j / 4)");
  CHECK(S((i * 16 + j) / 4 / 4, f) == "i");
}

TEST_CASE("simplify: Min and Max", "[simplify]") {
  Var x("x"), y("y");
  VarRanges r{{x.get(), range(0, 7)}};
  CHECK(S(min(x, x)) == "x");
  CHECK(S(min(x + 3, x + 5)) == "(x + 3)");
  CHECK(S(max(x + 3, x + 5)) == "(x + 5)");
  CHECK(S(min(x, 10), r) == "x");
  CHECK(S(max(x, 10), r) == "10");
  CHECK(S(min(x, 5), r) == "min(x, 5)");
  CHECK(S(min(3, y)) == "min(y, 3)");
  CHECK(S(min(min(y, 5), 3)) == "min(y, 3)");
  CHECK(S(max(max(y, 5), 3)) == "max(y, 5)");
  CHECK(S(max(min(y, 3), 5)) == "5");
}

TEST_CASE("simplify: comparisons", "[simplify]") {
  Var x("x"), y("y"), z("z");
  VarRanges r{{x.get(), range(0, 63)}};
  CHECK(S(x < 64, r) == "true");
  CHECK(S(x < 63, r) == "(x < 63)");
  CHECK(S(x >= 0, r) == "true");
  CHECK(S(x * 4 + 3 < x * 4 + 5) == "true");
  CHECK(S(x * 4 + 3 <= x * 4 + 2) == "false");
  CHECK(S(x + 1 < 5) == "(x < 4)");
  CHECK(S(Expr(5) < z + 3) == "(2 < z)");
  CHECK(S(x * 4 < 10) == "(x < 3)");
  CHECK(S(x * 4 <= 10) == "(x <= 2)");
  CHECK(S(eq(x * 2, 3)) == "false");
  CHECK(S(ne(x * 2, 3)) == "true");
  CHECK(S(eq(x * 2, 4)) == "(x == 2)");
  CHECK(S(x < y) == "(x < y)");
  CHECK(S(x + 1 < y) == "(x < (y - 1))");
  CHECK(S(!(x < y)) == "(y <= x)");
  CHECK(S(!(x <= y)) == "(y < x)");
  CHECK(S(!eq(x, y)) == "(x != y)");
  VarRanges xy{{x.get(), range(0, 7)}, {y.get(), range(0, 7)}};
  CHECK(S(x * 8 + y < 64, xy) == "true");
  CHECK(S(x * 8 + y < 63, xy) == "(((x * 8) + y) < 63)");
  CHECK(S(eq(x * 8 + y, 100), xy) == "false");
}

TEST_CASE("simplify: logic and select", "[simplify]") {
  Var x("x"), y("y");
  Expr c = x < y;
  VarRanges r{{x.get(), range(0, 63)}};
  CHECK(S(c && (Expr(1) < Expr(2))) == "(x < y)");
  CHECK(S(c || (Expr(1) < Expr(2))) == "true");
  CHECK(S(c && (Expr(2) < Expr(1))) == "false");
  CHECK(S(c && c) == "(x < y)");
  CHECK(S(!!c) == "(x < y)");
  CHECK(S(select(x < 64, x, y), r) == "x");
  CHECK(S(select(x < 0, x, y), r) == "y");
  CHECK(S(select(c, x + 1, 1 + x)) == "(x + 1)");
  CHECK(S(select(c, x, y)) == "select((x < y), x, y)");
  CHECK(S(if_then_else(x < 64, x * 2, y), r) == "(x * 2)");
  Var f("f", DataType::float32());
  CHECK(S(!(f < 1.0f)) == "!(f < 1.0)");  // not (f >= 1) for NaN
}

TEST_CASE("simplify: Ramp and Broadcast", "[simplify]") {
  Var x("x"), y("y");
  CHECK(S(bcast(x, 4) + bcast(y, 4)) == "x4((x + y))");
  CHECK(S(bcast(x * 2, 4) + bcast(x, 4)) == "x4((x * 3))");
  CHECK(S(Ramp::make(x, 1, 4) + bcast(y, 4)) == "ramp((x + y), 1, 4)");
  CHECK(S(bcast(y, 4) + Ramp::make(x, 1, 4)) == "ramp((y + x), 1, 4)");
  CHECK(S(Ramp::make(x, 1, 4) - bcast(x, 4)) == "ramp(0, 1, 4)");
  CHECK(S(Ramp::make(x, 2, 4) * bcast(Expr(3), 4)) == "ramp((x * 3), 6, 4)");
  CHECK(S(Ramp::make(x, 1, 4) + Ramp::make(y, 2, 4)) == "ramp((x + y), 3, 4)");
  CHECK(S(Ramp::make(x, 1, 4) - Ramp::make(x, 1, 4)) == "x4(0)");
  CHECK(S(Ramp::make(x, Expr(1) - 1, 4)) == "x4(x)");
  CHECK(S(Ramp::make(x * 8, 1, 8) / bcast(Expr(8), 8)) == "x8(x)");
  CHECK(S(Ramp::make(x * 8, 1, 8) % bcast(Expr(8), 8)) == "ramp(0, 1, 8)");
  CHECK(S(Ramp::make(x * 8, 16, 4) / bcast(Expr(8), 4)) == "ramp(x, 2, 4)");
  CHECK(S(Ramp::make(x * 8 + 4, 1, 8) / bcast(Expr(8), 8)) == "(ramp(((x * 8) + 4), 1, 8) / x8(8))");
  // The index of a vectorized inner loop: (i*16 + j*8 + lanes) / 8 with j in [0, 1].
  Var i("i"), j("j");
  VarRanges r{{j.get(), range(0, 1)}};
  CHECK(S(Ramp::make(i * 16 + j * 8, 1, 8) / bcast(Expr(8), 8), r) == "x8(((i * 2) + j))");
  CHECK(S(Ramp::make(i * 16 + j * 8, 1, 8) % bcast(Expr(8), 8), r) == "ramp(0, 1, 8)");
  CHECK(S(min(Ramp::make(x, 1, 4), bcast(x + 8, 4)), {{x.get(), range(0, 4)}}) == "ramp(x, 1, 4)");
  CHECK(S(Ramp::make(x, 1, 4) < bcast(Expr(8), 4), {{x.get(), range(0, 4)}}) == "x4(true)");
}

TEST_CASE("simplify: loops get their variable range and proven guards disappear", "[simplify][stmt]") {
  Buffer a = make_buffer("A", DataType::float32(), {Expr(128)});
  Var xo("x.o"), xi("x.i");
  auto nest = [&](int bound) {
    Expr idx = xo * 16 + xi;
    Stmt store = Store::make(a, Expr(1.0f), idx);
    return For::make(xo, 0, 8, ForKind::kSerial,
                     For::make(xi, 0, 16, ForKind::kSerial, IfThenElse::make(idx < bound, store)));
  };
  CHECK(S(nest(128)) ==
        "for (x.o, 0, 8) {\n"
        "  for (x.i, 0, 16) {\n"
        "    A[((x.o * 16) + x.i)] = 1.0\n"
        "  }\n"
        "}\n");
  CHECK(S(nest(100)) ==
        "for (x.o, 0, 8) {\n"
        "  for (x.i, 0, 16) {\n"
        "    if ((((x.o * 16) + x.i) < 100)) {\n"
        "      A[((x.o * 16) + x.i)] = 1.0\n"
        "    }\n"
        "  }\n"
        "}\n");
  // An unchanged statement is returned as the same node.
  Stmt s = simplify(nest(100));
  CHECK(simplify(s).same_as(s));
}

TEST_CASE("simplify: trivial loops, lets, sequences", "[simplify][stmt]") {
  Buffer a = make_buffer("A", DataType::int32(), {Expr(64)});
  Var i("i"), j("j"), t("t");
  // Extent 1: the body with i = 3.
  CHECK(S(For::make(i, 3, 1, ForKind::kSerial, Store::make(a, i * 2, i + 1))) == "A[4] = 6\n");
  // Extent 0 (or provably <= 0): nothing.
  CHECK(S(For::make(i, 0, 0, ForKind::kSerial, Store::make(a, i, i))) == "0\n");
  CHECK(S(For::make(i, 0, j - j, ForKind::kSerial, Store::make(a, i, i))) == "0\n");
  // Lets of constants and variables are substituted; others stay and give the body a range.
  CHECK(S(LetStmt::make(t, Expr(5), Store::make(a, t, t * 2))) == "A[10] = 5\n");
  CHECK(S(LetStmt::make(t, j, Store::make(a, t, t))) == "A[j] = j\n");
  CHECK(S(LetStmt::make(t, j * 4, Store::make(a, t, t + 1))) == "let t = (j * 4)\nA[(t + 1)] = t\n");
  CHECK(S(LetStmt::make(t, j * 4, Store::make(a, j, j))) == "A[j] = j\n");
  CHECK(S(Expr(Let::make(t, Expr(2), t * j + t))) == "((j * 2) + 2)");
  // Seq: false guards vanish, nested sequences flatten.
  Stmt s1 = Store::make(a, Expr(1), Expr(0));
  Stmt s2 = IfThenElse::make(Expr(1) < Expr(0), Store::make(a, Expr(2), Expr(1)));
  Stmt s3 = Seq::make({Store::make(a, Expr(3), Expr(2) + Expr(1)), Evaluate::make(Expr(0))});
  CHECK(S(Stmt(std::make_shared<Seq>(std::vector<Stmt>{s1, s2, Stmt(std::make_shared<Seq>(std::vector<Stmt>{s3}))}))) ==
        "A[0] = 1\nA[3] = 3\n");
  // IfThenElse with a false condition keeps the else branch.
  CHECK(S(IfThenElse::make(Expr(1) < Expr(0), s1, Store::make(a, Expr(7), Expr(7)))) == "A[7] = 7\n");
  // Loads and stores inside loops see the loop ranges.
  Stmt copy =
      For::make(i, 0, 8, ForKind::kSerial,
                For::make(j, 0, 8, ForKind::kSerial, Store::make(a, Load::make(a, (i * 8 + j) % 8), (i * 8 + j) / 8)));
  CHECK(S(copy) == "for (i, 0, 8) {\n  for (j, 0, 8) {\n    A[i] = A[j]\n  }\n}\n");
}

TEST_CASE("simplify: symbolic loop bounds and outer ranges", "[simplify][stmt]") {
  Buffer a = make_buffer("A", DataType::int32(), {Expr(64)});
  Var n("n"), i("i");
  // i in [0, n-1]: i < n is proven, i < n - 1 is not.
  Stmt loop = For::make(i, 0, n, ForKind::kSerial,
                        Seq::make({IfThenElse::make(i < n, Store::make(a, i, i)),
                                   IfThenElse::make(i < n - 1, Store::make(a, i, i + 1))}));
  CHECK(S(loop, {{n.get(), range(1, 64)}}) ==
        "for (i, 0, n) {\n  A[i] = i\n  if ((i < (n - 1))) {\n    A[(i + 1)] = i\n  }\n}\n");
}
