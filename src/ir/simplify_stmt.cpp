// Statement rules of the simplifier and the public entry points.
//
//  - For: min/extent simplified first; extent <= 0 drops the loop, extent 1 inlines the body with
//    var = min, otherwise the body is simplified with var in [min, min + extent - 1].
//  - IfThenElse: a condition that simplifies to a constant keeps only the chosen branch (guards of
//    non-dividing splits that the ranges prove disappear).
//  - LetStmt of a constant or variable is substituted; other lets give the body var = value.
//  - Seq drops no-ops (an undefined Stmt internally, Evaluate of a constant) and flattens.
#include <optional>

#include "simplify_internal.h"
#include "tessel/ir/simplify.h"
#include "tessel/ir/structural.h"

namespace tessel::ir {
namespace detail {

namespace {
bool uses(const Stmt& s, const VarNode* v) {
  return uses_var(s, [v](const VarNode* x) { return x == v; });
}
}  // namespace

Stmt Simplifier::mutate_(const For* op, const Stmt& s) {
  Expr mn = mutate(op->min), ex = mutate(op->extent);
  if (ex.dtype().is_int()) {
    Bounds b = bound_of(ex);
    if (b.hi <= 0) return Stmt();
    if (b.lo == 1 && b.hi == 1) {
      subst_[op->var.get()] = mn;
      Stmt body = mutate(op->body);
      subst_.erase(op->var.get());
      return body;
    }
  }
  Expr last = mutate(Sub::make(Add::make(mn, ex), make_const(ex.dtype(), 1)));
  push_range(op->var.get(), Interval{mn, last});
  Stmt body = mutate(op->body);
  pop_range(op->var.get());
  if (!body.defined()) return Stmt();
  if (mn.same_as(op->min) && ex.same_as(op->extent) && body.same_as(op->body)) return s;
  return For::make(op->var, mn, ex, op->for_kind, body);
}

Stmt Simplifier::mutate_(const BufferStore* op, const Stmt& s) { return IRMutator::mutate_(op, s); }

Stmt Simplifier::mutate_(const Store* op, const Stmt& s) {
  Expr v = mutate(op->value), i = mutate(op->index);
  Expr p = op->predicate.defined() ? mutate(op->predicate) : op->predicate;
  if (auto* c = as_const_int(p)) {
    if (!*c) return Stmt();  // no lane is stored
    p = Expr();
  }
  if (v.same_as(op->value) && i.same_as(op->index) && p.same_as(op->predicate)) return s;
  return Store::make(op->buffer, v, i, p);
}

Stmt Simplifier::mutate_(const Allocate* op, const Stmt& s) {
  Stmt b = mutate(op->body);
  if (!b.defined()) return Stmt();
  return b.same_as(op->body) ? s : Allocate::make(op->buffer, b);
}

Stmt Simplifier::mutate_(const Seq* op, const Stmt& s) {
  std::vector<Stmt> out;
  bool changed = false;
  for (auto& x : op->seq) {
    Stmt y = mutate(x);
    changed |= !y.same_as(x);
    if (y.defined()) out.push_back(y);
  }
  if (!changed) return s;
  if (out.empty()) return Stmt();
  return Seq::make(std::move(out));
}

Stmt Simplifier::mutate_(const IfThenElse* op, const Stmt& s) {
  Expr c = mutate(op->cond);
  if (auto* v = as_const_int(c)) {
    if (*v) return mutate(op->then_case);
    return op->else_case.defined() ? mutate(op->else_case) : Stmt();
  }
  Stmt t = mutate(op->then_case);
  Stmt f = op->else_case.defined() ? mutate(op->else_case) : Stmt();
  if (!t.defined() && !f.defined()) return Stmt();
  if (!t.defined()) return IfThenElse::make(simplify_not(c), f);
  if (c.same_as(op->cond) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
  return IfThenElse::make(c, t, f);
}

Stmt Simplifier::mutate_(const Evaluate* op, const Stmt& s) {
  Expr v = mutate(op->value);
  if (v.as<IntImm>() || v.as<FloatImm>()) return Stmt();
  return v.same_as(op->value) ? s : Evaluate::make(v);
}

Stmt Simplifier::mutate_(const LetStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  const VarNode* var = op->var.get();
  if (v.as<IntImm>() || v.as<FloatImm>() || v.as<VarNode>()) {
    subst_[var] = v;
    Stmt b = mutate(op->body);
    subst_.erase(var);
    return b;
  }
  push_range(var, Interval::single_point(v));
  Stmt b = mutate(op->body);
  pop_range(var);
  if (!b.defined()) return Stmt();
  if (!uses(b, var)) return b;
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return LetStmt::make(op->var, v, b);
}

Stmt Simplifier::mutate_(const AttrStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (!b.defined()) return Stmt();
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return AttrStmt::make(op->key, v, b);
}

}  // namespace detail

Expr simplify(const Expr& e, const VarRanges& ranges) {
  if (!e.defined()) return e;
  detail::Simplifier s(ranges);
  return s.mutate(e);
}

Stmt simplify(const Stmt& st, const VarRanges& ranges) {
  if (!st.defined()) return st;
  detail::Simplifier s(ranges);
  Stmt r = s.mutate(st);
  return r.defined() ? r : Evaluate::make(IntImm::make(DataType::int32(), 0));
}

namespace {
std::optional<int64_t> const_bound(const Expr& e, const VarRanges& ranges, bool upper) {
  if (!e.defined() || !e.dtype().is_int()) return std::nullopt;
  detail::Simplifier s(ranges);
  Expr x = s.mutate(e);
  detail::Bounds b = s.bound_of(x);
  std::optional<int64_t> r;
  if (upper && b.has_hi()) r = b.hi;
  if (!upper && b.has_lo()) r = b.lo;
  // Symbolic ranges (y in [x*4, x*4 + 3]) can cancel in the interval when they do not in bounds.
  Interval iv = eval_interval(x, ranges);
  if (auto* c = as_const_int(upper ? iv.max : iv.min)) {
    if (!r) r = *c;
    r = upper ? std::min(*r, *c) : std::max(*r, *c);
  }
  return r;
}
}  // namespace

std::optional<int64_t> const_upper_bound(const Expr& e, const VarRanges& ranges) {
  return const_bound(e, ranges, true);
}
std::optional<int64_t> const_lower_bound(const Expr& e, const VarRanges& ranges) {
  return const_bound(e, ranges, false);
}

}  // namespace tessel::ir
