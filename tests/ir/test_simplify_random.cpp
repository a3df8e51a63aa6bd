// Randomized soundness of simplify, eval_interval, const bounds and can_prove: random integer
// expressions over 2-4 variables with known ranges (some left unranged), checked on random points
// by a reference interpreter with floor Div/Mod. Seed: $TESSEL_TEST_SEED or fresh, printed on failure.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_map>

#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/ir/simplify.h"
#include "tessel/ir/structural.h"

using namespace tessel::ir;

namespace {

uint64_t test_seed() {
  if (const char* s = std::getenv("TESSEL_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

/** Reference interpreter: int64 arithmetic; flags values outside int32 and division by zero. */
struct Interp {
  const std::unordered_map<const VarNode*, int64_t>& env;
  bool overflow = false, div_zero = false;

  int64_t chk(int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX) overflow = true;
    return v;
  }
  int64_t eval(const Expr& e) {
    if (auto* i = e.as<IntImm>()) return i->value;
    if (auto* v = e.as<VarNode>()) {
      auto it = env.find(v);
      REQUIRE(it != env.end());
      return it->second;
    }
    if (auto* op = e.as<Add>()) return chk(eval(op->a) + eval(op->b));
    if (auto* op = e.as<Sub>()) return chk(eval(op->a) - eval(op->b));
    if (auto* op = e.as<Mul>()) return chk(eval(op->a) * eval(op->b));
    if (auto* op = e.as<Div>()) {
      int64_t a = eval(op->a), b = eval(op->b);
      if (b == 0) return div_zero = true, 0;
      return chk(fdiv(a, b));
    }
    if (auto* op = e.as<Mod>()) {
      int64_t a = eval(op->a), b = eval(op->b);
      if (b == 0) return div_zero = true, 0;
      return a - fdiv(a, b) * b;
    }
    if (auto* op = e.as<Min>()) return std::min(eval(op->a), eval(op->b));
    if (auto* op = e.as<Max>()) return std::max(eval(op->a), eval(op->b));
    if (auto* op = e.as<EQ>()) return eval(op->a) == eval(op->b);
    if (auto* op = e.as<NE>()) return eval(op->a) != eval(op->b);
    if (auto* op = e.as<LT>()) return eval(op->a) < eval(op->b);
    if (auto* op = e.as<LE>()) return eval(op->a) <= eval(op->b);
    if (auto* op = e.as<And>()) return eval(op->a) && eval(op->b);
    if (auto* op = e.as<Or>()) return eval(op->a) || eval(op->b);
    if (auto* op = e.as<Not>()) return !eval(op->a);
    if (auto* op = e.as<Select>()) {
      int64_t c = eval(op->cond), t = eval(op->true_value), f = eval(op->false_value);
      return c ? t : f;
    }
    FAIL("interpreter: unexpected node " << kind_name(e.kind()) << " in " << to_string(e));
    return 0;
  }
};

struct VarInfo {
  Var var;
  int64_t lo, hi;
  bool ranged;
};

class Gen {
 public:
  Gen(std::mt19937_64& rng, const std::vector<VarInfo>& vars) : rng_(rng), vars_(vars) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  Expr leaf() {
    if (uniform(0, 9) < 6) return vars_[size_t(uniform(0, int64_t(vars_.size()) - 1))].var;
    return Expr(int(uniform(-10, 10)));
  }
  Expr divisor() {
    static const int kDiv[] = {1, 2, 3, 4, 8, 16, 5, -3, -4};
    if (uniform(0, 9) == 0) return int_expr(1);  // any expression; division by zero samples are skipped
    return Expr(kDiv[uniform(0, 8)]);
  }
  Expr int_expr(int depth) {
    if (depth <= 0 || uniform(0, 9) < 2) return leaf();
    switch (uniform(0, 10)) {
      case 0:
      case 1:
        return int_expr(depth - 1) + int_expr(depth - 1);
      case 2:
        return int_expr(depth - 1) - int_expr(depth - 1);
      case 3:
        return int_expr(depth - 1) * Expr(int(uniform(-4, 8)));
      case 4:
        return uniform(0, 3) == 0 ? int_expr(depth - 1) * int_expr(depth - 1) : int_expr(depth - 1) * leaf();
      case 5:
        return int_expr(depth - 1) / divisor();
      case 6:
        return int_expr(depth - 1) % divisor();
      case 7:
        return min(int_expr(depth - 1), int_expr(depth - 1));
      case 8:
        return max(int_expr(depth - 1), int_expr(depth - 1));
      case 9:
        return select(bool_expr(depth - 1), int_expr(depth - 1), int_expr(depth - 1));
      default: {  // the split/fuse index shapes the simplifier is built for
        Expr c = Expr(int(uniform(1, 8)));
        Expr x = int_expr(depth - 1);
        return uniform(0, 1) ? (x * c + leaf()) / c : (x * c + leaf()) % c;
      }
    }
  }
  Expr bool_expr(int depth) {
    switch (uniform(0, 7)) {
      case 0:
        return int_expr(depth) < int_expr(depth);
      case 1:
        return int_expr(depth) <= int_expr(depth);
      case 2:
        return eq(int_expr(depth), int_expr(depth));
      case 3:
        return ne(int_expr(depth), int_expr(depth));
      case 4:
        return depth > 0 ? bool_expr(depth - 1) && bool_expr(depth - 1) : int_expr(0) < int_expr(0);
      case 5:
        return depth > 0 ? bool_expr(depth - 1) || bool_expr(depth - 1) : int_expr(0) <= int_expr(0);
      case 6:
        return depth > 0 ? !bool_expr(depth - 1) : !(int_expr(0) < int_expr(0));
      default:
        return int_expr(depth) < Expr(int(uniform(-20, 40)));
    }
  }

 private:
  std::mt19937_64& rng_;
  const std::vector<VarInfo>& vars_;
};

}  // namespace

TEST_CASE("simplify: random integer expressions keep their value", "[simplify][random]") {
  uint64_t seed = test_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };

  const int kExprs = 3000, kPoints = 24;
  int checked = 0, interval_checked = 0, proofs = 0;
  for (int n = 0; n < kExprs; ++n) {
    std::vector<VarInfo> vars;
    VarRanges ranges;
    int nv = int(uni(2, 4));
    static const char* kNames[] = {"x", "y", "z", "w"};
    for (int i = 0; i < nv; ++i) {
      int64_t lo = uni(-8, 8), hi = lo + uni(0, 24);
      bool ranged = uni(0, 3) != 0;
      if (!ranged) lo = -30, hi = 30;
      vars.push_back({Var(kNames[i]), lo, hi, ranged});
      if (ranged) ranges[vars.back().var.get()] = Interval{Expr(int(lo)), Expr(int(hi))};
    }
    std::ostringstream rs;
    for (auto& v : vars)
      rs << v.var.name() << (v.ranged ? " in [" : " free, sampled in [") << v.lo << ", " << v.hi << "] ";
    INFO("ranges: " << rs.str());
    Gen gen(rng, vars);
    bool is_bool = uni(0, 4) == 0;
    Expr e = is_bool ? gen.bool_expr(3) : gen.int_expr(int(uni(1, 5)));
    Expr s = simplify(e, ranges);
    INFO("expr #" << n << ": " << to_string(e) << "\n  simplified: " << to_string(s));
    REQUIRE(s.dtype() == e.dtype());
    Expr s2 = simplify(s, ranges);
    INFO("  simplified twice: " << to_string(s2));
    REQUIRE(structural_equal(s2, s));  // idempotent

    Interval iv;
    std::optional<int64_t> ub, lb;
    if (!is_bool) {
      iv = eval_interval(e, ranges);
      ub = const_upper_bound(e, ranges);
      lb = const_lower_bound(e, ranges);
    }
    bool proven = is_bool && can_prove(e, ranges);
    proofs += proven;
    INFO("  interval: [" << (iv.min.defined() ? to_string(iv.min) : "-inf") << ", "
                         << (iv.max.defined() ? to_string(iv.max) : "+inf") << "]");
    for (int p = 0; p < kPoints; ++p) {
      std::unordered_map<const VarNode*, int64_t> env;
      std::ostringstream point;
      for (auto& v : vars) {
        env[v.var.get()] = uni(v.lo, v.hi);
        point << v.var.name() << "=" << env[v.var.get()] << (v.ranged ? " " : "(free) ");
      }
      Interp a{env}, b{env};
      int64_t va = a.eval(e);
      if (a.overflow || a.div_zero) continue;
      int64_t vb = b.eval(s);
      INFO("  at " << point.str() << ": original " << va << ", simplified " << vb);
      REQUIRE_FALSE(b.div_zero);
      REQUIRE(va == vb);
      ++checked;
      if (proven) REQUIRE(va == 1);
      if (ub) REQUIRE(va <= *ub);
      if (lb) REQUIRE(va >= *lb);
      if (iv.min.defined()) {
        Interp c{env};
        int64_t lo = c.eval(iv.min);
        REQUIRE(lo <= va);
        ++interval_checked;
      }
      if (iv.max.defined()) {
        Interp c{env};
        int64_t hi = c.eval(iv.max);
        REQUIRE(va <= hi);
      }
    }
  }
  INFO("points checked: " << checked << ", interval checks: " << interval_checked << ", proofs: " << proofs);
  CHECK(checked > kExprs * kPoints / 4);
  CHECK(interval_checked > 0);
}
