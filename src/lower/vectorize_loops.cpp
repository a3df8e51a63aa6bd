// vectorize_loops: For(v, 0, L, Vectorized) -> the body with v replaced by ramp(0, 1, L).
// Scalar operands of vector operations are broadcast; index arithmetic keeps Ramp form
// (ramp + x = ramp(base + x, stride)) so contiguous accesses become single vector loads/stores.
// A guard that depends on v becomes a lane predicate on the loads and stores it controls, and so does
// the condition of an if_then_else. Bodies with inner loops, allocations or colliding stores fall
// back to the scalar loop.
#include "tessel/lower/vectorize_loops.h"

#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"

namespace tessel::lower {

using namespace ir;

namespace {

constexpr int64_t kMaxLanes = 64;

struct CannotVectorize {
  std::string why;
};

Expr widen(const Expr& e, int lanes) {
  if (e.dtype().lanes == lanes) return e;
  TESSEL_ICHECK(e.dtype().is_scalar()) << "cannot widen " << e.dtype() << " to " << lanes << " lanes";
  return Broadcast::make(e, lanes);
}

class Vectorizer : public IRMutator {
 public:
  Vectorizer(Var v, Expr min, int lanes) : v_(std::move(v)), min_(std::move(min)), lanes_(lanes) {}
  using IRMutator::mutate;

 protected:
  Expr mutate_(const VarNode* op, const Expr& e) override {
    if (op != v_.get()) return e;
    return Ramp::make(min_, IntImm::make(min_.dtype(), 1), lanes_);
  }

  // Binary nodes: keep scalars scalar; fold ramp/broadcast index arithmetic.
  template <class T>
  Expr binary(const T* op, const Expr& e) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    if (a.dtype().is_scalar() && b.dtype().is_scalar()) return T::make(a, b);
    constexpr ExprKind K = T::kKind;
    auto* ra = a.as<Ramp>();
    auto* rb = b.as<Ramp>();
    auto* ba = a.as<Broadcast>();
    auto* bb = b.as<Broadcast>();
    if constexpr (K == ExprKind::Add || K == ExprKind::Sub) {
      if (ra && b.dtype().is_scalar()) return Ramp::make(T::make(ra->base, b), ra->stride, ra->lanes);
      if (ra && bb) return Ramp::make(T::make(ra->base, bb->value), ra->stride, ra->lanes);
      if (rb && a.dtype().is_scalar() && K == ExprKind::Add) return Ramp::make(a + rb->base, rb->stride, rb->lanes);
      if (rb && ba && K == ExprKind::Add) return Ramp::make(ba->value + rb->base, rb->stride, rb->lanes);
      if (ra && rb) return Ramp::make(T::make(ra->base, rb->base), T::make(ra->stride, rb->stride), ra->lanes);
    }
    if constexpr (K == ExprKind::Mul) {
      if (ra && b.dtype().is_scalar()) return Ramp::make(ra->base * b, ra->stride * b, ra->lanes);
      if (rb && a.dtype().is_scalar()) return Ramp::make(a * rb->base, a * rb->stride, rb->lanes);
    }
    return T::make(widen(a, lanes_), widen(b, lanes_));
  }
#define TESSEL_VBIN(T) \
  Expr mutate_(const T* op, const Expr& e) override { return binary(op, e); }
  TESSEL_VBIN(Add) TESSEL_VBIN(Sub) TESSEL_VBIN(Mul) TESSEL_VBIN(Div) TESSEL_VBIN(Mod) TESSEL_VBIN(Min)
  TESSEL_VBIN(Max) TESSEL_VBIN(EQ) TESSEL_VBIN(NE) TESSEL_VBIN(LT) TESSEL_VBIN(LE) TESSEL_VBIN(And) TESSEL_VBIN(Or)
#undef TESSEL_VBIN

  Expr mutate_(const Select* op, const Expr& e) override {
    Expr c = mutate(op->cond), t = mutate(op->true_value), f = mutate(op->false_value);
    int l = std::max({c.dtype().lanes, t.dtype().lanes, f.dtype().lanes});
    if (l == 1) return Select::make(c, t, f);
    return Select::make(c.dtype().is_scalar() ? c : widen(c, l), widen(t, l), widen(f, l));
  }

  Expr mutate_(const Call* op, const Expr& e) override {
    if (op->op == Intrinsic::kIfThenElse) {
      Expr c = mutate(op->args[0]);
      if (c.dtype().is_scalar()) return IRMutator::mutate_(op, e);
      // Lane-wise: each side evaluated only where its lanes are selected (predicated loads).
      Expr saved = pred_;
      pred_ = pred_.defined() ? (saved && c) : c;
      Expr t = widen(mutate(op->args[1]), lanes_);
      pred_ = saved.defined() ? (saved && !c) : !c;
      Expr f = widen(mutate(op->args[2]), lanes_);
      pred_ = saved;
      return Select::make(c, t, f);
    }
    if (op->op == Intrinsic::kPrefetch) throw CannotVectorize{"prefetch inside a vectorized loop"};
    return IRMutator::mutate_(op, e);
  }

  Expr mutate_(const Load* op, const Expr& e) override {
    Expr idx = mutate(op->index);
    if (idx.dtype().is_scalar()) {
      if (!pred_.defined()) return idx.same_as(op->index) ? e : Load::make(op->buffer, idx);
      // Under a lane predicate a scalar read must not happen when no lane is active.
      idx = Broadcast::make(idx, lanes_);
    }
    return Load::make(op->buffer, idx, pred_);
  }

  Expr mutate_(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (v.dtype().is_scalar()) return Let::make(op->var, v, mutate(op->body));
    return mutate(substitute(op->body, {{op->var.get(), op->value}}));
  }

  Stmt mutate_(const Store* op, const Stmt& s) override {
    Expr idx = mutate(op->index), val = mutate(op->value);
    if (idx.dtype().is_scalar()) {
      // Every lane would write the same element: only correct as a scalar loop.
      throw CannotVectorize{"store to " + op->buffer->name + " does not depend on the vectorized loop"};
    }
    return Store::make(op->buffer, widen(val, lanes_), idx, pred_);
  }

  Stmt mutate_(const IfThenElse* op, const Stmt& s) override {
    Expr c = mutate(op->cond);
    if (c.dtype().is_scalar()) {
      Stmt t = mutate(op->then_case);
      Stmt f = op->else_case.defined() ? mutate(op->else_case) : Stmt();
      return IfThenElse::make(c, t, f);
    }
    Expr saved = pred_;
    pred_ = saved.defined() ? (saved && c) : c;
    Stmt t = mutate(op->then_case);
    Stmt f;
    if (op->else_case.defined()) {
      pred_ = saved.defined() ? (saved && !c) : !c;
      f = mutate(op->else_case);
    }
    pred_ = saved;
    return Seq::make({t, f});
  }

  Stmt mutate_(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (v.dtype().is_scalar()) return LetStmt::make(op->var, v, mutate(op->body));
    return mutate(substitute(op->body, {{op->var.get(), op->value}}));
  }

  Stmt mutate_(const For* op, const Stmt&) override {
    throw CannotVectorize{"inner loop " + op->var.name()};
  }
  Stmt mutate_(const Allocate* op, const Stmt&) override {
    throw CannotVectorize{"allocation of " + op->buffer->name};
  }
  Stmt mutate_(const Evaluate*, const Stmt&) override { throw CannotVectorize{"evaluate statement"}; }

 private:
  Var v_;
  Expr min_;
  int lanes_;
  Expr pred_;
};

class LoopVectorizer : public IRMutator {
 public:
  using IRMutator::mutate;

 protected:
  Stmt mutate_(const For* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::kVectorized) {
      return body.same_as(op->body) ? s : For::make(op->var, op->min, op->extent, op->for_kind, body);
    }
    const int64_t* ext = as_const_int(op->extent);
    auto serial = [&](const std::string& why) {
      TESSEL_LOG(1) << "loop " << op->var.name() << " stays scalar: " << why << "\n";
      return For::make(op->var, op->min, op->extent, ForKind::kSerial, body);
    };
    if (!ext) return serial("extent is not constant");
    if (*ext == 1) return substitute(body, {{op->var.get(), op->min}});
    // Extents are known only after bound inference (a stage computed inside a tile gets the tile's
    // extent), so an over-long vector loop is a lowering decision, not a schedule error.
    if (*ext > kMaxLanes) return serial("extent " + std::to_string(*ext) + " is over " + std::to_string(kMaxLanes) + " lanes");
    try {
      return Vectorizer(op->var, op->min, int(*ext)).mutate(body);
    } catch (const CannotVectorize& c) {
      return serial(c.why);
    }
  }
};

}  // namespace

Stmt vectorize_loops(const Stmt& s) { return LoopVectorizer().mutate(s); }

}  // namespace tessel::lower
