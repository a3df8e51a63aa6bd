// Default traversal for IRVisitor / IRMutator, and substitution built on them.
#include "tessel/ir/functor.h"

#include "tessel/ir/op.h"
#include "tessel/support/error.h"

namespace tessel::ir {

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define TESSEL_X(n, T) \
  case ExprKind::n: return visit_(static_cast<const T*>(e.get()));
    TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define TESSEL_X(n, T) \
  case StmtKind::n: return visit_(static_cast<const T*>(s.get()));
    TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
  }
}

namespace {
// Visits the Expr / Stmt-valued fields of a node, in declaration order.
struct FieldWalker {
  IRVisitor* v;
  void operator()(const Expr& e) const { v->visit(e); }
  void operator()(const Stmt& s) const { v->visit(s); }
  void operator()(const std::vector<Expr>& es) const { for (auto& e : es) v->visit(e); }
  void operator()(const std::vector<Stmt>& ss) const { for (auto& s : ss) v->visit(s); }
  template <class T>
  void operator()(const T&) const {}
};
}  // namespace

#define TESSEL_X(n, T)                                                              \
  void IRVisitor::visit_(const T* op) {                                             \
    std::apply([this](const auto&... f) { (FieldWalker{this}(f), ...); }, op->fields()); \
  }
TESSEL_EXPR_NODES(TESSEL_X)
TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define TESSEL_X(n, T) \
  case ExprKind::n: return mutate_(static_cast<const T*>(e.get()), e);
    TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define TESSEL_X(n, T) \
  case StmtKind::n: return mutate_(static_cast<const T*>(s.get()), s);
    TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
  }
  return s;
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->clear();
  out->reserve(in.size());
  for (auto& e : in) {
    out->push_back(mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

Expr IRMutator::mutate_(const IntImm*, const Expr& e) { return e; }
Expr IRMutator::mutate_(const FloatImm*, const Expr& e) { return e; }
Expr IRMutator::mutate_(const VarNode*, const Expr& e) { return e; }

#define TESSEL_BIN(T)                                       \
  Expr IRMutator::mutate_(const T* op, const Expr& e) {     \
    Expr a = mutate(op->a), b = mutate(op->b);              \
    if (a.same_as(op->a) && b.same_as(op->b)) return e;     \
    match_types(kind_name(e.kind()), a, b);                 \
    return T::make(a, b);                                   \
  }
TESSEL_BIN(Add) TESSEL_BIN(Sub) TESSEL_BIN(Mul) TESSEL_BIN(Div) TESSEL_BIN(Mod) TESSEL_BIN(Min)
TESSEL_BIN(Max) TESSEL_BIN(EQ) TESSEL_BIN(NE) TESSEL_BIN(LT) TESSEL_BIN(LE) TESSEL_BIN(And) TESSEL_BIN(Or)
#undef TESSEL_BIN

Expr IRMutator::mutate_(const Not* op, const Expr& e) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? e : Not::make(a);
}
Expr IRMutator::mutate_(const Select* op, const Expr& e) {
  Expr c = mutate(op->cond), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  match_types("select", t, f);
  if (c.dtype().lanes != t.dtype().lanes && c.dtype().is_scalar()) c = Broadcast::make(c, t.dtype().lanes);
  if (c.dtype().lanes != t.dtype().lanes && t.dtype().is_scalar()) {
    t = Broadcast::make(t, c.dtype().lanes);
    f = Broadcast::make(f, c.dtype().lanes);
  }
  return Select::make(c, t, f);
}
Expr IRMutator::mutate_(const Cast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return Cast::make(op->dtype.with_lanes(v.dtype().lanes), v);
}
Expr IRMutator::mutate_(const Call* op, const Expr& e) {
  std::vector<Expr> args;
  if (!mutate_all(op->args, &args)) return e;
  // Bring lanes to a common count (a vectorizing pass may have widened only some arguments).
  int lanes = 1;
  for (auto& a : args) lanes = std::max<int>(lanes, a.dtype().lanes);
  for (size_t i = 0; i < args.size(); ++i) {
    if (op->op == Intrinsic::kPrefetch) break;
    if (args[i].dtype().lanes != lanes) args[i] = Broadcast::make(args[i], lanes);
  }
  return Call::make(op->op, std::move(args));
}
Expr IRMutator::mutate_(const TensorRead* op, const Expr& e) {
  std::vector<Expr> idx;
  if (!mutate_all(op->indices, &idx)) return e;
  return TensorRead::make(op->producer, std::move(idx));
}
Expr IRMutator::mutate_(const Reduce* op, const Expr& e) {
  Expr src = mutate(op->source);
  Expr cond = op->condition.defined() ? mutate(op->condition) : op->condition;
  if (src.same_as(op->source) && cond.same_as(op->condition)) return e;
  return Reduce::make(op->op, src, op->axes, cond);
}
Expr IRMutator::mutate_(const BufferLoad* op, const Expr& e) {
  std::vector<Expr> idx;
  if (!mutate_all(op->indices, &idx)) return e;
  return BufferLoad::make(op->buffer, std::move(idx));
}
Expr IRMutator::mutate_(const Load* op, const Expr& e) {
  Expr i = mutate(op->index);
  Expr p = op->predicate.defined() ? mutate(op->predicate) : op->predicate;
  if (i.same_as(op->index) && p.same_as(op->predicate)) return e;
  return Load::make(op->buffer, i, p);
}
Expr IRMutator::mutate_(const Ramp* op, const Expr& e) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return Ramp::make(b, s, op->lanes);
}
Expr IRMutator::mutate_(const Broadcast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return Broadcast::make(v, op->lanes);
}
Expr IRMutator::mutate_(const Let* op, const Expr& e) {
  Expr v = mutate(op->value), b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return e;
  return Let::make(op->var, v, b);
}

Stmt IRMutator::mutate_(const For* op, const Stmt& s) {
  Expr mn = mutate(op->min), ex = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return s;
  return For::make(op->var, mn, ex, op->for_kind, b);
}
Stmt IRMutator::mutate_(const BufferStore* op, const Stmt& s) {
  Expr v = mutate(op->value);
  std::vector<Expr> idx;
  bool changed = mutate_all(op->indices, &idx);
  if (!changed && v.same_as(op->value)) return s;
  return BufferStore::make(op->buffer, v, std::move(idx));
}
Stmt IRMutator::mutate_(const Store* op, const Stmt& s) {
  Expr v = mutate(op->value), i = mutate(op->index);
  Expr p = op->predicate.defined() ? mutate(op->predicate) : op->predicate;
  if (v.same_as(op->value) && i.same_as(op->index) && p.same_as(op->predicate)) return s;
  return Store::make(op->buffer, v, i, p);
}
Stmt IRMutator::mutate_(const Allocate* op, const Stmt& s) {
  Stmt b = mutate(op->body);
  return b.same_as(op->body) ? s : Allocate::make(op->buffer, b);
}
Stmt IRMutator::mutate_(const Seq* op, const Stmt& s) {
  std::vector<Stmt> out;
  bool changed = false;
  for (auto& x : op->seq) {
    out.push_back(mutate(x));
    changed |= !out.back().same_as(x);
  }
  return changed ? Seq::make(std::move(out)) : s;
}
Stmt IRMutator::mutate_(const IfThenElse* op, const Stmt& s) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_case);
  Stmt f = op->else_case.defined() ? mutate(op->else_case) : op->else_case;
  if (c.same_as(op->cond) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
  return IfThenElse::make(c, t, f);
}
Stmt IRMutator::mutate_(const Evaluate* op, const Stmt& s) {
  Expr v = mutate(op->value);
  return v.same_as(op->value) ? s : Evaluate::make(v);
}
Stmt IRMutator::mutate_(const LetStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return LetStmt::make(op->var, v, b);
}
Stmt IRMutator::mutate_(const AttrStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return AttrStmt::make(op->key, v, b);
}

namespace {
class PostOrder : public IRVisitor {
 public:
  explicit PostOrder(const std::function<void(const Expr&)>& f) : f_(f) {}
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    IRVisitor::visit(e);
    f_(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
};

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : m_(m) {}
  using IRMutator::mutate;

 protected:
  Expr mutate_(const VarNode* op, const Expr& e) override {
    auto it = m_.find(op);
    return it == m_.end() ? e : it->second;
  }

 private:
  const VarMap& m_;
};
class ReadRewriter : public IRMutator {
 public:
  explicit ReadRewriter(const std::function<Expr(const TensorRead*, const Expr&)>& f) : f_(f) {}
  using IRMutator::mutate;

 protected:
  Expr mutate_(const TensorRead* op, const Expr& e) override {
    Expr r = IRMutator::mutate_(op, e);
    return f_(r.as<TensorRead>(), r);
  }

 private:
  const std::function<Expr(const TensorRead*, const Expr&)>& f_;
};
}  // namespace

Expr rewrite_tensor_reads(const Expr& e, const std::function<Expr(const TensorRead*, const Expr&)>& f) {
  return ReadRewriter(f).mutate(e);
}

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f) { PostOrder(f).visit(e); }
void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& f) { PostOrder(f).visit(s); }

Expr substitute(const Expr& e, const VarMap& m) { return m.empty() ? e : Substituter(m).mutate(e); }
Stmt substitute(const Stmt& s, const VarMap& m) { return m.empty() ? s : Substituter(m).mutate(s); }

bool uses_var(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  bool found = false;
  post_order_visit(e, [&](const Expr& x) {
    if (auto* v = x.as<VarNode>()) found |= pred(v);
  });
  return found;
}
bool uses_var(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  bool found = false;
  post_order_visit(s, [&](const Expr& x) {
    if (auto* v = x.as<VarNode>()) found |= pred(v);
  });
  return found;
}

}  // namespace tessel::ir
