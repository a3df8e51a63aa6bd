// The row-block GPU schedule of softmax-like operators (include/tessel/ops/row_block_gpu.h):
//   row_chain               the stages an elementwise output reads per row (reductions, intermediates)
//   row_reductions          its reductions, when every read is indexed by the reader's row axes
//   schedule_row_block_gpu  one block per row, each reduction a cross-thread reduction through an
//                           rfactor stage in shared memory, computed at the block loop
#include "tessel/ops/row_block_gpu.h"

#include <set>

#include "tessel/ir/functor.h"

namespace tessel::ops {

using schedule::Schedule;
using schedule::Stage;

namespace {

struct RowChain {
  std::vector<std::string> reductions;     // producers first
  std::vector<std::string> intermediates;  // elementwise stages between them (inlined)
  size_t rows = 0;                         // p: the leading axes that index every read
};

const Stage* stage_of(const Schedule& s, const te::Operation& op) {
  for (auto& st : s.stages())
    if (st->op.get() == op.get()) return st.get();
  return nullptr;
}

size_t data_rank(const Stage& st) {
  size_t n = 0;
  for (auto& a : st.root_axes) n += a->kind == ir::IterKind::kDataPar;
  return n;
}

// Every read in c's body of a stage in `chain` indexes its first p dimensions by c's first p axes.
bool row_aligned(const te::ComputeOp& c, const std::set<std::string>& chain, size_t p) {
  if (c.axis.size() < p) return false;
  bool ok = true;
  ir::post_order_visit(c.body, [&](const ir::Expr& e) {
    auto* t = e.as<ir::TensorRead>();
    if (!t || !chain.count(t->producer->name())) return;
    if (t->indices.size() < p) {
      ok = false;
      return;
    }
    for (size_t d = 0; d < p; ++d) ok &= t->indices[d].as<ir::VarNode>() == c.axis[d]->var.get();
  });
  return ok;
}

// The per-row chain of `out`, or an empty one.
RowChain row_chain(const Schedule& s, const std::string& out) {
  const Stage* o = nullptr;
  for (auto& st : s.stages())
    if (st->name == out) o = st.get();
  auto* oc = o ? te::as_compute(o->op) : nullptr;
  if (!oc || !o->is_output || o->is_reduction() || oc->axis.size() < 2) return {};
  std::set<std::string> chain;  // stages out reads, through the computed ones
  std::vector<const Stage*> todo{o};
  while (!todo.empty()) {
    auto* c = te::as_compute(todo.back()->op);
    todo.pop_back();
    for (auto& in : c->inputs()) {
      const Stage* p = stage_of(s, in);
      if (!p || p->is_placeholder() || chain.count(p->name)) continue;
      if (p->is_output) return {};
      chain.insert(p->name);
      todo.push_back(p);
    }
  }
  RowChain r;
  for (auto& st : s.stages()) {
    if (!chain.count(st->name)) continue;
    (st->is_reduction() ? r.reductions : r.intermediates).push_back(st->name);
    if (!st->is_reduction()) continue;
    size_t p = data_rank(*st);
    if (r.rows == 0) r.rows = p;
    if (p == 0 || p != r.rows || p >= oc->axis.size()) return {};
    for (size_t d = 0; d < p; ++d)
      if (st->root_axes[d]->extent != o->root_axes[d]->extent) return {};
  }
  if (r.reductions.empty()) return {};
  for (auto& st : s.stages()) {  // only the chain and out read the chain, always row by row
    auto* c = te::as_compute(st->op);
    if (!c) continue;
    bool member = st.get() == o || chain.count(st->name);
    if (member && !row_aligned(*c, chain, r.rows)) return {};
    if (!member)
      for (auto& in : c->inputs())
        if (chain.count(in->name())) return {};
  }
  return r;
}

}  // namespace

std::vector<std::string> row_reductions(const Schedule& s, const std::string& out) {
  return row_chain(s, out).reductions;
}

Status schedule_row_block_gpu(Schedule& s, const std::string& out, const RowBlockGpuParams& p) {
  RowChain chain = row_chain(s, out);
  if (chain.reductions.empty()) return Status::error("stage " + out + " reads no per-row reductions");
  if (p.threads < 1 || p.vector < 1)
    return Status::error("stage " + out + ": row-block threads and vector width must be positive");
  try {
    for (auto& n : chain.intermediates)
      if (s.stage(n).attach != schedule::AttachKind::kInline) s.compute_inline(n);
    auto leaves = s.leaf_names(out);
    if (leaves.size() != s.stage(out).root_axes.size())
      return Status::error("stage " + out + ": the row-block schedule needs its loops untouched");
    std::vector<std::string> lead(leaves.begin(), leaves.begin() + long(chain.rows)),
        rest(leaves.begin() + long(chain.rows), leaves.end());
    std::string bx = lead.size() > 1 ? s.fuse(out, lead) : lead[0];
    std::string j = rest.size() > 1 ? s.fuse(out, rest) : rest[0];
    std::string jv;
    if (p.vector > 1) {
      int64_t len = s.stage(out).find_axis(j)->extent;
      if (len % p.vector != 0)
        return Status::error("stage " + out + ": vector width " + std::to_string(p.vector) +
                             " does not divide the row length " + std::to_string(len));
      std::tie(j, jv) = s.split(out, j, p.vector);
    }
    auto [jo, jt] = s.split(out, j, p.threads);
    std::vector<std::string> order{bx, jt, jo};
    if (!jv.empty()) order.push_back(jv);
    s.reorder(out, order);
    s.bind(out, bx, "blockIdx.x");
    s.bind(out, jt, "threadIdx.x");
    if (!jv.empty()) s.vectorize(out, jv);
    // Consumers first (a stage is computed at out's loop only once every reader of it is).
    for (auto it = chain.reductions.rbegin(); it != chain.reductions.rend(); ++it) {
      auto [ko, ki] = s.split(*it, s.stage(*it).root_axes.back()->name, p.threads);
      std::string rf = s.rfactor(*it, ki);
      s.set_scope(rf, "shared");
      s.compute_at(*it, out, bx);
      s.compute_at(rf, out, bx);
      s.bind(rf, s.leaf_names(rf).front(), "threadIdx.x");
    }
  } catch (const UserError& e) {
    return Status::error(e.what());
  }
  return Status::ok();
}

}  // namespace tessel::ops
