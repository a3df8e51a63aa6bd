// Virtual-thread injection; see include/tessel/lower/inject_virtual_thread.h.
//
// Guide:
//  - Injector: finds each "virtual_thread" loop (innermost first) and hands its body to VirtualThread.
//  - VirtualThread::touched_: which buffers and let variables depend on v (a fixpoint over the stores).
//  - VirtualThread::expand: per-virtual-thread copies of the touched buffers allocated inside the loop.
//  - VirtualThread::inject: moves the loop inward; statements that do not depend on v run once, the rest
//    are copied per virtual thread.
#include "tessel/lower/inject_virtual_thread.h"

#include <map>
#include <set>
#include <type_traits>

#include "tessel/ir/buffer.h"
#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"
#include "tessel/ir/simplify.h"
#include "tessel/support/error.h"

namespace tessel::lower {

using namespace ir;

namespace {

class VirtualThread {
 public:
  VirtualThread(Var v, int n) : v_(std::move(v)), n_(n) { vars_.insert(v_.get()); }

  Stmt run(const Stmt& body) {
    find_touched(body);
    Stmt s = body;
    if (!expand(&s)) return replicate(body);  // a touched buffer of unknown size: plain copies
    return inject(s);
  }

 private:
  // True when x (an Expr or a Stmt) depends on v: mentions it (or a let bound from it) or loads a buffer
  // that does; a statement also when it writes such a buffer.
  template <class Node>
  bool depends(const Node& x) const {
    if (uses_var(x, [&](const VarNode* y) { return vars_.count(y) > 0; })) return true;
    bool hit = false;
    post_order_visit(x, [&](const Expr& e) {
      if (auto* l = e.as<Load>()) hit = hit || bufs_.count(l->buffer.get());
    });
    if constexpr (std::is_same_v<Node, Stmt>) hit = hit || writes_touched(x);
    return hit;
  }
  bool writes_touched(const Stmt& s) const {
    struct W : IRVisitor {
      const std::set<const BufferNode*>* bufs;
      bool hit = false;
      void visit_(const Store* op) override {
        hit = hit || bufs->count(op->buffer.get());
        IRVisitor::visit_(op);
      }
    } w;
    w.bufs = &bufs_;
    w.visit(s);
    return w.hit;
  }

  // Fixpoint: a store whose index, value or guard depends on v touches its buffer; a let or loop bound
  // from something that depends on v is touched too.
  void find_touched(const Stmt& body) {
    struct Pass : IRVisitor {
      VirtualThread* self;
      bool changed = false;
      void visit_(const Store* op) override {
        if (!self->bufs_.count(op->buffer.get()) &&
            (self->depends(op->index) || self->depends(op->value) ||
             (op->predicate.defined() && self->depends(op->predicate))))
          self->bufs_.insert(op->buffer.get()), changed = true;
        IRVisitor::visit_(op);
      }
      void visit_(const LetStmt* op) override {
        if (!self->vars_.count(op->var.get()) && self->depends(op->value))
          self->vars_.insert(op->var.get()), changed = true;
        IRVisitor::visit_(op);
      }
      void visit_(const For* op) override {
        if (!self->vars_.count(op->var.get()) && (self->depends(op->min) || self->depends(op->extent)))
          self->vars_.insert(op->var.get()), changed = true;
        IRVisitor::visit_(op);
      }
    };
    for (bool again = true; again;) {
      Pass p;
      p.self = this;
      p.visit(body);
      again = p.changed;
    }
  }

  // Gives each touched buffer allocated in s n copies: size n * S, accessed at index + v * S. False when
  // one has no constant size.
  bool expand(Stmt* s) {
    struct Expander : IRMutator {
      VirtualThread* self;
      std::map<const BufferNode*, std::pair<Buffer, int64_t>> grown;  // old -> (new, elements per copy)
      bool ok = true;
      Stmt mutate_(const Allocate* op, const Stmt& st) override {
        if (!self->bufs_.count(op->buffer.get())) return IRMutator::mutate_(op, st);
        Expr elements = simplify(buffer_num_elements(*op->buffer));
        const int64_t* size = as_const_int(elements);
        if (!size) {
          ok = false;
          return st;
        }
        const BufferNode& b = *op->buffer;
        Buffer nb = make_buffer(b.name, b.dtype, {Expr(int(*size * self->n_))}, {}, b.scope, b.align_bytes);
        grown[op->buffer.get()] = {nb, *size};
        self->bufs_.insert(nb.get());
        return Allocate::make(nb, mutate(op->body));
      }
      Expr offset(const Expr& index, int64_t per) {
        Expr off = Expr(self->v_) * int(per);
        // A ramp stays a ramp (one contiguous vector access); other indices get off (broadcast if vector).
        if (auto* r = index.as<Ramp>()) return Ramp::make(r->base + off, r->stride, r->lanes);
        return index + off;
      }
      Stmt mutate_(const Store* op, const Stmt& st) override {
        Stmt m = IRMutator::mutate_(op, st);
        auto it = grown.find(op->buffer.get());
        if (it == grown.end()) return m;
        auto* q = m.as<Store>();
        return Store::make(it->second.first, q->value, offset(q->index, it->second.second), q->predicate);
      }
      Expr mutate_(const Load* op, const Expr& e) override {
        Expr m = IRMutator::mutate_(op, e);
        auto it = grown.find(op->buffer.get());
        if (it == grown.end()) return m;
        auto* q = m.as<Load>();
        return Load::make(it->second.first, offset(q->index, it->second.second), q->predicate);
      }
    } e;
    e.self = this;
    Stmt out = e.mutate(*s);
    if (!e.ok) return false;
    *s = out;
    return true;
  }

  Stmt replicate(const Stmt& s) const {
    std::vector<Stmt> copies;
    for (int c = 0; c < n_; ++c) copies.push_back(substitute(s, VarMap{{v_.get(), Expr(c)}}));
    return Seq::make(copies);
  }

  Stmt inject(const Stmt& s) const {
    if (!depends(s)) return s;  // the same in every virtual thread: once
    if (auto* q = s.as<Seq>()) {
      std::vector<Stmt> out;
      for (auto& x : q->seq) out.push_back(inject(x));
      return Seq::make(out);
    }
    if (auto* a = s.as<Allocate>()) return Allocate::make(a->buffer, inject(a->body));
    if (auto* f = s.as<For>()) {
      if (depends(f->min) || depends(f->extent) || f->for_kind == ForKind::kVectorized) return replicate(s);
      return For::make(f->var, f->min, f->extent, f->for_kind, inject(f->body));
    }
    if (auto* i = s.as<IfThenElse>()) {
      if (depends(i->cond)) return replicate(s);
      return IfThenElse::make(i->cond, inject(i->then_case), i->else_case.defined() ? inject(i->else_case) : Stmt());
    }
    if (auto* l = s.as<LetStmt>()) {
      if (depends(l->value)) return replicate(s);
      return LetStmt::make(l->var, l->value, inject(l->body));
    }
    if (auto* a = s.as<AttrStmt>()) {
      if (depends(a->value)) return replicate(s);
      return AttrStmt::make(a->key, a->value, inject(a->body));
    }
    return replicate(s);
  }

  Var v_;
  int n_;
  std::set<const VarNode*> vars_;     // v and the lets / loop variables bound from it
  std::set<const BufferNode*> bufs_;  // buffers whose contents depend on v
};

class Injector : public IRMutator {
  Stmt mutate_(const AttrStmt* op, const Stmt& s) override {
    if (op->key != kVirtualThreadAttr) return IRMutator::mutate_(op, s);
    Stmt body = mutate(op->body);  // nested virtual threads first
    auto* f = body.as<For>();
    const int64_t* n = f ? as_const_int(f->extent) : nullptr;
    const int64_t* lo = f ? as_const_int(f->min) : nullptr;
    TESSEL_ICHECK(f && n && lo && *lo == 0) << "a virtual_thread region must hold one loop from 0 with a constant extent";
    return VirtualThread(f->var, int(*n)).run(f->body);
  }
};

}  // namespace

Stmt inject_virtual_thread(const Stmt& s) { return Injector().mutate(s); }

}  // namespace tessel::lower
