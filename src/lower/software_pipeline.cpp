// Software pipelining of shared-memory fetches; see include/tessel/lower/software_pipeline.h.
//
// Guide:
//  - Pipeliner::mutate_(AttrStmt): finds the marked loop (under any other pragmas), transforms it or
//    leaves it as it was, and drops the pragma.
//  - split_fetches: the loop body's leading statements that write only the loop's shared buffers and
//    read none of them (the fetches), and the rest (the compute).
//  - Staging: one fetch nest rebuilt twice around its single store, once storing into the register
//    buffer R (the loads) and once from R into shared memory (the stores).
#include "tessel/lower/software_pipeline.h"

#include <set>

#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"

namespace tessel::lower {

using namespace ir;

namespace {

struct Accesses : IRVisitor {
  std::set<const BufferNode*> reads, writes;
  int stores = 0;
  void visit_(const Load* op) override {
    reads.insert(op->buffer.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Store* op) override {
    writes.insert(op->buffer.get());
    ++stores;
    IRVisitor::visit_(op);
  }
};

Accesses accesses(const Stmt& s) {
  Accesses a;
  a.visit(s);
  return a;
}

bool any_in(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
  for (auto* x : a)
    if (b.count(x)) return true;
  return false;
}

// One fetch nest: thread-bound loops, other loops (they index the staging buffer), guards, lets and
// one store into shared memory.
class Staging {
 public:
  // False when `fetch` does not have that shape.
  bool analyze(const Stmt& fetch) {
    if (accesses(fetch).stores != 1) return false;
    return walk(fetch);
  }
  int64_t elements() const { return elements_; }
  const Store* store() const { return store_; }

  // The nest with its store replaced by make(store, index into R); staging loops unrolled.
  Stmt rebuild(const Stmt& s, const std::function<Stmt(const Store*, const Expr&)>& make) const {
    if (auto* f = s.as<For>()) {
      ForKind k = f->for_kind == ForKind::kSerial ? ForKind::kUnrolled : f->for_kind;
      return For::make(f->var, f->min, f->extent, k, rebuild(f->body, make));
    }
    if (auto* i = s.as<IfThenElse>()) return IfThenElse::make(i->cond, rebuild(i->then_case, make));
    if (auto* l = s.as<LetStmt>()) return LetStmt::make(l->var, l->value, rebuild(l->body, make));
    return make(s.as<Store>(), index_);
  }

 private:
  bool walk(const Stmt& s) {
    if (auto* f = s.as<For>()) {
      if (is_thread_bound(f->for_kind)) return walk(f->body);
      if (f->for_kind == ForKind::kParallel || is_gpu_bound(f->for_kind)) return false;
      const int64_t* mn = as_const_int(f->min);
      const int64_t* ex = as_const_int(f->extent);
      if (!mn || !ex || *ex <= 0) return false;
      // Row-major over the staging loops, outermost first: index = index * extent + (var - min).
      Expr v = *mn == 0 ? Expr(f->var) : Expr(f->var) - Expr(int(*mn));
      index_ = index_.defined() ? index_ * Expr(int(*ex)) + v : v;
      elements_ *= *ex;
      return walk(f->body);
    }
    if (auto* i = s.as<IfThenElse>()) return !i->else_case.defined() && walk(i->then_case);
    if (auto* l = s.as<LetStmt>()) return walk(l->body);
    if (auto* st = s.as<Store>()) {
      if (st->value.dtype().lanes != 1) return false;  // vector stores come later (vectorize_loops)
      store_ = st;
      if (!index_.defined()) index_ = Expr(0);
      return true;
    }
    return false;
  }

  Expr index_;
  int64_t elements_ = 1;
  const Store* store_ = nullptr;
};

class Pipeliner : public IRMutator {
 protected:
  Stmt mutate_(const AttrStmt* op, const Stmt& s) override {
    if (op->key != "pragma_software_pipeline") return IRMutator::mutate_(op, s);
    Stmt inner = mutate(op->body);
    const int64_t* on = as_const_int(op->value);
    if (!on || *on == 0) return inner;
    // The loop under any other pragmas (they stay around the result).
    std::vector<const AttrStmt*> wraps;
    Stmt cur = inner;
    while (auto* a = cur.as<AttrStmt>()) wraps.push_back(a), cur = a->body;
    auto* loop = cur.as<For>();
    if (!loop) return inner;
    Stmt out = pipeline(loop);
    if (!out.defined()) return inner;
    for (auto it = wraps.rbegin(); it != wraps.rend(); ++it) out = AttrStmt::make((*it)->key, (*it)->value, out);
    return out;
  }

 private:
  // The pipelined loop, or an undefined Stmt when the loop does not have the fetch-compute shape.
  static Stmt pipeline(const For* loop) {
    const int64_t* ext = as_const_int(loop->extent);
    if (!ext || *ext < 2 || loop->for_kind != ForKind::kSerial) return Stmt();
    std::vector<Buffer> shared;
    Stmt body = loop->body;
    while (auto* a = body.as<Allocate>()) {
      if (a->buffer->scope != MemScope::kShared) return Stmt();
      shared.push_back(a->buffer);
      body = a->body;
    }
    auto* seq = body.as<Seq>();
    if (shared.empty() || !seq) return Stmt();
    std::set<const BufferNode*> sh;
    for (auto& b : shared) sh.insert(b.get());
    size_t nf = 0;
    std::set<const BufferNode*> fetched_from;
    for (; nf < seq->seq.size(); ++nf) {
      Accesses a = accesses(seq->seq[nf]);
      bool only_shared = !a.writes.empty();
      for (auto* w : a.writes) only_shared = only_shared && sh.count(w);
      if (!only_shared || any_in(a.reads, sh)) break;
      fetched_from.insert(a.reads.begin(), a.reads.end());
    }
    if (nf == 0 || nf == seq->seq.size()) return Stmt();
    std::vector<Stmt> compute(seq->seq.begin() + nf, seq->seq.end());
    Accesses ca = accesses(Seq::make(compute));
    if (any_in(ca.writes, sh) || any_in(ca.writes, fetched_from)) return Stmt();

    Expr next = Expr(loop->var) + Expr(1);
    VarMap to_next{{loop->var.get(), next}}, to_first{{loop->var.get(), loop->min}};
    std::vector<Stmt> prologue, loads, stores;
    std::vector<Buffer> staged;
    int64_t total = 0;
    for (size_t i = 0; i < nf; ++i) {
      Staging st;
      if (!st.analyze(seq->seq[i])) return Stmt();
      total += st.elements();
      if (total > kMaxStagedElements) return Stmt();
      const Store* s0 = st.store();
      Buffer r = make_buffer(s0->buffer->name + ".stage", s0->value.dtype(), {Expr(int(st.elements()))}, {},
                             MemScope::kLocal, 16);
      staged.push_back(r);
      prologue.push_back(substitute(seq->seq[i], to_first));
      loads.push_back(substitute(st.rebuild(seq->seq[i], [&](const Store* s, const Expr& ri) {
        return Store::make(r, s->value, ri, s->predicate);
      }), to_next));
      stores.push_back(substitute(st.rebuild(seq->seq[i], [&](const Store* s, const Expr& ri) {
        return Store::make(s->buffer, Load::make(r, ri, s->predicate), s->index, s->predicate);
      }), to_next));
    }
    Expr more = next < loop->min + loop->extent;
    std::vector<Stmt> items{IfThenElse::make(more, Seq::make(loads))};
    items.insert(items.end(), compute.begin(), compute.end());
    items.push_back(IfThenElse::make(more, Seq::make(stores)));
    prologue.push_back(For::make(loop->var, loop->min, loop->extent, loop->for_kind, Seq::make(items)));
    Stmt out = Seq::make(prologue);
    for (auto it = shared.rbegin(); it != shared.rend(); ++it) out = Allocate::make(*it, out);
    for (auto it = staged.rbegin(); it != staged.rend(); ++it) out = Allocate::make(*it, out);
    return out;
  }
};

}  // namespace

Stmt software_pipeline(const Stmt& s) { return Pipeliner().mutate(s); }

}  // namespace tessel::lower
