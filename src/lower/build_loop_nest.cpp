// Schedule -> loop nest (the first lowering pass).
//
// Guide:
//  - StageInfo: per stage its effective body (inlined producers substituted), realized region
//    (symbolic min, constant extent per dimension) and buffer.
//  - inline_body(): substitutes inlined stages' bodies into TensorReads.
//  - infer_regions(): consumers first; a stage computed at T.x covers what its readers touch for
//    one iteration of T's loops up to x (inner loops relaxed over their extents).
//  - leaf_values(): root axis values as functions of the leaf loop variables (split/fuse relations).
//  - make_nest(): loops of one stage with guards, reduction init, and attached stages at each level.
#include "tessel/lower/build_loop_nest.h"
#include "tessel/lower/inject_virtual_thread.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "tessel/ir/functor.h"
#include "tessel/ir/interval.h"
#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/ir/simplify.h"

namespace tessel::lower {

using namespace ir;
using schedule::AttachKind;
using schedule::Axis;
using schedule::AxisPtr;
using schedule::Relation;
using schedule::Stage;

namespace {

struct StageInfo {
  const Stage* st = nullptr;
  Expr body;                          // effective body (compute stages)
  std::vector<Expr> region_min;       // per output dimension
  std::vector<int64_t> region_extent; // per output dimension
  Buffer buffer;
  bool is_param = false;
};

class NestBuilder {
 public:
  NestBuilder(const schedule::Schedule& sch, const std::vector<te::Tensor>& args) : sch_(sch), args_(args) {}

  Stmt build(std::vector<Buffer>* params) {
    for (auto& s : sch_.stages()) {
      auto& info = infos_[s->name];
      info.st = s.get();
      by_op_[s->op.get()] = &info;
      order_.push_back(&info);
    }
    bind_params(params);
    for (auto* info : order_) info->body = inline_body(*info);
    infer_regions();
    make_buffers();
    std::vector<Stmt> seq;
    std::vector<Buffer> allocs;
    for (auto* info : order_) {
      const Stage* s = info->st;
      if (s->is_placeholder() || s->attach != AttachKind::kRoot) continue;
      seq.push_back(make_nest(*info));
      if (!info->is_param) allocs.push_back(info->buffer);
    }
    Stmt body = Seq::make(seq);
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) body = Allocate::make(*it, body);
    return body;
  }

 private:
  StageInfo& info_of(const ProducerPtr& p) {
    auto it = by_op_.find(p.get());
    TESSEL_ICHECK(it != by_op_.end()) << "tensor " << p->name() << " has no stage";
    return *it->second;
  }

  void bind_params(std::vector<Buffer>* params) {
    std::map<std::string, int> seen;
    for (auto& t : args_) {
      TESSEL_CHECK(t.defined()) << "undefined function argument";
      const Stage& s = sch_.stage(t.name());
      TESSEL_CHECK(s.is_placeholder() || s.is_output)
          << "argument " << t.name() << " is an intermediate stage; arguments are the inputs and outputs";
      TESSEL_CHECK(seen[t.name()]++ == 0) << "argument " << t.name() << " is listed twice";
      auto& info = infos_[t.name()];
      info.is_param = true;
      info.buffer = make_buffer(t.name(), s.op->dtype(), s.op->shape());
      params->push_back(info.buffer);
    }
    for (auto* info : order_) {
      const Stage* s = info->st;
      if (s->is_placeholder())
        TESSEL_CHECK(info->is_param) << "input " << s->name << " is read but is not among the function arguments";
      if (s->is_output)
        TESSEL_CHECK(info->is_param) << "output " << s->name << " is not among the function arguments";
    }
  }

  // Substitutes inlined producers (whose own bodies are already inlined: topological order).
  Expr inline_body(const StageInfo& info) {
    auto* c = te::as_compute(info.st->op);
    if (!c) return Expr();
    return rewrite_tensor_reads(c->body, [&](const TensorRead* t, const Expr& r) {
      StageInfo& p = info_of(t->producer);
      if (p.st->attach != AttachKind::kInline) return r;
      auto* pc = te::as_compute(p.st->op);
      VarMap m;
      for (size_t d = 0; d < pc->axis.size(); ++d) m[pc->axis[d]->var.get()] = t->indices[d];
      return substitute(p.body, m);
    });
  }

  // Value of every axis (root and derived) in terms of the leaf loop variables.
  std::unordered_map<const Axis*, Expr> leaf_values(const Stage& s,
                                                           const std::unordered_map<const Axis*, Expr>& leaf) {
    std::unordered_map<const Axis*, Expr> v = leaf;
    for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
      const Relation& r = *it;
      if (r.kind == Relation::kSplit) {
        v[r.parent.get()] = v.at(r.outer.get()) * int(E(r.inner)) + v.at(r.inner.get());
      } else {
        Expr f = v.at(r.parent.get());
        v[r.outer.get()] = f / int(E(r.inner));
        v[r.inner.get()] = f % int(E(r.inner));
      }
    }
    return v;
  }

  // Root-variable substitution for stage s given leaf expressions: data axes get region_min + value.
  VarMap root_substitution(const StageInfo& info, const std::unordered_map<const Axis*, Expr>& vals) {
    const Stage& s = *info.st;
    auto* c = te::as_compute(s.op);
    VarMap m;
    size_t nd = c->axis.size();
    for (size_t d = 0; d < s.root_axes.size(); ++d) {
      Expr v = vals.at(s.root_axes[d].get());
      if (d < nd) {
        v = info.region_min[d] + v;
      } else {
        v = c->reduce_axis[d - nd]->min + v;
      }
      m[s.root_axes[d]->var.get()] = v;
    }
    return m;
  }

  static std::unordered_map<const Axis*, Expr> identity_leaves(const Stage& s) {
    std::unordered_map<const Axis*, Expr> m;
    for (auto& a : s.leaf_axes) m[a.get()] = a->var;
    return m;
  }

  // All TensorReads of `producer` in an expression.
  static void collect_reads(const Expr& e, const Producer* producer, std::vector<std::vector<Expr>>* out) {
    post_order_visit(e, [&](const Expr& x) {
      if (auto* t = x.as<TensorRead>())
        if (t->producer.get() == producer) out->push_back(t->indices);
    });
  }

  void infer_regions() {
    // Defaults: full shape.
    for (auto* info : order_) {
      auto& shape = info->st->op->shape();
      info->region_min.assign(shape.size(), Expr(0));
      info->region_extent.clear();
      for (auto& e : shape) info->region_extent.push_back(*as_const_int(e));
    }
    // Consumers before producers: attached stages depend on their readers' regions and loops.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      StageInfo& p = **it;
      if (p.st->attach == AttachKind::kAt) infer_attached(p);
      compute_extents(p);
    }
  }

  // Loop extents of every axis of a stage, from its realized region through its split/fuse relations.
  void compute_extents(const StageInfo& info) {
    const Stage& s = *info.st;
    size_t nd = info.region_extent.size();
    for (size_t d = 0; d < s.root_axes.size(); ++d)
      ext_[s.root_axes[d].get()] = d < nd ? info.region_extent[d] : s.root_axes[d]->extent;
    for (auto& r : s.relations) {
      if (r.kind == Relation::kFuse) {
        ext_[r.parent.get()] = ext_.at(r.outer.get()) * ext_.at(r.inner.get());
        continue;
      }
      int64_t e = ext_.at(r.parent.get()), inner, outer;
      if (r.nparts) {
        outer = std::min(r.factor, e);
        inner = (e + outer - 1) / outer;
      } else {
        inner = std::min(r.factor, e);
      }
      outer = (e + inner - 1) / inner;
      ext_[r.outer.get()] = outer;
      ext_[r.inner.get()] = inner;
    }
  }
  int64_t E(const AxisPtr& a) const { return ext_.at(a.get()); }

  void infer_attached(StageInfo& p) {
    const Stage& s = *p.st;
    StageInfo& t = infos_.at(s.attach_stage);
    const Stage& ts = *t.st;
    int x = ts.leaf_index(s.attach_axis);
    TESSEL_CHECK(x >= 0) << "stage " << s.name << " is computed at " << ts.name << "." << s.attach_axis
                         << ", which is no longer a loop of " << ts.name << " (loops: "
                         << join_leaves(ts) << ")";
    // Ranges: T's leaves after x relaxed; T's leaves up to x stay symbolic.
    VarRanges relax;
    for (size_t k = size_t(x) + 1; k < ts.leaf_axes.size(); ++k)
      relax[ts.leaf_axes[k]->var.get()] = {Expr(0), Expr(int(E(ts.leaf_axes[k]) - 1))};
    // A shared-memory stage is filled by all threads of a block together: its region covers every
    // thread's (and virtual thread's) needs, so loops bound to thread indices are relaxed as well.
    if (s.scope == MemScope::kShared) {
      for (auto* o : order_)
        for (auto& a : o->st->leaf_axes) {
          auto it = o->st->annotations.find(a->name);
          if (it == o->st->annotations.end() || !ext_.count(a.get())) continue;
          if (it->second.rfind("threadIdx", 0) == 0 || it->second == "vthread")
            relax[a->var.get()] = {Expr(0), Expr(int(E(a) - 1))};
        }
    }
    VarRanges outer;  // T's leaves up to x over their full extents (for constant extents)
    for (int k = 0; k <= x; ++k) outer[ts.leaf_axes[k]->var.get()] = {Expr(0), Expr(int(E(ts.leaf_axes[k]) - 1))};

    size_t nd = s.op->shape().size();
    std::vector<Expr> lo(nd), hi(nd);
    bool any = false;
    for (auto* r : order_) {
      if (r->st->is_placeholder() || r->st->attach == AttachKind::kInline || !r->body.defined()) continue;
      std::vector<std::vector<Expr>> reads;
      collect_reads(r->body, s.op.get(), &reads);
      if (reads.empty()) continue;
      bool inside = r == &t || (r->st->attach == AttachKind::kAt && r->st->attach_stage == ts.name &&
                                ts.leaf_index(r->st->attach_axis) >= x);
      TESSEL_CHECK(inside) << "stage " << s.name << " is computed at " << ts.name << "." << s.attach_axis
                           << " but stage " << r->st->name << " also reads it outside that loop";
      // Root vars of r as functions of r's leaves.
      VarMap rs = root_substitution(*r, leaf_values(*r->st, identity_leaves(*r->st)));
      VarRanges ranges = relax;
      if (r != &t) {
        for (auto& a : r->st->leaf_axes) ranges[a->var.get()] = {Expr(0), Expr(int(E(a) - 1))};
      } else {
        // r == T: T's leaves after x are in `relax` already.
      }
      for (auto& idx : reads) {
        for (size_t d = 0; d < nd; ++d) {
          Expr e = substitute(idx[d], rs);
          Interval iv = eval_interval(e, ranges);
          if (r != &t && iv.min.defined() && iv.max.defined()) {  // r's region min mentions T's leaves after x: relax again
            iv = {eval_interval(iv.min, relax).min, eval_interval(iv.max, relax).max};
          }
          TESSEL_CHECK(iv.min.defined() && iv.max.defined())
              << "stage " << s.name << ", dimension " << d << ": cannot bound the region read by " << r->st->name;
          lo[d] = lo[d].defined() ? min(lo[d], iv.min) : iv.min;
          hi[d] = hi[d].defined() ? max(hi[d], iv.max) : iv.max;
          any = true;
        }
      }
    }
    TESSEL_CHECK(any) << "stage " << s.name << " is computed at " << ts.name << "." << s.attach_axis
                      << " but nothing there reads it";
    for (size_t d = 0; d < nd; ++d) {
      Expr mn = simplify(lo[d]), mx = simplify(hi[d]);
      int64_t full = *as_const_int(s.op->shape()[d]);
      std::optional<int64_t> ext = const_upper_bound(simplify(mx - mn + 1), outer);
      if (!ext || *ext >= full) {  // cannot do better than the whole dimension
        p.region_min[d] = Expr(0);
        p.region_extent[d] = full;
      } else {
        p.region_min[d] = mn;
        p.region_extent[d] = std::max<int64_t>(*ext, 1);
      }
    }
  }

  static std::string join_leaves(const Stage& s) {
    std::string out;
    for (auto& a : s.leaf_axes) out += (out.empty() ? "" : ", ") + a->name;
    return out;
  }

  // Row-major strides where dimension d's stride is padded so stride % factor == offset
  // (storage_align); empty when no dimension is aligned.
  static std::vector<Expr> aligned_strides(const std::vector<int64_t>& ext,
                                           const std::vector<std::pair<int64_t, int64_t>>& align) {
    bool any = false;
    for (auto& a : align) any |= a.first > 0;
    if (!any || ext.empty()) return {};
    std::vector<int64_t> st(ext.size());
    st.back() = 1;
    for (int d = int(ext.size()) - 2; d >= 0; --d) {
      int64_t v = st[d + 1] * ext[d + 1];
      auto [f, o] = align[d];
      if (f > 0) v += ((o - v % f) % f + f) % f;
      st[d] = v;
    }
    std::vector<Expr> out;
    for (auto v : st) out.push_back(Expr(int(v)));
    return out;
  }

  void make_buffers() {
    for (auto* info : order_) {
      const Stage* s = info->st;
      if (s->is_placeholder() || info->is_param || s->attach == AttachKind::kInline) continue;
      std::vector<Expr> shape;
      for (auto e : info->region_extent) shape.push_back(Expr(int(e)));
      if (s->layout_dim >= 0) {  // transform_layout: [blocks of dim][other dims][offset in block]
        int d = s->layout_dim;
        int64_t f = s->layout_factor;
        shape.clear();
        shape.push_back(Expr(int((info->region_extent[d] + f - 1) / f)));
        for (size_t k = 0; k < info->region_extent.size(); ++k)
          if (int(k) != d) shape.push_back(Expr(int(info->region_extent[k])));
        shape.push_back(Expr(int(f)));
        info->buffer = make_buffer(s->name, s->op->dtype(), shape, {}, s->scope);
        continue;
      }
      info->buffer = make_buffer(s->name, s->op->dtype(), shape, aligned_strides(info->region_extent, s->storage_align),
                                 s->scope);
    }
  }

  // Region-relative logical indices -> the buffer's physical indices (transform_layout).
  static std::vector<Expr> physical(const StageInfo& info, std::vector<Expr> idx) {
    const Stage& s = *info.st;
    if (info.is_param || s.layout_dim < 0) return idx;
    int d = s.layout_dim;
    Expr f = Expr(int(s.layout_factor));
    std::vector<Expr> out{idx[d] / f};
    for (size_t k = 0; k < idx.size(); ++k)
      if (int(k) != d) out.push_back(idx[k]);
    out.push_back(idx[d] % f);
    return out;
  }

  // TensorRead -> BufferLoad at the producer's region-relative index.
  Expr to_buffer_loads(const Expr& e) {
    return rewrite_tensor_reads(e, [&](const TensorRead* t, const Expr&) {
      StageInfo& p = info_of(t->producer);
      TESSEL_ICHECK(p.buffer) << "no buffer for " << p.st->name;
      std::vector<Expr> idx;
      for (size_t d = 0; d < t->indices.size(); ++d) idx.push_back(t->indices[d] - p.region_min[d]);
      return BufferLoad::make(p.buffer, physical(p, idx));
    });
  }

  ForKind for_kind(const Stage& s, const Axis& a) {
    auto it = s.annotations.find(a.name);
    if (it == s.annotations.end()) return ForKind::kSerial;
    if (it->second == "vectorize") return ForKind::kVectorized;
    if (it->second == "unroll") return ForKind::kUnrolled;
    if (it->second == "parallel") return ForKind::kParallel;
    if (it->second == "vthread") return ForKind::kSerial;  // marked; removed by inject_virtual_thread
    ForKind k;
    if (for_kind_of_thread_tag(it->second, &k)) return k;
    return ForKind::kSerial;
  }

  // Guards needed for one stage: split tails and region bounds; each with the leaves it mentions.
  std::vector<Expr> guards(const StageInfo& info, const std::unordered_map<const Axis*, Expr>& vals, bool data_only) {
    const Stage& s = *info.st;
    std::vector<Expr> g;
    for (auto& r : s.relations) {
      if (r.kind != Relation::kSplit) continue;
      if (data_only && r.parent->kind == IterKind::kReduce) continue;
      if (E(r.outer) * E(r.inner) != E(r.parent))
        g.push_back(vals.at(r.parent.get()) < int(E(r.parent)));
    }
    if (s.attach == AttachKind::kAt) {
      for (size_t d = 0; d < info.region_min.size(); ++d) {
        Expr root = info.region_min[d] + vals.at(s.root_axes[d].get());
        g.push_back(root >= 0);
        g.push_back(root < int(*as_const_int(s.op->shape()[d])));
      }
    }
    return g;
  }

  // Index of the deepest leaf (in `leaves`) whose variable e mentions; -1 when none.
  static int deepest(const Expr& e, const std::vector<Var>& leaves) {
    int d = -1;
    for (size_t k = 0; k < leaves.size(); ++k) {
      const VarNode* v = leaves[k].get();
      if (uses_var(e, [&](const VarNode* x) { return x == v; })) d = int(k);
    }
    return d;
  }

  // Wraps `inner` (the content at leaf depth `depth`) into the loops from depth-1 outward, inserting
  // guards and attached stages at each level.
  Stmt wrap_loops(const StageInfo& info, const std::vector<Var>& vars, const std::vector<AxisPtr>& axes,
                  std::vector<std::pair<int, Expr>> guards, Stmt inner, int from, int to,
                  const std::map<int, std::vector<Stmt>>& prologue, bool attach_stages) {
    const Stage& s = *info.st;
    Stmt body = inner;
    for (int k = to - 1; k >= from; --k) {
      // Content of loop k's body: attached stages at leaf k, prologue at k+1, then the deeper part.
      std::vector<Stmt> items;
      std::vector<Buffer> allocs;
      if (attach_stages) {
        for (auto* p : order_) {
          if (p->st->attach == AttachKind::kAt && p->st->attach_stage == s.name && p->st->attach_axis == axes[k]->name) {
            items.push_back(make_nest(*p));
            allocs.push_back(p->buffer);
          }
        }
      }
      if (auto it = prologue.find(k + 1); it != prologue.end())
        items.insert(items.end(), it->second.begin(), it->second.end());
      items.push_back(body);
      Stmt content = Seq::make(items);
      for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) content = Allocate::make(*it, content);
      // Guards whose deepest leaf is k wrap the content.
      for (auto& [d, cond] : guards)
        if (d == k) content = IfThenElse::make(cond, content);
      body = For::make(vars[k], Expr(0), Expr(int(E(axes[k]))), for_kind(s, *axes[k]), content);
      if (auto vt = s.annotations.find(axes[k]->name); vt != s.annotations.end() && vt->second == "vthread")
        body = AttrStmt::make(kVirtualThreadAttr, Expr(0), body);
      auto pit = s.pragmas.find(axes[k]->name);
      if (pit != s.pragmas.end())
        for (auto& [key, val] : pit->second) body = AttrStmt::make("pragma_" + key, Expr(int(val)), body);
    }
    return body;
  }

  Stmt make_nest(StageInfo& info) {
    const Stage& s = *info.st;
    auto* c = te::as_compute(s.op);
    const std::vector<AxisPtr>& axes = s.leaf_axes;
    std::vector<Var> vars;
    for (auto& a : axes) vars.push_back(a->var);
    auto vals = leaf_values(s, identity_leaves(s));
    VarMap sub = root_substitution(info, vals);
    std::vector<Expr> store_idx;
    for (size_t d = 0; d < c->axis.size(); ++d) store_idx.push_back(vals.at(s.root_axes[d].get()));

    auto place = [&](const std::vector<Expr>& gs, const std::vector<Var>& vs) {
      std::vector<std::pair<int, Expr>> out;
      for (auto& g : gs) out.push_back({deepest(g, vs), g});
      return out;
    };
    auto wrap_top_guards = [](Stmt st, const std::vector<std::pair<int, Expr>>& gs) {
      for (auto& [d, g] : gs)
        if (d < 0) st = IfThenElse::make(g, st);
      return st;
    };

    const Reduce* red = c->reduce();
    int n = int(axes.size());
    if (!red) {
      Expr value = to_buffer_loads(substitute(info.body, sub));
      Stmt store = BufferStore::make(info.buffer, value, physical(info, store_idx));
      auto gs = place(guards(info, vals, false), vars);
      return wrap_top_guards(wrap_loops(info, vars, axes, gs, store, 0, n, {}, true), gs);
    }

    // Reduction: init before the first reduction loop, update inside all loops.
    int p = n;
    for (int k = 0; k < n; ++k)
      if (axes[k]->kind == IterKind::kReduce) {
        p = k;
        break;
      }
    const Reduce* r = info.body.as<Reduce>();
    TESSEL_ICHECK(r) << "stage " << s.name << ": reduction body lost its Reduce";
    // Init nest over the data leaves at positions >= p, with fresh loop variables.
    std::vector<Var> ivars = vars;
    std::vector<AxisPtr> iaxes;
    std::vector<Var> init_loop_vars;
    std::unordered_map<const Axis*, Expr> ileaf = identity_leaves(s);
    for (int k = p; k < n; ++k) {
      if (axes[k]->kind == IterKind::kReduce) {
        ileaf[axes[k].get()] = Expr(0);
        continue;
      }
      Var v(axes[k]->name + ".init", DataType::int32());
      ileaf[axes[k].get()] = v;
      ivars[k] = v;
      iaxes.push_back(axes[k]);
      init_loop_vars.push_back(v);
    }
    auto ivals = leaf_values(s, ileaf);
    std::vector<Expr> init_idx;
    for (size_t d = 0; d < c->axis.size(); ++d) init_idx.push_back(ivals.at(s.root_axes[d].get()));
    Stmt init = BufferStore::make(info.buffer, reduce_identity(r->op, r->dtype), physical(info, init_idx));
    {
      std::vector<Var> all = std::vector<Var>(vars.begin(), vars.begin() + p);
      all.insert(all.end(), init_loop_vars.begin(), init_loop_vars.end());
      auto gs = place(guards(info, ivals, true), all);
      // Guards on init's own loops wrap the store; outer ones are shared with the update nest.
      for (auto& [d, g] : gs)
        if (d >= p) init = IfThenElse::make(g, init);
      for (int k = int(iaxes.size()) - 1; k >= 0; --k)
        init = For::make(init_loop_vars[k], Expr(0), Expr(int(E(iaxes[k]))), for_kind(s, *iaxes[k]), init);
    }
    Expr acc = BufferLoad::make(info.buffer, physical(info, store_idx));
    Expr src = to_buffer_loads(substitute(r->source, sub));
    Stmt update = BufferStore::make(info.buffer, reduce_combine(r->op, acc, src), physical(info, store_idx));
    if (r->condition.defined()) update = IfThenElse::make(to_buffer_loads(substitute(r->condition, sub)), update);
    auto gs = place(guards(info, vals, false), vars);
    std::map<int, std::vector<Stmt>> prologue{{p, {init}}};
    if (p == n) {  // no reduction loop left inside (all reduce axes outside? impossible) -> init first
      return wrap_top_guards(wrap_loops(info, vars, axes, gs, Seq::make({init, update}), 0, n, {}, true), gs);
    }
    Stmt nest = wrap_loops(info, vars, axes, gs, update, 0, n, prologue, true);
    if (p == 0) nest = Seq::make({init, nest});
    return wrap_top_guards(nest, gs);
  }

  const schedule::Schedule& sch_;
  const std::vector<te::Tensor>& args_;
  std::map<std::string, StageInfo> infos_;
  std::unordered_map<const Producer*, StageInfo*> by_op_;
  std::unordered_map<const Axis*, int64_t> ext_;
  std::vector<StageInfo*> order_;
};

}  // namespace

Stmt build_loop_nest(const schedule::Schedule& sch, const std::vector<te::Tensor>& args, std::vector<Buffer>* params) {
  return NestBuilder(sch, args).build(params);
}

}  // namespace tessel::lower
