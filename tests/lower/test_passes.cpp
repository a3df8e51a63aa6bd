// Lowering passes on small inputs, stated as before/after IR.
#include <catch2/catch.hpp>

#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/ir/simplify.h"
#include "tessel/lower/lower.h"
#include "tessel/lower/storage_flatten.h"
#include "tessel/lower/unroll_loops.h"
#include "tessel/lower/vectorize_loops.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::ir;

namespace {
bool contains(const std::string& s, const std::string& f) { return s.find(f) != std::string::npos; }
}  // namespace

TEST_CASE("vectorize_loops turns a contiguous loop into ramp loads and stores", "[lower]") {
  Buffer a = make_buffer("a", DataType::float32(), {Expr(64)});
  Buffer b = make_buffer("b", DataType::float32(), {Expr(64)});
  Var i("i"), j("j");
  Stmt body = Store::make(b, Load::make(a, i * 8 + j) * 2.0f, i * 8 + j);
  Stmt loop = For::make(i, 0, 8, ForKind::kSerial, For::make(j, 0, 8, ForKind::kVectorized, body));
  std::string out = to_string(simplify(lower::vectorize_loops(loop)));
  INFO(out);
  CHECK(contains(out, "b[ramp((i * 8), 1, 8)] = (a[ramp((i * 8), 1, 8)] * x8(2.0))"));
  CHECK_FALSE(contains(out, "vectorized"));
}

TEST_CASE("vectorize_loops: a guard becomes a lane predicate", "[lower]") {
  Buffer a = make_buffer("a", DataType::float32(), {Expr(10)});
  Var j("j");
  Stmt body = IfThenElse::make(j < 10, Store::make(a, Load::make(a, j) + 1.0f, j));
  std::string out = to_string(lower::vectorize_loops(For::make(j, 0, 16, ForKind::kVectorized, body)));
  INFO(out);
  CHECK(contains(out, "a[ramp(0, 1, 16)] = (a[ramp(0, 1, 16)] if (ramp(0, 1, 16) < x16(10)) + x16(1.0)) if "));
}

TEST_CASE("vectorize_loops falls back to a scalar loop for a store that ignores the lane", "[lower]") {
  Buffer a = make_buffer("a", DataType::float32(), {Expr(1)});
  Buffer x = make_buffer("x", DataType::float32(), {Expr(8)});
  Var j("j");
  Stmt body = Store::make(a, Load::make(a, 0) + Load::make(x, j), 0);
  std::string out = to_string(lower::vectorize_loops(For::make(j, 0, 8, ForKind::kVectorized, body)));
  CHECK(contains(out, "for (j, 0, 8)"));
}

TEST_CASE("unroll_loops copies bodies, auto-unroll respects the step limit", "[lower]") {
  Buffer a = make_buffer("a", DataType::float32(), {Expr(64)});
  Var i("i"), j("j");
  Stmt inner = For::make(j, 0, 4, ForKind::kSerial, Store::make(a, 1.0f, i * 4 + j));
  Stmt s = For::make(i, 0, 3, ForKind::kUnrolled, inner);
  std::string out = to_string(lower::unroll_loops(s));
  CHECK(contains(out, "for (j, 0, 4)"));
  CHECK(contains(out, "a[((2 * 4) + j)]"));
  CHECK_FALSE(contains(out, "unrolled"));
  Stmt auto_s = AttrStmt::make("pragma_auto_unroll_max_step", 16, For::make(i, 0, 3, ForKind::kSerial, inner));
  std::string out2 = to_string(lower::unroll_loops(auto_s));
  INFO(out2);
  CHECK_FALSE(contains(out2, "for ("));  // 3 * 4 = 12 steps <= 16
  Stmt auto_small = AttrStmt::make("pragma_auto_unroll_max_step", 8, For::make(i, 0, 3, ForKind::kSerial, inner));
  std::string out3 = to_string(lower::unroll_loops(auto_small));
  CHECK(contains(out3, "for (i, 0, 3)"));  // only the inner loop (4 steps) unrolls
  CHECK_FALSE(contains(out3, "for (j"));
}

TEST_CASE("storage_flatten uses padded strides from storage_align", "[lower]") {
  auto w = testing::matmul(8, 8, 8);
  schedule::Schedule s({w.args.back()});
  std::string bl = s.cache_read("B", "local", {"C"});
  s.storage_align(bl, 0, 16, 4);
  std::string out = to_string(lower::lower(s, w.args, "f"));
  INFO(out);
  CHECK(contains(out, "allocate B.local[float32 * 160]"));  // 8 rows of stride 20 (20 % 16 == 4)
}

TEST_CASE("lowering removes guards the simplifier can prove and keeps real tails", "[lower]") {
  auto w = testing::matmul(16, 20, 8);
  schedule::Schedule s({w.args.back()});
  s.split("C", "i", 4);  // divides: no guard
  s.split("C", "j", 8);  // 20 % 8 != 0: guard stays
  std::string out = to_string(lower::lower(s, w.args, "f"));
  INFO(out);
  CHECK(contains(out, "< 20"));
  CHECK_FALSE(contains(out, "< 16)"));
}

TEST_CASE("bound inference sizes a compute_at buffer to the consumer's tile", "[lower]") {
  auto c = testing::conv2d(2, 16, 16, 2, 3, 1);
  schedule::Schedule s({c.args.back()});
  auto t = s.tile("O", "j", "l", 4, 8);
  s.compute_at("Apad", "O", t[1]);
  std::string out = to_string(lower::lower(s, c.args, "f"));
  INFO(out);
  CHECK(contains(out, "allocate Apad[float32 * 120]"));  // 2 channels x (4+2) rows x (8+2) cols
}
