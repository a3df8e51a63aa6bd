// unroll_loops: explicit unrolling of loops marked Unrolled, and automatic unrolling of small inner
// loops inside a "pragma_auto_unroll_max_step" region (loops whose fully unrolled body is at most
// that many statements; innermost first).
#include "tessel/lower/unroll_loops.h"

#include <limits>

#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"

namespace tessel::lower {

using namespace ir;

namespace {

// Unrolled loops longer than this stay loops (extents are known only after bound inference).
constexpr int64_t kMaxExplicitUnroll = 1024;
constexpr int64_t kNotUnrollable = std::numeric_limits<int64_t>::max() / 4;

Stmt unroll(const For* op, const Stmt& body) {
  int64_t n = *as_const_int(op->extent);
  std::vector<Stmt> copies;
  const int64_t* mn = as_const_int(op->min);
  for (int64_t i = 0; i < n; ++i) {
    Expr v = mn ? IntImm::make(op->min.dtype(), *mn + i) : op->min + Expr(IntImm::make(op->min.dtype(), i));
    copies.push_back(substitute(body, {{op->var.get(), v}}));
  }
  return Seq::make(copies);
}

class Unroller : public IRMutator {
 public:
  using IRMutator::mutate;

  // Steps of the last mutated statement if it has no loops left (kNotUnrollable otherwise).
  int64_t steps = 0;

 protected:
  Stmt mutate_(const AttrStmt* op, const Stmt& s) override {
    if (op->key != "pragma_auto_unroll_max_step") return IRMutator::mutate_(op, s);
    int64_t saved = max_step_;
    max_step_ = *as_const_int(op->value);
    Stmt body = mutate(op->body);
    max_step_ = saved;
    return body;
  }
  Stmt mutate_(const For* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    int64_t body_steps = steps;
    const int64_t* ext = as_const_int(op->extent);
    bool explicit_unroll = op->for_kind == ForKind::kUnrolled && ext && *ext <= kMaxExplicitUnroll;
    bool auto_unroll = op->for_kind == ForKind::kSerial && ext && max_step_ > 0 && body_steps < kNotUnrollable &&
                       *ext * body_steps <= max_step_;
    if (explicit_unroll || auto_unroll) {
      steps = body_steps < kNotUnrollable ? *ext * body_steps : kNotUnrollable;
      return unroll(op, body);
    }
    steps = kNotUnrollable;
    ForKind k = op->for_kind == ForKind::kUnrolled ? ForKind::kSerial : op->for_kind;
    if (body.same_as(op->body) && k == op->for_kind) return s;
    return For::make(op->var, op->min, op->extent, k, body);
  }
  Stmt mutate_(const Seq* op, const Stmt& s) override {
    std::vector<Stmt> out;
    int64_t total = 0;
    for (auto& x : op->seq) {
      out.push_back(mutate(x));
      total = std::min(kNotUnrollable, total + steps);
    }
    steps = total;
    return Seq::make(out);
  }
  Stmt mutate_(const IfThenElse* op, const Stmt& s) override {
    Stmt t = mutate(op->then_case);
    int64_t st = steps;
    Stmt f;
    if (op->else_case.defined()) {
      f = mutate(op->else_case);
      st = std::min(kNotUnrollable, st + steps);
    }
    steps = std::min(kNotUnrollable, st + 1);
    return IfThenElse::make(op->cond, t, f);
  }
  Stmt mutate_(const Allocate* op, const Stmt& s) override {
    Stmt b = mutate(op->body);
    steps = kNotUnrollable;  // never copy allocations
    return b.same_as(op->body) ? s : Allocate::make(op->buffer, b);
  }
  Stmt mutate_(const LetStmt* op, const Stmt& s) override {
    Stmt b = mutate(op->body);
    steps = std::min(kNotUnrollable, steps + 1);
    return b.same_as(op->body) ? s : LetStmt::make(op->var, op->value, b);
  }
  Stmt mutate_(const Store* op, const Stmt& s) override {
    steps = 1;
    return s;
  }
  Stmt mutate_(const Evaluate* op, const Stmt& s) override {
    steps = 1;
    return s;
  }

 private:
  int64_t max_step_ = 0;
};

}  // namespace

Stmt unroll_loops(const Stmt& s) { return Unroller().mutate(s); }

}  // namespace tessel::lower
