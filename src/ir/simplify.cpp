// Expression rules of the simplifier.
//
//  - Add/Sub/Mul on signed integer scalars go through the linear form (simplify_linear.cpp).
//  - simplify_div / simplify_mod: floor Div/Mod by a positive constant split the dividend's linear
//    form into c * D + R and decide floor(R / c) from R's bounds; nested x/a/b is x/(a*b).
//  - simplify_min_max / simplify_compare: decide from the bounds of the linear form of a - b;
//    comparisons are rebuilt with positive terms on the left, divided by the common factor.
//  - Vector rules: Broadcast op Broadcast, Ramp +-* Broadcast, Ramp +- Ramp, Ramp / and % by a
//    constant when the lanes stay in one period.
//  - Everything else only folds constants; float rules are restricted to exact ones.
// A rule that does not apply rebuilds the node from its simplified operands. The per-node mutate_
// functions that call these rules are in simplify_nodes.cpp.
#include <cmath>
#include <limits>
#include <numeric>

#include "simplify_internal.h"
#include "tessel/ir/op.h"
#include "tessel/ir/structural.h"
#include "tessel/support/error.h"

namespace tessel::ir::detail {

Expr make_binary(ExprKind k, const Expr& a, const Expr& b) {
  switch (k) {
    case ExprKind::Add:
      return Add::make(a, b);
    case ExprKind::Sub:
      return Sub::make(a, b);
    case ExprKind::Mul:
      return Mul::make(a, b);
    case ExprKind::Div:
      return Div::make(a, b);
    case ExprKind::Mod:
      return Mod::make(a, b);
    case ExprKind::Min:
      return Min::make(a, b);
    case ExprKind::Max:
      return Max::make(a, b);
    case ExprKind::EQ:
      return EQ::make(a, b);
    case ExprKind::NE:
      return NE::make(a, b);
    case ExprKind::LT:
      return LT::make(a, b);
    case ExprKind::LE:
      return LE::make(a, b);
    case ExprKind::And:
      return And::make(a, b);
    case ExprKind::Or:
      return Or::make(a, b);
    default:
      TESSEL_ICHECK(false) << "not a binary kind: " << kind_name(k);
  }
  return Expr();
}


namespace {

const double* const_float(const Expr& e) {
  if (auto* f = e.as<FloatImm>()) return &f->value;
  if (auto* b = e.as<Broadcast>()) return const_float(b->value);
  return nullptr;
}

Expr make_int(DataType t, int64_t v) {
  if (t.is_vector()) return Broadcast::make(IntImm::make(t.element_of(), v), t.lanes);
  return IntImm::make(t, v);
}
Expr make_bool(int lanes, bool v) { return make_int(DataType::boolean(lanes), v); }


/** Both operands Broadcast of one lane count: the scalar operands (else null). */
bool both_broadcast(const Expr& a, const Expr& b, Expr* x, Expr* y) {
  auto* ba = a.as<Broadcast>();
  auto* bb = b.as<Broadcast>();
  if (!ba || !bb || ba->lanes != bb->lanes) return false;
  *x = ba->value;
  *y = bb->value;
  return true;
}

uint64_t uabs(int64_t v) { return v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v); }

/** Folds an integer binary op on constants of dtype t (scalar); false when undefined (x/0). */
bool fold_int(ExprKind k, DataType t, int64_t a, int64_t b, int64_t* out) {
  bool u = t.is_uint();
  if (u && t.bits == 64 && (a < 0 || b < 0) && k != ExprKind::Add && k != ExprKind::Sub && k != ExprKind::Mul &&
      k != ExprKind::EQ && k != ExprKind::NE)
    return false;  // unsigned 64-bit values above 2^63: leave them
  switch (k) {
    case ExprKind::Add:
      *out = int64_t(uint64_t(a) + uint64_t(b));
      break;
    case ExprKind::Sub:
      *out = int64_t(uint64_t(a) - uint64_t(b));
      break;
    case ExprKind::Mul:
      *out = int64_t(uint64_t(a) * uint64_t(b));
      break;
    case ExprKind::Div:
      if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) return false;
      *out = floor_div(a, b);
      break;
    case ExprKind::Mod:
      if (b == 0 || b == -1) {
        if (b == 0) return false;
        *out = 0;
        break;
      }
      *out = floor_mod(a, b);
      break;
    case ExprKind::Min:
      *out = std::min(a, b);
      break;
    case ExprKind::Max:
      *out = std::max(a, b);
      break;
    case ExprKind::EQ:
      *out = a == b;
      return true;
    case ExprKind::NE:
      *out = a != b;
      return true;
    case ExprKind::LT:
      *out = a < b;
      return true;
    case ExprKind::LE:
      *out = a <= b;
      return true;
    case ExprKind::And:
      *out = a && b;
      return true;
    case ExprKind::Or:
      *out = a || b;
      return true;
    default:
      return false;
  }
  *out = wrap_to(t, *out);
  return true;
}

bool fold_float(ExprKind k, double a, double b, double* out) {
  switch (k) {
    case ExprKind::Add:
      *out = a + b;
      return true;
    case ExprKind::Sub:
      *out = a - b;
      return true;
    case ExprKind::Mul:
      *out = a * b;
      return true;
    case ExprKind::Div:
      *out = a / b;
      return true;
    case ExprKind::Min:
    case ExprKind::Max:
      // NaN and signed-zero results depend on the code generator's min/max: leave those.
      if (std::isnan(a) || std::isnan(b) || (a == 0 && b == 0)) return false;
      *out = k == ExprKind::Min ? std::min(a, b) : std::max(a, b);
      return true;
    case ExprKind::EQ:
      *out = a == b;
      return true;
    case ExprKind::NE:
      *out = a != b;
      return true;
    case ExprKind::LT:
      *out = a < b;
      return true;
    case ExprKind::LE:
      *out = a <= b;
      return true;
    default:
      return false;
  }
}

bool is_compare(ExprKind k) { return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE; }

/** Folds a binary node whose operands are both constants (scalar or Broadcast); null otherwise. */
Expr try_fold(ExprKind k, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  DataType rt = is_compare(k) ? DataType::boolean(t.lanes) : t;
  if (auto* x = const_int(a), *y = const_int(b); x && y) {
    if (a.as<Broadcast>() && !b.as<Broadcast>()) return Expr();
    if (!a.as<Broadcast>() && b.as<Broadcast>()) return Expr();
    int64_t r;
    if (!fold_int(k, t.element_of(), *x, *y, &r)) return Expr();
    return rt.is_bool() ? make_bool(rt.lanes, r != 0) : make_int(rt, r);
  }
  if (auto* x = const_float(a), *y = const_float(b); x && y && foldable_float(t)) {
    double r;
    if (!fold_float(k, *x, *y, &r)) return Expr();
    if (rt.is_bool()) return make_bool(rt.lanes, r != 0);
    Expr s = FloatImm::make(t.element_of(), r);
    return t.is_vector() ? Broadcast::make(s, t.lanes) : s;
  }
  return Expr();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Arithmetic that does not go through the linear form: floats, unsigned, vectors.

Expr Simplifier::simplify_arith(ExprKind k, const Expr& a, const Expr& b) {
  if (Expr f = try_fold(k, a, b); f.defined()) return f;
  DataType t = a.dtype();
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(mutate(make_binary(k, x, y)), t.lanes);
  if (t.is_integer()) {
    const int64_t *ca = const_int(a), *cb = const_int(b);
    if (k == ExprKind::Add && cb && *cb == 0) return a;
    if (k == ExprKind::Add && ca && *ca == 0) return b;
    if (k == ExprKind::Sub && cb && *cb == 0) return a;
    if (k == ExprKind::Mul && cb && *cb == 1) return a;
    if (k == ExprKind::Mul && ca && *ca == 1) return b;
    if (k == ExprKind::Mul && ((cb && *cb == 0) || (ca && *ca == 0))) return make_int(t, 0);
    if (k == ExprKind::Sub && structural_equal(a, b)) return make_int(t, 0);
  }
  if (t.is_int() && t.is_vector()) {
    auto* ra = a.as<Ramp>();
    auto* rb = b.as<Ramp>();
    auto* ba = a.as<Broadcast>();
    auto* bb = b.as<Broadcast>();
    auto ramp = [&](const Expr& base, const Expr& stride) {
      Expr s = mutate(stride);
      if (is_zero_int(s)) return Broadcast::make(mutate(base), t.lanes);
      return Ramp::make(mutate(base), s, t.lanes);
    };
    switch (k) {
      case ExprKind::Add:
        if (ra && bb) return ramp(Add::make(ra->base, bb->value), ra->stride);
        if (ba && rb) return ramp(Add::make(ba->value, rb->base), rb->stride);
        if (ra && rb) return ramp(Add::make(ra->base, rb->base), Add::make(ra->stride, rb->stride));
        break;
      case ExprKind::Sub:
        if (ra && bb) return ramp(Sub::make(ra->base, bb->value), ra->stride);
        if (ba && rb) return ramp(Sub::make(ba->value, rb->base), Sub::make(make_zero(rb->stride.dtype()), rb->stride));
        if (ra && rb) return ramp(Sub::make(ra->base, rb->base), Sub::make(ra->stride, rb->stride));
        break;
      case ExprKind::Mul:
        if (ra && bb) return ramp(Mul::make(ra->base, bb->value), Mul::make(ra->stride, bb->value));
        if (ba && rb) return ramp(Mul::make(ba->value, rb->base), Mul::make(ba->value, rb->stride));
        break;
      default:
        break;
    }
  }
  return make_binary(k, a, b);
}

// ---------------------------------------------------------------------------------------------
// Div and Mod.

namespace {
/** Splits f into c * D + R (+ constant k kept in R) where D collects the terms divisible by c. */
void split_divisible(const LinearForm& f, int64_t c, LinearForm* d, LinearForm* r) {
  d->dtype = r->dtype = f.dtype;
  for (auto& t : f.terms) {
    if (t.coeff % c == 0) {
      d->add_term(t.atom, t.coeff / c);
    } else {
      r->add_term(t.atom, t.coeff);
    }
  }
  r->constant = f.constant;
}

/** True when all lanes of r = base + i*stride (stride > 0) fall in one block of c: base is a multiple of
 *  some g dividing c with stride*(lanes-1) < g, so base mod c <= c - g (e.g. ramp(4x, 1, 4) / 8). */
bool lanes_in_one_block(const Ramp* r, int64_t c) {
  const int64_t* s = as_const_int(r->stride);
  if (!s || *s <= 0) return false;
  LinearForm f = parse_linear(r->base);
  uint64_t g = uint64_t(c);
  for (auto& term : f.terms) g = std::gcd(g, uabs(term.coeff));
  g = std::gcd(g, uabs(f.constant));
  return __int128(*s) * (r->lanes - 1) < __int128(g);
}
}  // namespace

Expr Simplifier::simplify_div(const Expr& a, const Expr& b) {
  if (Expr f = try_fold(ExprKind::Div, a, b); f.defined()) return f;
  DataType t = a.dtype();
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(simplify_div(x, y), t.lanes);
  const int64_t* cp = const_int(b);
  if (!t.is_int() || !cp) return Div::make(a, b);
  int64_t c = *cp;
  if (c == 1) return a;
  if (c <= 0) return Div::make(a, b);

  if (auto* r = a.as<Ramp>(); r && b.as<Broadcast>()) {
    // (base + i*s) / c over lanes i.
    const int64_t* s = const_int(r->stride);
    if (!s) return Div::make(a, b);
    Expr cs = IntImm::make(t.element_of(), c);
    if (*s % c == 0) {
      Expr base = simplify_div(r->base, cs);
      if (*s == 0) return Broadcast::make(base, r->lanes);
      if (*s / c == 0) return Broadcast::make(base, r->lanes);
      return Ramp::make(base, IntImm::make(t.element_of(), *s / c), r->lanes);
    }
    LinearForm d, rem;
    split_divisible(parse_linear(r->base), c, &d, &rem);
    Bounds br = bound_of(rem);
    __int128 spread = __int128(*s) * (r->lanes - 1);
    __int128 lo = __int128(br.lo) + std::min<__int128>(0, spread), hi = __int128(br.hi) + std::max<__int128>(0, spread);
    if (br.is_finite() && lo >= type_min(t) && hi <= type_max(t) &&
        floor_div(int64_t(lo), c) == floor_div(int64_t(hi), c)) {
      d.add_const(floor_div(int64_t(lo), c));
      return Broadcast::make(rebuild(d), r->lanes);
    }
    if (lanes_in_one_block(r, c)) return Broadcast::make(simplify_div(r->base, cs), r->lanes);
    return Div::make(a, b);
  }
  if (!t.is_scalar()) return Div::make(a, b);

  // (x / c1) / c == x / (c1 * c)
  if (auto* inner = a.as<Div>()) {
    if (auto* c1 = inner->b.as<IntImm>(); c1 && c1->value > 0) {
      __int128 p = __int128(c1->value) * c;
      if (p <= type_max(t)) return simplify_div(inner->a, IntImm::make(t, int64_t(p)));
    }
  }
  LinearForm f = parse_linear(a);
  uint64_t g = uint64_t(c);
  for (auto& term : f.terms) g = std::gcd(g, uabs(term.coeff));
  g = std::gcd(g, uabs(f.constant));
  if (g > 1) {  // floor(g*A / (g*B)) == floor(A / B)
    for (auto& term : f.terms) term.coeff /= int64_t(g);
    f.constant /= int64_t(g);
    c /= int64_t(g);
    if (c == 1) return rebuild(f);
  }
  LinearForm d, rem;
  split_divisible(f, c, &d, &rem);
  Bounds br = bound_of(rem);
  if (br.is_finite() && floor_div(br.lo, c) == floor_div(br.hi, c)) {
    d.add_const(floor_div(br.lo, c));
    return rebuild(d);
  }
  int64_t k = rem.constant;
  if (d.is_const() && d.constant == 0 && g == 1 && k >= 0 && k < c) return Div::make(a, b);
  d.add_const(floor_div(k, c));
  rem.constant = floor_mod(k, c);
  Expr q = simplify_div(rebuild(rem), IntImm::make(t, c));
  d.add(parse_linear(q));
  return rebuild(d);
}

Expr Simplifier::simplify_mod(const Expr& a, const Expr& b) {
  if (Expr f = try_fold(ExprKind::Mod, a, b); f.defined()) return f;
  DataType t = a.dtype();
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(simplify_mod(x, y), t.lanes);
  const int64_t* cp = const_int(b);
  if (!t.is_int() || !cp || *cp <= 0) return Mod::make(a, b);
  int64_t c = *cp;
  if (c == 1) return make_int(t, 0);

  if (auto* r = a.as<Ramp>(); r && b.as<Broadcast>()) {
    const int64_t* s = const_int(r->stride);
    if (!s) return Mod::make(a, b);
    Expr cs = IntImm::make(t.element_of(), c);
    if (*s % c == 0) return Broadcast::make(simplify_mod(r->base, cs), r->lanes);
    LinearForm d, rem;
    split_divisible(parse_linear(r->base), c, &d, &rem);
    rem.constant = floor_mod(rem.constant, c);
    Bounds br = bound_of(rem);
    __int128 spread = __int128(*s) * (r->lanes - 1);
    __int128 lo = __int128(br.lo) + std::min<__int128>(0, spread), hi = __int128(br.hi) + std::max<__int128>(0, spread);
    if (br.is_finite() && lo >= type_min(t) && hi <= type_max(t) &&
        floor_div(int64_t(lo), c) == floor_div(int64_t(hi), c)) {
      rem.add_const(-c * floor_div(int64_t(lo), c));
      return Ramp::make(rebuild(rem), r->stride, r->lanes);
    }
    if (lanes_in_one_block(r, c)) return Ramp::make(simplify_mod(r->base, cs), r->stride, r->lanes);
    return Mod::make(a, b);
  }
  if (!t.is_scalar()) return Mod::make(a, b);

  LinearForm f = parse_linear(a), d, rem;
  split_divisible(f, c, &d, &rem);
  rem.constant = floor_mod(rem.constant, c);
  if (rem.is_const()) return IntImm::make(t, rem.constant);
  Bounds br = bound_of(rem);
  if (br.is_finite() && floor_div(br.lo, c) == floor_div(br.hi, c)) {
    rem.add_const(-c * floor_div(br.lo, c));
    return rebuild(rem);
  }
  // (y % c1) % c == y % c when c divides c1
  if (rem.terms.size() == 1 && rem.terms[0].coeff == 1 && rem.constant == 0) {
    if (auto* m = rem.terms[0].atom.as<Mod>()) {
      if (auto* c1 = m->b.as<IntImm>(); c1 && c1->value > 0 && c1->value % c == 0) return simplify_mod(m->a, b);
    }
  }
  Expr na = rebuild(rem);
  if (structural_equal(na, a)) na = a;
  return Mod::make(na, b);
}

// ---------------------------------------------------------------------------------------------
// Min / Max and comparisons.

Expr Simplifier::simplify_min_max(bool is_min, const Expr& a, const Expr& b) {
  ExprKind k = is_min ? ExprKind::Min : ExprKind::Max;
  if (Expr f = try_fold(k, a, b); f.defined()) return f;
  if (structural_equal(a, b)) return a;
  DataType t = a.dtype();
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(simplify_min_max(is_min, x, y), t.lanes);
  if (!t.is_int()) return make_binary(k, a, b);
  bool a_le_b = false, b_le_a = false;
  if (t.is_scalar()) {
    LinearForm d = parse_linear(a);
    d.add(parse_linear(b), -1);
    merge_div_mod(&d);
    merge_div_mod(&d);
    Bounds bd = bound_of_symbolic(d);
    a_le_b = bd.hi <= 0;
    b_le_a = bd.lo >= 0;
  } else {
    Bounds ba = bound_of(a), bb = bound_of(b);
    a_le_b = ba.has_hi() && ba.hi <= bb.lo;
    b_le_a = bb.has_hi() && bb.hi <= ba.lo;
  }
  if (a_le_b) return is_min ? a : b;
  if (b_le_a) return is_min ? b : a;
  if (const_int(a) && !const_int(b)) return simplify_min_max(is_min, b, a);  // constant on the right
  // min(min(x, c1), c2) == min(x, min(c1, c2))
  if (const int64_t* c2 = const_int(b)) {
    const BinaryNode<ExprKind::Min>* mn = a.as<Min>();
    const BinaryNode<ExprKind::Max>* mx = a.as<Max>();
    Expr ia = is_min ? (mn ? mn->a : Expr()) : (mx ? mx->a : Expr());
    Expr ib = is_min ? (mn ? mn->b : Expr()) : (mx ? mx->b : Expr());
    if (ib.defined() && const_int(ib)) {
      int64_t c1 = *const_int(ib);
      int64_t c = is_min ? std::min(c1, *c2) : std::max(c1, *c2);
      return make_binary(k, ia, c == c1 ? ib : b);
    }
  }
  return make_binary(k, a, b);
}

Expr Simplifier::simplify_compare(ExprKind k, const Expr& a, const Expr& b) {
  if (Expr f = try_fold(k, a, b); f.defined()) return f;
  DataType t = a.dtype();
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(simplify_compare(k, x, y), t.lanes);
  if (!t.is_int()) return make_binary(k, a, b);
  if (t.is_vector()) {
    Bounds ba = bound_of(a), bb = bound_of(b);
    {
      int lanes = t.lanes;
      switch (k) {
        case ExprKind::LT:
          if (ba.hi < bb.lo) return make_bool(lanes, true);
          if (ba.lo >= bb.hi) return make_bool(lanes, false);
          break;
        case ExprKind::LE:
          if (ba.hi <= bb.lo) return make_bool(lanes, true);
          if (ba.lo > bb.hi) return make_bool(lanes, false);
          break;
        case ExprKind::EQ:
          if (ba.hi < bb.lo || bb.hi < ba.lo) return make_bool(lanes, false);
          break;
        case ExprKind::NE:
          if (ba.hi < bb.lo || bb.hi < ba.lo) return make_bool(lanes, true);
          break;
        default:
          break;
      }
    }
    return make_binary(k, a, b);
  }
  // d = a - b; decide d < 0, d <= 0, d == 0, d != 0.
  LinearForm d = parse_linear(a);
  d.add(parse_linear(b), -1);
  merge_div_mod(&d);
  if (d.is_const()) {
    int64_t v = d.constant;
    bool r = k == ExprKind::LT ? v < 0 : k == ExprKind::LE ? v <= 0 : k == ExprKind::EQ ? v == 0 : v != 0;
    return make_bool(1, r);
  }
  Bounds bd = bound_of_symbolic(d);
  {
    switch (k) {
      case ExprKind::LT:
        if (bd.hi < 0) return make_bool(1, true);
        if (bd.lo >= 0) return make_bool(1, false);
        break;
      case ExprKind::LE:
        if (bd.hi <= 0) return make_bool(1, true);
        if (bd.lo > 0) return make_bool(1, false);
        break;
      case ExprKind::EQ:
        if (bd.lo > 0 || bd.hi < 0) return make_bool(1, false);
        break;
      case ExprKind::NE:
        if (bd.lo > 0 || bd.hi < 0) return make_bool(1, true);
        break;
      default:
        break;
    }
  }
  // Canonical form: divide by the common factor g of the terms, positive terms on the left.
  uint64_t g = 0;
  for (auto& term : d.terms) g = std::gcd(g, uabs(term.coeff));
  int64_t kc = d.constant;
  if (kc == type_min(t)) return make_binary(k, a, b);
  if (g > 1) {
    int64_t gi = int64_t(g);
    if (k == ExprKind::EQ || k == ExprKind::NE) {
      if (kc % gi != 0) return make_bool(1, k == ExprKind::NE);
      kc /= gi;
    } else if (k == ExprKind::LT) {
      kc = floor_div(kc, gi);  // g*T + k < 0  <=>  T + floor(k/g) < 0
    } else {
      kc = -floor_div(-kc, gi);  // g*T + k <= 0  <=>  T + ceil(k/g) <= 0
    }
    for (auto& term : d.terms) term.coeff /= gi;
  }
  LinearForm lhs, rhs;
  lhs.dtype = rhs.dtype = t;
  for (auto& term : d.terms) {
    if (term.coeff > 0) {
      lhs.add_term(term.atom, term.coeff);
    } else {
      rhs.add_term(term.atom, -term.coeff);
    }
  }
  if (lhs.terms.empty()) {
    lhs.constant = kc;
  } else {
    rhs.constant = -kc;
  }
  Expr l = rebuild(lhs), r = rebuild(rhs);
  if (structural_equal(l, a)) l = a;
  if (structural_equal(r, b)) r = b;
  return make_binary(k, l, r);
}

Expr Simplifier::simplify_not(const Expr& a) {
  if (auto* c = const_int(a)) return make_bool(a.dtype().lanes, *c == 0);
  if (auto* n = a.as<Not>()) return n->a;
  if (auto* b = a.as<Broadcast>()) return Broadcast::make(simplify_not(b->value), b->lanes);
  auto integer = [](const Expr& x) { return x.dtype().is_integer(); };
  if (auto* op = a.as<LT>(); op && integer(op->a)) return simplify_compare(ExprKind::LE, op->b, op->a);
  if (auto* op = a.as<LE>(); op && integer(op->a)) return simplify_compare(ExprKind::LT, op->b, op->a);
  if (auto* op = a.as<EQ>(); op && integer(op->a)) return simplify_compare(ExprKind::NE, op->a, op->b);
  if (auto* op = a.as<NE>(); op && integer(op->a)) return simplify_compare(ExprKind::EQ, op->a, op->b);
  return Not::make(a);
}

Expr Simplifier::simplify_and_or(bool is_and, const Expr& a, const Expr& b) {
  ExprKind k = is_and ? ExprKind::And : ExprKind::Or;
  const int64_t *ca = const_int(a), *cb = const_int(b);
  // x && true == x, x && false == false (both operands are side-effect free).
  if (ca) return (*ca != 0) == is_and ? b : a;
  if (cb) return (*cb != 0) == is_and ? a : b;
  if (structural_equal(a, b)) return a;
  Expr x, y;
  if (both_broadcast(a, b, &x, &y)) return Broadcast::make(simplify_and_or(is_and, x, y), a.dtype().lanes);
  return make_binary(k, a, b);
}

}  // namespace tessel::ir::detail
