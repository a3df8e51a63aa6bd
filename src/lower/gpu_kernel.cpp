// GPU kernel passes: barrier insertion, launch-shape inference with binding checks, limit checks.
//
// Guide:
//  - SharedAccess: shared-scope buffers a statement reads and writes (deeply), leaving out buffers
//    indexed only by the variable of an enclosing thread loop (each thread's own slot).
//  - BarrierInserter: per Seq, a barrier before the first statement that reads what an earlier one wrote
//    since the last barrier (or writes what was read/written); per loop, one at the top of the body when
//    the body both writes and reads a shared buffer (loop-carried write-after-read).
//  - LaunchInference: walks bound loops with the stack of enclosing bound loops, records extents and
//    checks the binding rules; a second walk checks barriers are never under a guard that depends on
//    the thread index (a thread loop shorter than the launch, or an if on a thread variable).
#include "tessel/lower/gpu_kernel.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessel/ir/functor.h"
#include "tessel/ir/printer.h"

namespace tessel::lower {

using namespace ir;

namespace {

// Shared buffers a statement reads and writes. An access whose index is exactly the variable of an
// enclosing thread loop (`thread_vars`) touches only the current thread's slot: a buffer accessed only
// that way (one variable) needs no barrier between its writes and reads.
struct SharedAccess : IRVisitor {
  explicit SharedAccess(const std::set<const VarNode*>& tv) : thread_vars(tv) {}
  const std::set<const VarNode*>& thread_vars;
  std::set<const BufferNode*> reads, writes;
  void visit_(const Load* op) override {
    note(op->buffer.get(), op->index, false);
    IRVisitor::visit_(op);
  }
  void visit_(const Store* op) override {
    note(op->buffer.get(), op->index, true);
    IRVisitor::visit_(op);
  }
  /** Buffers every access of which (in what was visited) is the current thread's own slot. */
  std::set<const BufferNode*> private_buffers() const {
    std::set<const BufferNode*> out;
    for (auto& [b, v] : own_slot)
      if (v) out.insert(b);
    return out;
  }
  /** Forgets accesses to the given buffers. */
  void drop(const std::set<const BufferNode*>& bs) {
    for (auto* b : bs) reads.erase(b), writes.erase(b);
  }

 private:
  void note(const BufferNode* b, const Expr& index, bool write) {
    if (b->scope != MemScope::kShared) return;
    (write ? writes : reads).insert(b);
    auto* v = index.as<VarNode>();
    const VarNode* own = v && thread_vars.count(v) ? v : nullptr;
    auto [it, fresh] = own_slot.emplace(b, own);
    if (!fresh && it->second != own) it->second = nullptr;
  }
  std::map<const BufferNode*, const VarNode*> own_slot;  // the one thread variable indexing b, or null
};

bool intersects(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
  for (auto* x : a)
    if (b.count(x)) return true;
  return false;
}

Stmt barrier() { return Evaluate::make(Call::make(Intrinsic::kSyncThreads, {})); }

bool is_barrier(const Stmt& s) {
  auto* e = s.as<Evaluate>();
  auto* c = e ? e->value.as<Call>() : nullptr;
  return c && c->op == Intrinsic::kSyncThreads;
}

// True when every execution of s passes a barrier before touching memory: s is a barrier, or starts
// with one (through allocations, lets and loops that run at least once).
bool starts_with_barrier(const Stmt& s) {
  if (is_barrier(s)) return true;
  if (auto* q = s.as<Seq>()) return !q->seq.empty() && starts_with_barrier(q->seq[0]);
  if (auto* a = s.as<Allocate>()) return starts_with_barrier(a->body);
  if (auto* l = s.as<LetStmt>()) return starts_with_barrier(l->body);
  if (auto* a = s.as<AttrStmt>()) return starts_with_barrier(a->body);
  if (auto* f = s.as<For>()) {
    const int64_t* e = as_const_int(f->extent);
    return !is_gpu_bound(f->for_kind) && e && *e >= 1 && starts_with_barrier(f->body);
  }
  return false;
}

class BarrierInserter : public IRMutator {
 public:
  explicit BarrierInserter(const Stmt& kernel) {
    std::set<int> dims;
    struct V : IRVisitor {
      std::set<int>* d;
      void visit_(const For* op) override {
        if (is_thread_bound(op->for_kind)) d->insert(gpu_dim(op->for_kind));
        IRVisitor::visit_(op);
      }
    } v;
    v.d = &dims;
    v.visit(kernel);
    one_thread_dim_ = dims.size() <= 1;
  }

 protected:
  Stmt mutate_(const Seq* op, const Stmt& s) override {
    // Buffers private to each thread across the whole sequence: no ordering needed between threads.
    SharedAccess whole(thread_vars_);
    whole.visit(s);
    std::set<const BufferNode*> own = whole.private_buffers();
    std::vector<Stmt> out;
    std::set<const BufferNode*> pending_r, pending_w;
    for (auto& c0 : op->seq) {
      Stmt c = mutate(c0);
      if (is_barrier(c)) {
        pending_r.clear(), pending_w.clear();
        out.push_back(c);
        continue;
      }
      SharedAccess a(thread_vars_);
      a.visit(c);
      a.drop(own);
      if (intersects(a.reads, pending_w) || intersects(a.writes, pending_r) || intersects(a.writes, pending_w)) {
        out.push_back(barrier());
        pending_r.clear(), pending_w.clear();
      }
      out.push_back(c);
      pending_r.insert(a.reads.begin(), a.reads.end());
      pending_w.insert(a.writes.begin(), a.writes.end());
    }
    return Seq::make(out);
  }
  Stmt mutate_(const For* op, const Stmt& s) override {
    // A thread variable names a thread's own slot only when it is the block's one thread dimension.
    bool thread = is_thread_bound(op->for_kind) && one_thread_dim_;
    if (thread) thread_vars_.insert(op->var.get());
    Stmt body = mutate(op->body);
    if (thread) thread_vars_.erase(op->var.get());
    if (!is_gpu_bound(op->for_kind)) {
      SharedAccess a(thread_vars_);
      a.visit(body);
      a.drop(a.private_buffers());
      if (intersects(a.writes, a.reads) && !starts_with_barrier(body)) body = Seq::make({barrier(), body});
    }
    if (body.same_as(op->body)) return s;
    return For::make(op->var, op->min, op->extent, op->for_kind, body);
  }

 private:
  std::set<const VarNode*> thread_vars_;
  bool one_thread_dim_ = true;
};

std::string loop_desc(const For* op) {
  return std::string("loop ") + op->var.name() + " (" + for_kind_name(op->for_kind) + ", extent " +
         to_string(op->extent) + ")";
}

class LaunchInference : public IRVisitor {
 public:
  GpuLaunch launch;
  bool any_bound = false;
  std::array<bool, 3> grid_set{false, false, false};

 protected:
  void visit_(const AttrStmt* op) override {
    if (op->key == "pragma_min_blocks_per_sm")
      if (const int64_t* v = as_const_int(op->value)) launch.min_blocks_per_sm = std::max(launch.min_blocks_per_sm, *v);
    IRVisitor::visit_(op);
  }
  void visit_(const For* op) override {
    TESSEL_CHECK(op->for_kind != ForKind::kParallel)
        << loop_desc(op) << ": parallel loops run on the CPU thread pool; on a GPU bind the loop to blockIdx or "
                            "threadIdx instead";
    if (!is_gpu_bound(op->for_kind)) {
      IRVisitor::visit_(op);
      return;
    }
    any_bound = true;
    const int64_t* ext = as_const_int(op->extent);
    TESSEL_CHECK(ext) << loop_desc(op) << ": a loop bound to a GPU index needs a constant extent";
    const int64_t* mn = as_const_int(op->min);
    TESSEL_CHECK(mn && *mn == 0) << loop_desc(op) << ": a loop bound to a GPU index must start at 0";
    int d = gpu_dim(op->for_kind);
    if (is_block_bound(op->for_kind)) {
      for (auto* o : stack_)
        TESSEL_CHECK(!is_thread_bound(o->for_kind) && o->for_kind != op->for_kind)
            << loop_desc(op) << " is inside " << loop_desc(o)
            << "; block loops must enclose every thread loop and not repeat a block index";
      TESSEL_CHECK(!grid_set[d] || launch.grid[d] == *ext)
          << loop_desc(op) << ": " << for_kind_name(op->for_kind) << " is already bound with extent "
          << launch.grid[d] << "; one kernel has one grid";
      grid_set[d] = true;
      launch.grid[d] = *ext;
    } else {
      for (auto* o : stack_)
        if (o->for_kind == op->for_kind)
          TESSEL_CHECK(*as_const_int(o->extent) >= *ext)
              << loop_desc(op) << " is inside " << loop_desc(o) << " bound to the same index with a smaller extent";
      launch.block[d] = std::max(launch.block[d], *ext);
    }
    stack_.push_back(op);
    IRVisitor::visit_(op);
    stack_.pop_back();
  }
  void visit_(const Allocate* op) override {
    int64_t n = op->buffer->dtype.bytes_per_lane() * op->buffer->dtype.lanes;
    for (auto& e : op->buffer->shape) {
      const int64_t* c = as_const_int(e);
      TESSEL_CHECK(c) << "buffer " << op->buffer->name << ": GPU allocations need constant shapes";
      n *= *c;
    }
    switch (op->buffer->scope) {
      case MemScope::kShared: launch.shared_bytes += (n + 15) / 16 * 16; break;
      case MemScope::kLocal: launch.local_bytes += n; break;
      case MemScope::kGlobal:
        TESSEL_CHECK(false) << "stage " << op->buffer->name
                            << " is an intermediate in global memory, which a GPU kernel cannot allocate yet; "
                               "compute_at it inside the block loop (local or shared scope) or inline it";
    }
    IRVisitor::visit_(op);
  }

 private:
  std::vector<const For*> stack_;
};

// Barriers must be reached by every thread of the block: never under a condition on a thread index.
class DivergenceCheck : public IRVisitor {
 public:
  explicit DivergenceCheck(const GpuLaunch& l) : launch_(l) {}

 protected:
  void visit_(const For* op) override {
    bool bound = is_thread_bound(op->for_kind);
    if (bound) thread_vars_.insert(op->var.get());
    bool guarded = bound && *as_const_int(op->extent) < launch_.block[gpu_dim(op->for_kind)];
    if (guarded) guards_.push_back(loop_desc(op) + " (shorter than the launch's " +
                                   std::to_string(launch_.block[gpu_dim(op->for_kind)]) + " threads)");
    IRVisitor::visit_(op);
    if (guarded) guards_.pop_back();
  }
  void visit_(const IfThenElse* op) override {
    bool dep = uses_var(op->cond, [&](const VarNode* v) { return thread_vars_.count(v) > 0; });
    if (dep) guards_.push_back("if (" + to_string(op->cond) + ")");
    IRVisitor::visit_(op);
    if (dep) guards_.pop_back();
  }
  void visit_(const Call* op) override {
    if (op->op == Intrinsic::kSyncThreads)
      TESSEL_CHECK(guards_.empty()) << "a barrier (for shared memory) would be under " << guards_.back()
                                    << ", which not every thread of the block reaches; make the thread loops that "
                                       "enclose shared-memory stages span the whole block";
    IRVisitor::visit_(op);
  }

 private:
  const GpuLaunch& launch_;
  std::set<const VarNode*> thread_vars_;
  std::vector<std::string> guards_;
};

// Top-level loop nests of the body (through allocations, attributes and lets).
void root_nests(const Stmt& s, std::vector<Stmt>* out) {
  if (auto* a = s.as<Allocate>()) return root_nests(a->body, out);
  if (auto* a = s.as<AttrStmt>()) return root_nests(a->body, out);
  if (auto* l = s.as<LetStmt>()) return root_nests(l->body, out);
  if (auto* q = s.as<Seq>()) {
    for (auto& x : q->seq) root_nests(x, out);
    return;
  }
  out->push_back(s);
}

}  // namespace

Stmt insert_gpu_barriers(const Stmt& s) { return BarrierInserter(s).mutate(s); }

GpuLaunch infer_gpu_launch(const Stmt& body) {
  std::vector<Stmt> nests;
  root_nests(body, &nests);
  bool blocks = false;
  auto has_block = [](const Stmt& st) {
    bool found = false;
    struct V : IRVisitor {
      bool* f;
      void visit_(const For* op) override {
        if (is_block_bound(op->for_kind)) *f = true;
        IRVisitor::visit_(op);
      }
    } v;
    v.f = &found;
    v.visit(st);
    return found;
  };
  for (auto& n : nests) blocks |= has_block(n);
  TESSEL_CHECK(nests.size() <= 1 || !blocks)
      << "the schedule has " << nests.size()
      << " loop nests at the root, bound to blocks; blocks do not wait for each other, so a GPU kernel is one "
         "nest (compute_at or inline the other stages inside the output's block loop)";
  LaunchInference li;
  li.visit(body);
  TESSEL_CHECK(li.any_bound) << "no loop is bound to blockIdx or threadIdx, so the kernel would run on one GPU "
                                "thread; bind loops with Schedule::bind";
  DivergenceCheck(li.launch).visit(body);
  return li.launch;
}

Status check_gpu_launch(const GpuLaunch& l, const GpuLimits& lim, int registers) {
  const char* dim = "xyz";
  for (int d = 0; d < 3; ++d) {
    if (l.block[d] > lim.max_block[d])
      return Status::error("block dimension " + std::string(1, dim[d]) + " is " + std::to_string(l.block[d]) +
                           " threads, over the limit of " + std::to_string(lim.max_block[d]));
    if (l.grid[d] > lim.max_grid[d])
      return Status::error("grid dimension " + std::string(1, dim[d]) + " is " + std::to_string(l.grid[d]) +
                           " blocks, over the limit of " + std::to_string(lim.max_grid[d]));
  }
  if (l.threads_per_block() > lim.max_threads_per_block)
    return Status::error(std::to_string(l.threads_per_block()) + " threads per block (" + std::to_string(l.block[0]) +
                         " x " + std::to_string(l.block[1]) + " x " + std::to_string(l.block[2]) +
                         ") exceed the limit of " + std::to_string(lim.max_threads_per_block));
  if (l.shared_bytes > lim.max_shared_bytes)
    return Status::error(std::to_string(l.shared_bytes) + " bytes of shared memory per block exceed the limit of " +
                         std::to_string(lim.max_shared_bytes) + " (" + std::to_string(lim.max_static_shared_bytes) +
                         " static, more with the opt-in)");
  if (l.local_bytes > lim.max_local_bytes)
    return Status::error(std::to_string(l.local_bytes) + " bytes of local (per-thread) buffers exceed the limit of " +
                         std::to_string(lim.max_local_bytes));
  if (registers > lim.max_registers_per_thread)
    return Status::error(std::to_string(registers) + " registers per thread exceed the limit of " +
                         std::to_string(lim.max_registers_per_thread));
  if (registers > 0 && registers * l.threads_per_block() > 65536)
    return Status::error(std::to_string(registers) + " registers per thread x " +
                         std::to_string(l.threads_per_block()) + " threads exceed the 65536 registers of an SM");
  return Status::ok();
}

}  // namespace tessel::lower
