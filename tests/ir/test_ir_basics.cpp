// IR basics the simplifier builds on: printing, structural equality/hash, construction checks.
#include <catch2/catch.hpp>

#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/ir/structural.h"
#include "tessel/support/error.h"

using namespace tessel::ir;

namespace {
Stmt copy_loop(const Buffer& dst, const Buffer& src, const Var& i) {
  return For::make(i, 0, 16, ForKind::kSerial, Store::make(dst, Load::make(src, i) * 2.0f, i));
}
}  // namespace

TEST_CASE("ir: printer", "[ir]") {
  Var x("x"), y("y");
  CHECK(to_string(x * 2 + 1) == "((x * 2) + 1)");
  CHECK(to_string(min(x, y) / 4 % 3) == "((min(x, y) / 4) % 3)");
  CHECK(to_string(select(x < y, x, y)) == "select((x < y), x, y)");
  CHECK(to_string(Expr(int64_t(5))) == "5_int64");
  CHECK(to_string(Expr(2.5f)) == "2.5");
  CHECK(to_string(Ramp::make(x, 1, 4)) == "ramp(x, 1, 4)");
  Buffer a = make_buffer("A", DataType::float32(), {Expr(16)});
  Buffer b = make_buffer("B", DataType::float32(), {Expr(16)});
  CHECK(to_string(copy_loop(a, b, Var("i"))) == "for (i, 0, 16) {\n  A[i] = (B[i] * 2.0)\n}\n");
}

TEST_CASE("ir: structural equality and hash of alpha-equivalent loops", "[ir]") {
  Buffer a = make_buffer("A", DataType::float32(), {Expr(16)});
  Buffer b = make_buffer("B", DataType::float32(), {Expr(16)});
  Stmt s1 = copy_loop(a, b, Var("i")), s2 = copy_loop(a, b, Var("j"));
  CHECK(structural_equal(s1, s2));
  CHECK(structural_hash(s1) == structural_hash(s2));
  Stmt s3 = For::make(Var("i"), 0, 8, ForKind::kSerial, Store::make(a, Expr(1.0f), Expr(0)));
  CHECK_FALSE(structural_equal(s1, s3));
  // Free variables are compared by identity, not by name.
  Var x("x"), x2("x");
  CHECK(structural_equal(x + 1, x + 1));
  CHECK_FALSE(structural_equal(x + 1, x2 + 1));
}

TEST_CASE("ir: construction checks throw", "[ir]") {
  Var i("i"), f("f", DataType::float32());
  CHECK_THROWS_AS(Add::make(f, i), tessel::UserError);
  CHECK_THROWS_AS(f + i, tessel::UserError);
  CHECK_THROWS_AS(Select::make(i, i, i), tessel::UserError);
  CHECK_THROWS_AS(And::make(i, i), tessel::UserError);
  CHECK_THROWS_AS(For::make(i, Expr(int64_t(0)), 4, ForKind::kSerial, Evaluate::make(i)), tessel::InternalError);
  CHECK_THROWS_AS(Ramp::make(i, 1, 1), tessel::InternalError);
  Buffer a = make_buffer("A", DataType::float32(), {Expr(16)});
  CHECK_THROWS_AS(Load::make(a, f), tessel::InternalError);
  CHECK_THROWS_AS(Store::make(a, i, i), tessel::InternalError);
  CHECK_THROWS_AS(make_buffer("B", DataType::float32(), {Expr(0)}), tessel::UserError);
}

TEST_CASE("ir: substitute and mutators keep unchanged nodes", "[ir]") {
  Var x("x"), y("y");
  Expr e = x * 2 + y;
  CHECK(to_string(substitute(e, {{x.get(), y + 1}})) == "(((y + 1) * 2) + y)");
  CHECK(substitute(e, {{Var("z").get(), y}}).same_as(e));
}
