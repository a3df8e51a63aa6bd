// Symbolic interval arithmetic (eval_interval) and proofs (can_prove).
//
// eval_interval first simplifies e with the ranges (so like terms cancel), then walks it:
// a ranged variable becomes its range (itself evaluated, so ranges may refer to other ranged
// variables), an unranged one stays a single point, and each operator combines its operands'
// intervals. Bounds are built with light constant folding and simplified once at the end.
#include <algorithm>

#include "simplify_internal.h"
#include "tessel/ir/simplify.h"
#include "tessel/ir/structural.h"

namespace tessel::ir {

bool Interval::is_single_point() const {
  return min.defined() && max.defined() && (min.same_as(max) || structural_equal(min, max));
}
bool Interval::is_const() const { return min.as<IntImm>() && max.as<IntImm>(); }

namespace {

using detail::floor_div;

bool is_point(const Interval& i) { return i.min.defined() && i.min.same_as(i.max); }
const int64_t* imm(const Expr& e) {
  return e.defined() ? (e.as<IntImm>() ? &e.as<IntImm>()->value : nullptr) : nullptr;
}

/** a op b with constant folding of two IntImm (Add, Sub, Mul, Div, Min, Max). */
Expr fold(ExprKind k, const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return Expr();
  const int64_t *x = imm(a), *y = imm(b);
  DataType t = a.dtype();
  if (x && y) {
    switch (k) {
      case ExprKind::Add:
        return IntImm::make(t, *x + *y);
      case ExprKind::Sub:
        return IntImm::make(t, *x - *y);
      case ExprKind::Mul:
        return IntImm::make(t, *x * *y);
      case ExprKind::Div:
        if (*y != 0) return IntImm::make(t, floor_div(*x, *y));
        break;
      case ExprKind::Min:
        return IntImm::make(t, std::min(*x, *y));
      case ExprKind::Max:
        return IntImm::make(t, std::max(*x, *y));
      default:
        break;
    }
  }
  if (k == ExprKind::Add && y && *y == 0) return a;
  if (k == ExprKind::Add && x && *x == 0) return b;
  if (k == ExprKind::Sub && y && *y == 0) return a;
  if (k == ExprKind::Mul && y && *y == 1) return a;
  return detail::make_binary(k, a, b);
}

class IntervalEval {
 public:
  explicit IntervalEval(const VarRanges& r) : ranges_(r) {}

  Interval eval(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
        return Interval::single_point(e);
      case ExprKind::Var:
        return eval_var(e);
      case ExprKind::Add:
        return binary<Add>(e);
      case ExprKind::Sub:
        return binary<Sub>(e);
      case ExprKind::Mul:
        return binary<Mul>(e);
      case ExprKind::Div:
        return binary<Div>(e);
      case ExprKind::Mod:
        return binary<Mod>(e);
      case ExprKind::Min:
        return binary<Min>(e);
      case ExprKind::Max:
        return binary<Max>(e);
      case ExprKind::Select:
        return eval_select(e);
      case ExprKind::Cast:
        return eval_cast(e);
      case ExprKind::Broadcast:
        return eval(e.as<Broadcast>()->value);
      case ExprKind::Ramp:
        return eval_ramp(e);
      case ExprKind::Let: {
        auto* op = e.as<Let>();
        Interval v = eval(op->value);
        auto old = lets_.find(op->var.get());
        bool had = old != lets_.end();
        Interval saved = had ? old->second : Interval();
        lets_[op->var.get()] = v;
        Interval r = eval(op->body);
        if (had) {
          lets_[op->var.get()] = saved;
        } else {
          lets_.erase(op->var.get());
        }
        return r;
      }
      default:
        if (e.dtype().is_vector()) return Interval::everything();
        return uses_ranged(e) ? Interval::everything() : Interval::single_point(e);
    }
  }

 private:
  bool uses_ranged(const Expr& e) {
    return uses_var(e, [this](const VarNode* v) { return ranges_.count(v) || lets_.count(v); });
  }
  bool is_int(const Expr& e) { return e.dtype().is_int(); }
  /** Bounds of vector expressions are over their lanes: scalar expressions. */
  static bool lane_scalar(const Interval& i) {
    return (!i.min.defined() || i.min.dtype().is_scalar()) && (!i.max.defined() || i.max.dtype().is_scalar());
  }

  Interval eval_var(const Expr& e) {
    auto* v = e.as<VarNode>();
    if (auto it = lets_.find(v); it != lets_.end()) return it->second;
    auto it = ranges_.find(v);
    if (it == ranges_.end()) return Interval::single_point(e);
    if (depth_ > 16) return Interval::everything();
    ++depth_;
    Interval r;
    if (it->second.min.defined()) r.min = eval(it->second.min).min;
    if (it->second.max.defined()) r.max = eval(it->second.max).max;
    --depth_;
    if (r.min.defined() && r.max.defined() && r.min.same_as(r.max)) return Interval::single_point(r.min);
    return r;
  }

  template <class T>
  Interval binary(const Expr& e) {
    auto* op = e.as<T>();
    Interval a = eval(op->a), b = eval(op->b);
    if (!lane_scalar(a) || !lane_scalar(b)) return Interval::everything();
    if (is_point(a) && is_point(b)) {
      if (a.min.same_as(op->a) && b.min.same_as(op->b)) return Interval::single_point(e);
      return Interval::single_point(T::make(a.min, b.min));
    }
    if (!is_int(e)) return Interval::everything();
    constexpr ExprKind k = T::kKind;
    switch (k) {
      case ExprKind::Add:
        return {fold(k, a.min, b.min), fold(k, a.max, b.max)};
      case ExprKind::Sub:
        return {fold(k, a.min, b.max), fold(k, a.max, b.min)};
      case ExprKind::Mul:
        return mul(a, b);
      case ExprKind::Div:
        return div(a, b);
      case ExprKind::Mod:
        return mod(a, b);
      case ExprKind::Min:
        return {fold(k, a.min, b.min), !a.max.defined() ? b.max : !b.max.defined() ? a.max : fold(k, a.max, b.max)};
      case ExprKind::Max:
        return {!a.min.defined() ? b.min : !b.min.defined() ? a.min : fold(k, a.min, b.min), fold(k, a.max, b.max)};
      default:
        return Interval::everything();
    }
  }

  static Interval scale(const Interval& a, const Expr& c, int64_t v) {
    if (v == 0) return Interval::single_point(c);
    if (v > 0) return {fold(ExprKind::Mul, a.min, c), fold(ExprKind::Mul, a.max, c)};
    return {fold(ExprKind::Mul, a.max, c), fold(ExprKind::Mul, a.min, c)};
  }

  static Interval corners(ExprKind k, const Interval& a, const Interval& b) {
    int64_t xs[2] = {*imm(a.min), *imm(a.max)}, ys[2] = {*imm(b.min), *imm(b.max)};
    __int128 lo = 0, hi = 0;
    bool first = true;
    for (int64_t x : xs) {
      for (int64_t y : ys) {
        __int128 v = k == ExprKind::Mul ? __int128(x) * y : __int128(floor_div(x, y));
        lo = first ? v : std::min(lo, v);
        hi = first ? v : std::max(hi, v);
        first = false;
      }
    }
    DataType t = a.min.dtype();
    if (lo < detail::type_min(t) || hi > detail::type_max(t)) return Interval::everything();
    return {IntImm::make(t, int64_t(lo)), IntImm::make(t, int64_t(hi))};
  }

  static bool all_const(const Interval& a) { return imm(a.min) && imm(a.max); }

  Interval mul(const Interval& a, const Interval& b) {
    if (is_point(b) && imm(b.min)) return scale(a, b.min, *imm(b.min));
    if (is_point(a) && imm(a.min)) return scale(b, a.min, *imm(a.min));
    if (all_const(a) && all_const(b)) return corners(ExprKind::Mul, a, b);
    return Interval::everything();
  }

  Interval div(const Interval& a, const Interval& b) {
    if (is_point(b) && imm(b.min) && *imm(b.min) != 0) {
      int64_t c = *imm(b.min);
      if (c > 0) return {fold(ExprKind::Div, a.min, b.min), fold(ExprKind::Div, a.max, b.min)};
      return {fold(ExprKind::Div, a.max, b.min), fold(ExprKind::Div, a.min, b.min)};
    }
    if (all_const(a) && all_const(b) && (*imm(b.min) > 0 || *imm(b.max) < 0)) {
      if (*imm(a.min) == detail::type_min(a.min.dtype())) return Interval::everything();
      return corners(ExprKind::Div, a, b);
    }
    return Interval::everything();
  }

  Interval mod(const Interval& a, const Interval& b) {
    DataType t = b.min.defined() ? b.min.dtype() : b.max.defined() ? b.max.dtype() : DataType::int32();
    if (is_point(b) && imm(b.min)) {
      int64_t c = *imm(b.min);
      if (c > 0) {
        if (a.min.defined() && a.max.defined()) {
          Expr qlo = simplify(Div::make(a.min, b.min)), qhi = simplify(Div::make(a.max, b.min));
          if (structural_equal(qlo, qhi))  // one period: x % c is x - q*c, monotone
            return {simplify(Mod::make(a.min, b.min)), simplify(Mod::make(a.max, b.min))};
        }
        return {IntImm::make(t, 0), IntImm::make(t, c - 1)};
      }
      if (c < 0) return {IntImm::make(t, c + 1), IntImm::make(t, 0)};
      return Interval::everything();
    }
    if (imm(b.min) && *imm(b.min) > 0 && b.max.defined()) {
      return {IntImm::make(t, 0), fold(ExprKind::Sub, b.max, IntImm::make(t, 1))};
    }
    return Interval::everything();
  }

  Interval eval_select(const Expr& e) {
    auto* op = e.as<Select>();
    Interval c = eval(op->cond);
    if (is_point(c)) {
      if (auto* v = imm(c.min)) return eval(*v ? op->true_value : op->false_value);
    }
    if (e.dtype().is_vector()) return Interval::everything();
    Interval t = eval(op->true_value), f = eval(op->false_value);
    if (is_point(c) && is_point(t) && is_point(f)) {
      if (c.min.same_as(op->cond) && t.min.same_as(op->true_value) && f.min.same_as(op->false_value))
        return Interval::single_point(e);
      return Interval::single_point(Select::make(c.min, t.min, f.min));
    }
    if (!is_int(e) || !e.dtype().is_scalar()) return Interval::everything();
    return {fold(ExprKind::Min, t.min, f.min), fold(ExprKind::Max, t.max, f.max)};
  }

  Interval eval_cast(const Expr& e) {
    auto* op = e.as<Cast>();
    Interval v = eval(op->value);
    DataType t = e.dtype(), s = op->value.dtype();
    if (!lane_scalar(v)) return Interval::everything();
    if (is_point(v)) return Interval::single_point(v.min.same_as(op->value) ? e : Cast::make(t.element_of(), v.min));
    if (!t.is_int()) return Interval::everything();
    t = t.element_of();
    s = s.element_of();
    if (s.is_bool()) return {IntImm::make(t, 0), IntImm::make(t, 1)};
    if (s.is_int() && t.bits >= s.bits) {
      return {v.min.defined() ? Cast::make(t, v.min) : Expr(), v.max.defined() ? Cast::make(t, v.max) : Expr()};
    }
    if (s.is_int() && all_const(v) && *imm(v.min) >= detail::type_min(t) && *imm(v.max) <= detail::type_max(t)) {
      return {IntImm::make(t, *imm(v.min)), IntImm::make(t, *imm(v.max))};
    }
    return Interval::everything();
  }

  Interval eval_ramp(const Expr& e) {
    auto* op = e.as<Ramp>();
    Interval b = eval(op->base), s = eval(op->stride);
    if (!is_int(e)) return Interval::everything();
    DataType t = op->base.dtype();
    Expr n = IntImm::make(t, op->lanes - 1);
    if (is_point(s) && imm(s.min)) {
      Expr span = fold(ExprKind::Mul, s.min, n);
      if (*imm(s.min) >= 0) return {b.min, fold(ExprKind::Add, b.max, span)};
      return {fold(ExprKind::Add, b.min, span), b.max};
    }
    if (is_point(s)) {  // symbolic stride: the lanes lie between base and base + s*(lanes-1)
      Expr span = Mul::make(s.min, n);
      return {fold(ExprKind::Min, b.min, fold(ExprKind::Add, b.min, span)),
              fold(ExprKind::Max, b.max, fold(ExprKind::Add, b.max, span))};
    }
    return Interval::everything();
  }

  const VarRanges& ranges_;
  std::unordered_map<const VarNode*, Interval> lets_;
  int depth_ = 0;
};

bool prove(const Expr& c, const VarRanges& ranges) {
  if (auto* v = as_const_int(c)) return *v != 0;
  if (auto* op = c.as<And>()) return prove(op->a, ranges) && prove(op->b, ranges);
  if (auto* op = c.as<Or>()) return prove(op->a, ranges) || prove(op->b, ranges);
  auto diff = [&](const Expr& a, const Expr& b, Interval* out) {
    if (!a.dtype().is_int() || !a.dtype().is_scalar()) return false;
    *out = eval_interval(Sub::make(a, b), ranges);
    return true;
  };
  Interval d;
  const int64_t *lo = nullptr, *hi = nullptr;
  auto get = [&]() {
    lo = as_const_int(d.min);
    hi = as_const_int(d.max);
  };
  if (auto* op = c.as<LT>(); op && diff(op->a, op->b, &d)) return get(), hi && *hi < 0;
  if (auto* op = c.as<LE>(); op && diff(op->a, op->b, &d)) return get(), hi && *hi <= 0;
  if (auto* op = c.as<EQ>(); op && diff(op->a, op->b, &d)) return get(), lo && hi && *lo == 0 && *hi == 0;
  if (auto* op = c.as<NE>(); op && diff(op->a, op->b, &d)) return get(), (lo && *lo > 0) || (hi && *hi < 0);
  return false;
}

}  // namespace

Interval eval_interval(const Expr& e, const VarRanges& ranges) {
  if (!e.defined()) return Interval::everything();
  Expr s = simplify(e, ranges);
  IntervalEval ev(ranges);
  Interval r = ev.eval(s);
  if (is_point(r)) {
    Expr p = simplify(r.min, ranges);
    return Interval::single_point(p);
  }
  Interval out{r.min.defined() ? simplify(r.min, ranges) : Expr(), r.max.defined() ? simplify(r.max, ranges) : Expr()};
  // Fill an unknown side from constant bounds (x % y with y unranged is still >= min of the type).
  if (e.dtype().is_int() && e.dtype().is_scalar() && (!out.min.defined() || !out.max.defined())) {
    detail::Simplifier sim(ranges);
    detail::Bounds b = sim.bound_of(s);
    if (!out.min.defined() && b.has_lo()) out.min = IntImm::make(e.dtype(), b.lo);
    if (!out.max.defined() && b.has_hi()) out.max = IntImm::make(e.dtype(), b.hi);
  }
  return out;
}

bool can_prove(const Expr& cond, const VarRanges& ranges) {
  if (!cond.defined()) return false;
  return prove(simplify(cond, ranges), ranges);
}

}  // namespace tessel::ir
