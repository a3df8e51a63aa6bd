// Per-node dispatch of the simplifier: each mutate_ simplifies its operands and hands them to a rule
// (simplify.cpp, simplify_linear.cpp), returning the original node when nothing changed. Nodes with
// no rules of their own (Select, Cast, Call, Let, Load, Ramp, ...) are handled here.
#include <cmath>

#include "simplify_internal.h"
#include "tessel/ir/structural.h"

namespace tessel::ir::detail {

Expr Simplifier::mutate_(const IntImm*, const Expr& e) { return e; }
Expr Simplifier::mutate_(const FloatImm*, const Expr& e) { return e; }

Expr Simplifier::mutate_(const VarNode* op, const Expr& e) {
  auto it = subst_.find(op);
  if (it != subst_.end()) return it->second;
  if (op->dtype.is_int() && ranges_.count(op)) {
    Bounds b = bound_of(e);
    if (b.lo == b.hi) return IntImm::make(op->dtype, b.lo);
  }
  return e;
}

#define TESSEL_ARITH(T, K)                                    \
  Expr Simplifier::mutate_(const T* op, const Expr& e) {      \
    if (is_int_scalar(e)) return linear_node(e);              \
    Expr a = mutate(op->a), b = mutate(op->b);                \
    return same_or(op, e, simplify_arith(ExprKind::K, a, b)); \
  }
TESSEL_ARITH(Add, Add)
TESSEL_ARITH(Sub, Sub)
TESSEL_ARITH(Mul, Mul)
#undef TESSEL_ARITH

Expr Simplifier::mutate_(const Div* op, const Expr& e) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.dtype().is_integer()) return same_or(op, e, simplify_div(a, b));
  return same_or(op, e, simplify_arith(ExprKind::Div, a, b));
}
Expr Simplifier::mutate_(const Mod* op, const Expr& e) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.dtype().is_integer()) return same_or(op, e, simplify_mod(a, b));
  return same_or(op, e, Mod::make(a, b));  // float modulo: left alone
}
Expr Simplifier::mutate_(const Min* op, const Expr& e) {
  return same_or(op, e, simplify_min_max(true, mutate(op->a), mutate(op->b)));
}
Expr Simplifier::mutate_(const Max* op, const Expr& e) {
  return same_or(op, e, simplify_min_max(false, mutate(op->a), mutate(op->b)));
}
#define TESSEL_CMP(T)                                                                   \
  Expr Simplifier::mutate_(const T* op, const Expr& e) {                                \
    return same_or(op, e, simplify_compare(ExprKind::T, mutate(op->a), mutate(op->b))); \
  }
TESSEL_CMP(EQ)
TESSEL_CMP(NE)
TESSEL_CMP(LT)
TESSEL_CMP(LE)
#undef TESSEL_CMP
Expr Simplifier::mutate_(const And* op, const Expr& e) {
  return same_or(op, e, simplify_and_or(true, mutate(op->a), mutate(op->b)));
}
Expr Simplifier::mutate_(const Or* op, const Expr& e) {
  return same_or(op, e, simplify_and_or(false, mutate(op->a), mutate(op->b)));
}
Expr Simplifier::mutate_(const Not* op, const Expr& e) {
  Expr a = mutate(op->a);
  Expr r = simplify_not(a);
  if (auto* n = r.as<Not>(); n && n->a.same_as(op->a)) return e;
  return r;
}

Expr Simplifier::mutate_(const Select* op, const Expr& e) {
  Expr c = mutate(op->cond);
  if (auto* v = const_int(c)) return mutate(*v ? op->true_value : op->false_value);
  Expr t = mutate(op->true_value), f = mutate(op->false_value);
  if (structural_equal(t, f)) return t;
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  return Select::make(c, t, f);
}

Expr Simplifier::mutate_(const Cast* op, const Expr& e) {
  Expr v = mutate(op->value);
  DataType t = op->dtype, s = v.dtype();
  if (t == s) return v;
  if (auto* b = v.as<Broadcast>()) {
    return Broadcast::make(mutate(Cast::make(t.element_of(), b->value)), b->lanes);
  }
  if (auto* i = v.as<IntImm>()) {
    bool u64 = s.is_uint() && s.bits == 64 && i->value < 0;
    if ((t.is_integer() || t.is_bool()) && !u64) return IntImm::make(t, t.is_bool() ? i->value != 0 : i->value);
    if (foldable_float(t) && !u64 && std::abs(double(i->value)) < 9007199254740992.0)
      return FloatImm::make(t, double(i->value));
  }
  if (auto* f = v.as<FloatImm>(); f && foldable_float(s)) {
    if (foldable_float(t)) return FloatImm::make(t, f->value);
    if (t.is_int() && std::isfinite(f->value)) {
      double tr = std::trunc(f->value);
      if (tr >= double(type_min(t)) && tr <= double(type_max(t)) && std::abs(tr) < 9.2e18)
        return IntImm::make(t, int64_t(tr));
    }
  }
  return v.same_as(op->value) ? e : Cast::make(t, v);
}

Expr Simplifier::mutate_(const Call* op, const Expr& e) {
  if (op->op == Intrinsic::kIfThenElse) {
    Expr c = mutate(op->args[0]);
    if (auto* v = const_int(c)) return mutate(*v ? op->args[1] : op->args[2]);
    Expr t = mutate(op->args[1]), f = mutate(op->args[2]);
    if (structural_equal(t, f)) return t;
    if (c.same_as(op->args[0]) && t.same_as(op->args[1]) && f.same_as(op->args[2])) return e;
    return Call::make(op->op, {c, t, f});
  }
  Expr r = IRMutator::mutate_(op, e);
  if (auto* c = r.as<Call>(); c && c->op == Intrinsic::kAbs && c->dtype.is_int()) {
    if (auto* v = c->args[0].as<IntImm>()) return IntImm::make(c->dtype, v->value < 0 ? -v->value : v->value);
  }
  return r;
}

Expr Simplifier::mutate_(const TensorRead* op, const Expr& e) { return IRMutator::mutate_(op, e); }
Expr Simplifier::mutate_(const BufferLoad* op, const Expr& e) { return IRMutator::mutate_(op, e); }

Expr Simplifier::mutate_(const Reduce* op, const Expr& e) {
  for (auto& ax : op->axes) {
    Expr mn = mutate(ax->min), ex = mutate(ax->extent);
    push_range(ax->var.get(), Interval{mn, mutate(Sub::make(Add::make(mn, ex), make_const(ex.dtype(), 1)))});
  }
  Expr r = IRMutator::mutate_(op, e);
  for (auto it = op->axes.rbegin(); it != op->axes.rend(); ++it) pop_range((*it)->var.get());
  return r;
}

Expr Simplifier::mutate_(const Load* op, const Expr& e) {
  Expr i = mutate(op->index);
  Expr p = op->predicate.defined() ? mutate(op->predicate) : op->predicate;
  if (auto* c = const_int(p); c && *c) p = Expr();
  if (i.same_as(op->index) && p.same_as(op->predicate)) return e;
  return Load::make(op->buffer, i, p);
}

Expr Simplifier::mutate_(const Ramp* op, const Expr& e) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (is_zero_int(s)) return Broadcast::make(b, op->lanes);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return Ramp::make(b, s, op->lanes);
}

Expr Simplifier::mutate_(const Broadcast* op, const Expr& e) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? e : Broadcast::make(v, op->lanes);
}

Expr Simplifier::mutate_(const Let* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.as<IntImm>() || v.as<FloatImm>() || v.as<VarNode>()) {
    subst_[op->var.get()] = v;
    Expr b = mutate(op->body);
    subst_.erase(op->var.get());
    return b;
  }
  push_range(op->var.get(), Interval::single_point(v));
  Expr b = mutate(op->body);
  pop_range(op->var.get());
  const VarNode* var = op->var.get();
  if (!uses_var(b, [var](const VarNode* x) { return x == var; })) return b;
  if (v.same_as(op->value) && b.same_as(op->body)) return e;
  return Let::make(op->var, v, b);
}

void Simplifier::push_range(const VarNode* v, Interval r) {
  auto it = ranges_.find(v);
  if (it != ranges_.end()) {
    shadowed_[v].push_back({true, it->second});
    it->second = std::move(r);
  } else {
    shadowed_[v].push_back({false, Interval()});
    ranges_.emplace(v, std::move(r));
  }
  bound_memo_.clear();
}

void Simplifier::pop_range(const VarNode* v) {
  auto& stack = shadowed_[v];
  auto [had, old] = stack.back();
  stack.pop_back();
  if (had) {
    ranges_[v] = old;
  } else {
    ranges_.erase(v);
  }
  bound_memo_.clear();
}

}  // namespace tessel::ir::detail
