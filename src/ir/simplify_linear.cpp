// The canonical linear form of integer expressions and constant bounds.
//
//  - parse_linear / rebuild: sum(coeff * atom) + constant <-> a clean Add/Sub/Mul tree.
//  - Simplifier::linear_node: simplifies a whole Add/Sub/Mul tree in one pass: walks it top-down,
//    simplifies only the non-linear atoms, collects like terms, rebuilds. Linear in the tree size.
//  - Simplifier::bound_of: constant bounds by interval arithmetic over a simplified expression,
//    using the ranges of the variables in scope (memoized until the ranges change). A bound that
//    would leave the dtype's range (the value might wrap) becomes the full range, i.e. unknown.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "simplify_internal.h"
#include "tessel/ir/structural.h"
#include "tessel/support/error.h"

namespace tessel::ir::detail {

using i128 = __int128;

int64_t type_min(DataType t) {
  return t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1));
}
int64_t type_max(DataType t) {
  return t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1;
}

int64_t wrap_to(DataType t, int64_t v) {
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (!t.is_uint() && ((u >> (t.bits - 1)) & 1)) u |= ~mask;
  return int64_t(u);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

namespace {
int64_t mul_wrap(DataType t, int64_t a, int64_t b) { return wrap_to(t, int64_t(uint64_t(a) * uint64_t(b))); }
int64_t add_wrap(DataType t, int64_t a, int64_t b) { return wrap_to(t, int64_t(uint64_t(a) + uint64_t(b))); }

bool same_atom(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (a.kind() != b.kind() || a.kind() == ExprKind::Var) return false;
  return structural_equal(a, b);
}

// Bound arithmetic in 128 bits with infinities as sentinels (finite values are within int64, so
// finite sums and products never reach them).
constexpr i128 kInf = ~(i128(1) << 127);  // 2^127 - 1
i128 ext(int64_t v, bool lower) {
  if (lower && v == Bounds::kNegInf) return -kInf;
  if (!lower && v == Bounds::kPosInf) return kInf;
  return v;
}
i128 ext_add(i128 a, i128 b) {
  if (a == kInf || a == -kInf) return a;
  if (b == kInf || b == -kInf) return b;
  return a + b;
}
i128 ext_mul(i128 a, i128 b) {
  if (a == 0 || b == 0) return 0;
  bool inf = a == kInf || a == -kInf || b == kInf || b == -kInf;
  if (inf) return (a > 0) == (b > 0) ? kInf : -kInf;
  return a * b;
}
/** Bounds of dtype t from extended values; a finite side outside t's range means it may wrap. */
Bounds make_bounds(DataType t, i128 lo, i128 hi) {
  bool lo_ok = lo == -kInf || (lo >= type_min(t) && lo <= type_max(t));
  bool hi_ok = hi == kInf || (hi >= type_min(t) && hi <= type_max(t));
  if (!lo_ok || !hi_ok || lo == kInf || hi == -kInf) return Bounds::unbounded();
  Bounds b;
  b.lo = lo == -kInf ? Bounds::kNegInf : int64_t(lo);
  b.hi = hi == kInf ? Bounds::kPosInf : int64_t(hi);
  if (b.is_finite() && b.lo > b.hi) return Bounds::unbounded();
  return b;
}
Bounds add_bounds(DataType t, Bounds a, Bounds b) {
  return make_bounds(t, ext_add(ext(a.lo, true), ext(b.lo, true)), ext_add(ext(a.hi, false), ext(b.hi, false)));
}
Bounds neg_bounds(Bounds a) {
  Bounds r;
  r.lo = a.has_hi() ? -a.hi : Bounds::kNegInf;  // finite bounds are > INT64_MIN, so -hi is defined
  r.hi = a.has_lo() ? -a.lo : Bounds::kPosInf;
  return r;
}
Bounds mul_bounds(DataType t, Bounds a, Bounds b) {
  i128 xs[2] = {ext(a.lo, true), ext(a.hi, false)}, ys[2] = {ext(b.lo, true), ext(b.hi, false)};
  i128 lo = kInf, hi = -kInf;
  for (i128 x : xs) {
    for (i128 y : ys) {
      i128 v = ext_mul(x, y);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return make_bounds(t, lo, hi);
}
Bounds point(int64_t v) { return {v, v}; }
}  // namespace

void LinearForm::add_term(const Expr& atom, int64_t coeff) {
  coeff = wrap_to(dtype, coeff);
  if (coeff == 0) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (same_atom(terms[i].atom, atom)) {
      terms[i].coeff = add_wrap(dtype, terms[i].coeff, coeff);
      if (terms[i].coeff == 0) terms.erase(terms.begin() + long(i));
      return;
    }
  }
  terms.push_back({atom, coeff});
}

void LinearForm::add(const LinearForm& o, int64_t s) {
  for (auto& t : o.terms) add_term(t.atom, mul_wrap(dtype, t.coeff, s));
  constant = add_wrap(dtype, constant, mul_wrap(dtype, o.constant, s));
}

void LinearForm::scale(int64_t c) {
  if (wrap_to(dtype, c) == 0) {
    terms.clear();
    constant = 0;
    return;
  }
  std::vector<Term> out;
  for (auto& t : terms) {
    int64_t k = mul_wrap(dtype, t.coeff, c);
    if (k != 0) out.push_back({t.atom, k});
  }
  terms = std::move(out);
  constant = mul_wrap(dtype, constant, c);
}

namespace {
void parse_into(const Expr& e, int64_t s, LinearForm* f) {
  DataType t = f->dtype;
  if (auto* i = e.as<IntImm>()) {
    f->add_const(mul_wrap(t, i->value, s));
  } else if (auto* a = e.as<Add>()) {
    parse_into(a->a, s, f);
    parse_into(a->b, s, f);
  } else if (auto* b = e.as<Sub>()) {
    parse_into(b->a, s, f);
    parse_into(b->b, wrap_to(t, int64_t(0 - uint64_t(s))), f);
  } else if (auto* m = e.as<Mul>()) {
    if (auto* c = m->b.as<IntImm>()) return parse_into(m->a, mul_wrap(t, s, c->value), f);
    if (auto* c = m->a.as<IntImm>()) return parse_into(m->b, mul_wrap(t, s, c->value), f);
    f->add_term(e, s);
  } else {
    f->add_term(e, s);
  }
}
}  // namespace

LinearForm parse_linear(const Expr& e) {
  LinearForm f;
  f.dtype = e.dtype();
  parse_into(e, 1, &f);
  return f;
}

Expr rebuild(const LinearForm& f) {
  DataType t = f.dtype;
  auto term = [&](const Expr& atom, int64_t c) { return c == 1 ? atom : Mul::make(atom, IntImm::make(t, c)); };
  Expr res;
  for (auto& x : f.terms) {
    if (x.coeff > 0) res = res.defined() ? Add::make(res, term(x.atom, x.coeff)) : term(x.atom, x.coeff);
  }
  bool const_first = !res.defined() && f.constant > 0 && !f.terms.empty();
  if (const_first) res = IntImm::make(t, f.constant);  // 3 - y rather than y*-1 + 3
  for (auto& x : f.terms) {
    if (x.coeff > 0) continue;
    if (!res.defined()) {
      res = term(x.atom, x.coeff);
    } else if (x.coeff == type_min(t)) {
      res = Add::make(res, term(x.atom, x.coeff));
    } else {
      res = Sub::make(res, term(x.atom, -x.coeff));
    }
  }
  if (!res.defined()) return IntImm::make(t, f.constant);
  if (const_first) return res;
  if (f.constant > 0) return Add::make(res, IntImm::make(t, f.constant));
  if (f.constant < 0 && f.constant != type_min(t)) return Sub::make(res, IntImm::make(t, -f.constant));
  if (f.constant < 0) return Add::make(res, IntImm::make(t, f.constant));
  return res;
}

void merge_div_mod(LinearForm* f) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < f->terms.size() && !changed; ++i) {
      auto* mod = f->terms[i].atom.as<Mod>();
      const int64_t* c = mod ? as_const_int(mod->b) : nullptr;
      if (!c || *c <= 0 || !mod->b.as<IntImm>()) continue;
      int64_t m = f->terms[i].coeff;
      for (size_t j = 0; j < f->terms.size(); ++j) {
        auto* div = f->terms[j].atom.as<Div>();
        if (!div || f->terms[j].coeff != mul_wrap(f->dtype, m, *c)) continue;
        auto* dc = div->b.as<IntImm>();
        if (!dc || dc->value != *c || !structural_equal(div->a, mod->a)) continue;
        Expr x = mod->a;
        f->terms.erase(f->terms.begin() + long(std::max(i, j)));
        f->terms.erase(f->terms.begin() + long(std::min(i, j)));
        f->add(parse_linear(x), m);
        changed = true;
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Simplifier: linear trees and bounds.

void Simplifier::linearize_into(const Expr& e, int64_t s, LinearForm* out) {
  DataType t = out->dtype;
  switch (e.kind()) {
    case ExprKind::IntImm:
      out->add_const(mul_wrap(t, e.as<IntImm>()->value, s));
      return;
    case ExprKind::Add: {
      auto* op = e.as<Add>();
      linearize_into(op->a, s, out);
      linearize_into(op->b, s, out);
      return;
    }
    case ExprKind::Sub: {
      auto* op = e.as<Sub>();
      linearize_into(op->a, s, out);
      linearize_into(op->b, wrap_to(t, int64_t(0 - uint64_t(s))), out);
      return;
    }
    case ExprKind::Mul: {
      auto* op = e.as<Mul>();
      if (auto* c = op->b.as<IntImm>()) return linearize_into(op->a, mul_wrap(t, s, c->value), out);
      if (auto* c = op->a.as<IntImm>()) return linearize_into(op->b, mul_wrap(t, s, c->value), out);
      LinearForm la = linearize(op->a), lb = linearize(op->b);
      if (lb.is_const()) {
        la.scale(lb.constant);
        out->add(la, s);
      } else if (la.is_const()) {
        lb.scale(la.constant);
        out->add(lb, s);
      } else {
        Expr a = rebuild(la), b = rebuild(lb);
        if (structural_equal(a, op->a)) a = op->a;
        if (structural_equal(b, op->b)) b = op->b;
        Expr atom = a.same_as(op->a) && b.same_as(op->b) ? e : Mul::make(a, b);
        out->add_term(atom, s);
      }
      return;
    }
    default: {
      Expr x = mutate(e);
      if (x.as<IntImm>() || x.as<Add>() || x.as<Sub>() || x.as<Mul>()) {
        out->add(parse_linear(x), s);
      } else {
        out->add_term(x, s);
      }
    }
  }
}

LinearForm Simplifier::linearize(const Expr& e) {
  LinearForm f;
  f.dtype = e.dtype();
  linearize_into(e, 1, &f);
  merge_div_mod(&f);
  return f;
}

Expr Simplifier::linear_node(const Expr& e) {
  Expr r = rebuild(linearize(e));
  return structural_equal(r, e) ? e : r;
}

Bounds Simplifier::bound_of(const LinearForm& f) {
  DataType t = f.dtype;
  Bounds r = point(f.constant);
  for (auto& x : f.terms) {
    r = add_bounds(t, r, mul_bounds(t, bound_of(x.atom), point(x.coeff)));
    if (!r.has_lo() && !r.has_hi()) break;
  }
  return r;
}

Bounds Simplifier::bound_of_symbolic(const LinearForm& f) {
  Bounds b = bound_of(f);
  LinearForm up, down;
  up.dtype = down.dtype = f.dtype;
  up.constant = down.constant = f.constant;
  bool substituted = false;
  for (auto& x : f.terms) {
    auto* v = x.atom.as<VarNode>();
    auto it = v ? ranges_.find(v) : ranges_.end();
    if (it == ranges_.end()) {
      up.add_term(x.atom, x.coeff);
      down.add_term(x.atom, x.coeff);
      continue;
    }
    const Interval& r = it->second;
    const Expr& hi_end = x.coeff > 0 ? r.max : r.min;  // maximizes coeff * v
    const Expr& lo_end = x.coeff > 0 ? r.min : r.max;
    auto symbolic = [&](const Expr& end) { return end.defined() && !end.as<IntImm>() && end.dtype() == f.dtype; };
    if (symbolic(hi_end)) {
      up.add(parse_linear(hi_end), x.coeff);
      substituted = true;
    } else {
      up.add_term(x.atom, x.coeff);
    }
    if (symbolic(lo_end)) {
      down.add(parse_linear(lo_end), x.coeff);
      substituted = true;
    } else {
      down.add_term(x.atom, x.coeff);
    }
  }
  if (!substituted) return b;
  b.hi = std::min(b.hi, bound_of(up).hi);
  b.lo = std::max(b.lo, bound_of(down).lo);
  return b;
}

Bounds Simplifier::bound_of(const Expr& e) {
  if (auto* i = e.as<IntImm>()) return {i->value, i->value};
  auto it = bound_memo_.find(e.get());
  if (it != bound_memo_.end()) return it->second.second;
  Bounds b = bound_uncached(e);
  bound_memo_.emplace(e.get(), std::make_pair(e, b));
  return b;
}

Bounds Simplifier::bound_uncached(const Expr& e) {
  DataType t = e.dtype();
  if (!t.is_int()) return Bounds::unbounded();  // callers only ask about signed integers
  switch (e.kind()) {
    case ExprKind::Var: {
      auto it = ranges_.find(e.as<VarNode>());
      if (it == ranges_.end() || bound_depth_ > 32) return Bounds::unbounded();
      Interval r = it->second;
      ++bound_depth_;
      Bounds b;
      if (r.min.defined() && r.min.dtype().is_int()) b.lo = bound_of(r.min).lo;
      if (r.max.defined() && r.max.dtype().is_int()) b.hi = bound_of(r.max).hi;
      --bound_depth_;
      return make_bounds(t, ext(b.lo, true), ext(b.hi, false));
    }
    case ExprKind::Add: {
      auto* op = e.as<Add>();
      return add_bounds(t, bound_of(op->a), bound_of(op->b));
    }
    case ExprKind::Sub: {
      auto* op = e.as<Sub>();
      return add_bounds(t, bound_of(op->a), neg_bounds(bound_of(op->b)));
    }
    case ExprKind::Mul: {
      auto* op = e.as<Mul>();
      return mul_bounds(t, bound_of(op->a), bound_of(op->b));
    }
    case ExprKind::Div: {
      auto* op = e.as<Div>();
      Bounds a = bound_of(op->a), b = bound_of(op->b);
      if (!b.is_finite() || (b.lo <= 0 && b.hi >= 0)) return Bounds::unbounded();
      // floor(a / b) is monotone in a and, for b of one sign, in b: the extremes are at corners.
      auto q = [&](int64_t x, bool lower, int64_t y) -> i128 {
        i128 ex = ext(x, lower);
        if (ex == kInf || ex == -kInf) return (ex > 0) == (y > 0) ? kInf : -kInf;
        if (y == -1 && x == INT64_MIN) return kInf;  // only for int64, where it wraps anyway
        return floor_div(x, y);
      };
      i128 c[4] = {q(a.lo, true, b.lo), q(a.lo, true, b.hi), q(a.hi, false, b.lo), q(a.hi, false, b.hi)};
      return make_bounds(t, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
    }
    case ExprKind::Mod: {
      auto* op = e.as<Mod>();
      Bounds a = bound_of(op->a), b = bound_of(op->b);
      if (b.has_lo() && b.lo > 0) {
        if (b.lo == b.hi && a.is_finite() && floor_div(a.lo, b.lo) == floor_div(a.hi, b.lo))
          return {floor_mod(a.lo, b.lo), floor_mod(a.hi, b.lo)};
        Bounds r{0, b.has_hi() ? b.hi - 1 : Bounds::kPosInf};
        if (a.has_lo() && a.lo >= 0) r.hi = std::min(r.hi, a.hi);
        return r;
      }
      if (b.has_hi() && b.hi < 0) return {b.has_lo() ? b.lo + 1 : Bounds::kNegInf, 0};
      return Bounds::unbounded();
    }
    case ExprKind::Min: {
      auto* op = e.as<Min>();
      Bounds a = bound_of(op->a), b = bound_of(op->b);
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    case ExprKind::Max: {
      auto* op = e.as<Max>();
      Bounds a = bound_of(op->a), b = bound_of(op->b);
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Select: {
      auto* op = e.as<Select>();
      Bounds a = bound_of(op->true_value), b = bound_of(op->false_value);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Call: {
      auto* op = e.as<Call>();
      if (op->op != Intrinsic::kIfThenElse) return Bounds::unbounded();
      Bounds a = bound_of(op->args[1]), b = bound_of(op->args[2]);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Cast: {
      auto* op = e.as<Cast>();
      DataType s = op->value.dtype();
      if (s.is_bool()) return make_bounds(t, 0, 1);
      if (s.is_uint() && s.bits < 64) return make_bounds(t, 0, (i128(1) << s.bits) - 1);
      if (!s.is_int()) return Bounds::unbounded();
      Bounds b = bound_of(op->value);
      if (t.bits >= s.bits) return b;  // widening keeps the value
      if (!b.is_finite()) return Bounds::unbounded();
      return make_bounds(t, b.lo, b.hi);
    }
    case ExprKind::Broadcast:
      return bound_of(e.as<Broadcast>()->value);
    case ExprKind::Ramp: {
      auto* op = e.as<Ramp>();
      Bounds span = mul_bounds(t.element_of(), bound_of(op->stride), point(op->lanes - 1));
      Bounds b = bound_of(op->base);
      // lanes lie between base and base + stride * (lanes - 1)
      Bounds ext_span{std::min<int64_t>(0, span.lo), std::max<int64_t>(0, span.hi)};
      return add_bounds(t, b, ext_span);
    }
    default:
      return Bounds::unbounded();
  }
}

}  // namespace tessel::ir::detail
