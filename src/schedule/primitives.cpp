// Schedule primitives: for each step, its legality checks (UserError naming stage and axis) and its
// effect on the stages. Schedule::apply runs a step on a copy of the affected state so that a failed
// step leaves the schedule unchanged, then records it in the trace.
//
// Guide: split/tile/fuse/reorder edit a stage's loop structure; compute_at/inline/root set where a stage
// is computed; cache_read/cache_write/rfactor add stages and rewire readers; annotate/pragma/
// storage_align attach loop and buffer properties.
#include <algorithm>
#include <set>

#include "tessel/ir/functor.h"
#include "tessel/schedule/schedule.h"

namespace tessel::schedule {

te::Operation rewrite_reads(const te::Operation& reader, const te::Operation& from, const te::Operation& to);

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
std::vector<std::string> names(const std::vector<AxisPtr>& axes) {
  std::vector<std::string> out;
  for (auto& a : axes) out.push_back(a->name);
  return out;
}
}  // namespace

struct Primitives {
  Schedule& s;

  Stage& stage(const std::string& name, bool allow_placeholder = false) {
    Stage* st = s.find(name);
    if (!st) s.stage(name);  // throws the listing message
    TESSEL_CHECK(allow_placeholder || !st->is_placeholder())
        << "stage " << name << " is an input (placeholder) and has no loops to schedule";
    return *st;
  }
  Stage& loop_stage(const std::string& name) {
    Stage& st = stage(name);
    TESSEL_CHECK(st.attach != AttachKind::kInline) << "stage " << name << " is inlined and has no loops";
    return st;
  }
  int leaf(Stage& st, const std::string& axis) {
    int i = st.leaf_index(axis);
    TESSEL_CHECK(i >= 0) << "stage " << st.name << ", axis " << axis << ": not a loop of this stage (loops: "
                         << join(names(st.leaf_axes)) << ")";
    return i;
  }
  bool attached_here(const Stage& st, const std::string& axis) {
    for (auto& o : s.stages_)
      if (o->attach == AttachKind::kAt && o->attach_stage == st.name && o->attach_axis == axis) return true;
    return false;
  }
  void check_unannotated(Stage& st, const std::string& axis, const char* what) {
    TESSEL_CHECK(!st.annotations.count(axis) && !st.pragmas.count(axis))
        << "stage " << st.name << ", axis " << axis << ": cannot " << what
        << " an annotated loop (" << (st.annotations.count(axis) ? st.annotations[axis] : "pragma")
        << "); " << what << " first, annotate after";
    for (auto& o : s.stages_) {
      TESSEL_CHECK(!(o->attach == AttachKind::kAt && o->attach_stage == st.name && o->attach_axis == axis))
          << "stage " << st.name << ", axis " << axis << ": cannot " << what << " it, stage " << o->name
          << " is computed at it; " << what << " before compute_at";
    }
  }
  std::string fresh_axis_name(Stage& st, const std::string& base) {
    std::string n = base;
    for (int k = 2; st.find_axis(n); ++k) n = base + std::to_string(k);
    return n;
  }
  std::string fresh_stage_name(const std::string& base) {
    std::string n = base;
    for (int k = 2; s.find(n); ++k) n = base + std::to_string(k);
    return n;
  }
  AxisPtr new_axis(Stage& st, const std::string& base, ir::IterKind kind, int64_t extent) {
    auto a = std::make_shared<Axis>();
    a->name = fresh_axis_name(st, base);
    a->var = ir::Var(a->name, DataType::int32());
    a->kind = kind;
    a->extent = extent;
    return a;
  }

  void split(const SplitStep& x) {
    Stage& st = loop_stage(x.stage);
    int i = leaf(st, x.axis);
    TESSEL_CHECK(x.factor > 0) << "stage " << x.stage << ", axis " << x.axis << ": split "
                               << (x.nparts ? "nparts " : "factor ") << x.factor << " must be positive";
    check_unannotated(st, x.axis, "split");
    AxisPtr p = st.leaf_axes[i];
    int64_t E = p->extent, inner, outer;
    if (x.nparts) {
      outer = std::min(x.factor, E);
      inner = (E + outer - 1) / outer;
      outer = (E + inner - 1) / inner;
    } else {
      inner = std::min(x.factor, E);
      outer = (E + inner - 1) / inner;
    }
    AxisPtr o = new_axis(st, x.axis + ".o", p->kind, outer);
    // Reserve o's name before naming i.
    st.relations.push_back({Relation::kSplit, p, o, o, x.factor, x.nparts});
    AxisPtr in = new_axis(st, x.axis + ".i", p->kind, inner);
    st.relations.back().inner = in;
    st.leaf_axes[i] = o;
    st.leaf_axes.insert(st.leaf_axes.begin() + i + 1, in);
  }

  void tile(const TileStep& x) {
    split({x.stage, x.x, x.fx, false});
    split({x.stage, x.y, x.fy, false});
    Stage& st = stage(x.stage);
    // Names of the four new loops are the last four axes made.
    auto& r = st.relations;
    std::string xo = r[r.size() - 2].outer->name, xi = r[r.size() - 2].inner->name;
    std::string yo = r.back().outer->name, yi = r.back().inner->name;
    reorder({x.stage, {xo, yo, xi, yi}});
  }

  void fuse(const FuseStep& x) {
    Stage& st = loop_stage(x.stage);
    TESSEL_CHECK(x.axes.size() >= 2) << "stage " << x.stage << ": fuse needs at least two axes";
    std::vector<int> idx;
    for (auto& a : x.axes) idx.push_back(leaf(st, a));
    for (size_t k = 1; k < idx.size(); ++k)
      TESSEL_CHECK(idx[k] == idx[k - 1] + 1)
          << "stage " << x.stage << ": fuse of non-adjacent loops " << x.axes[k - 1] << " and " << x.axes[k]
          << " (they must be consecutive, outer to inner; loop order is " << join(names(st.leaf_axes)) << ")";
    for (auto& a : x.axes) check_unannotated(st, a, "fuse");
    for (size_t k = 1; k < idx.size(); ++k)
      TESSEL_CHECK(st.leaf_axes[idx[k]]->kind == st.leaf_axes[idx[0]]->kind)
          << "stage " << x.stage << ": cannot fuse data-parallel and reduction axes (" << x.axes[0] << ", "
          << x.axes[k] << ")";
    AxisPtr cur = st.leaf_axes[idx[0]];
    std::string nm = cur->name;
    for (size_t k = 1; k < idx.size(); ++k) {
      AxisPtr in = st.leaf_axes[idx[k]];
      nm += "." + in->name;
      AxisPtr f = new_axis(st, nm + ".f", cur->kind, cur->extent * in->extent);
      st.relations.push_back({Relation::kFuse, f, cur, in, 0, false});
      cur = f;
    }
    st.leaf_axes.erase(st.leaf_axes.begin() + idx[0], st.leaf_axes.begin() + idx.back() + 1);
    st.leaf_axes.insert(st.leaf_axes.begin() + idx[0], cur);
  }

  void reorder(const ReorderStep& x) {
    Stage& st = loop_stage(x.stage);
    std::vector<int> pos;
    std::set<std::string> seen;
    for (auto& a : x.order) {
      TESSEL_CHECK(seen.insert(a).second) << "stage " << x.stage << ": axis " << a << " appears twice in reorder";
      pos.push_back(leaf(st, a));
    }
    std::vector<int> sorted = pos;
    std::sort(sorted.begin(), sorted.end());
    std::vector<AxisPtr> leaves = st.leaf_axes;
    for (size_t k = 0; k < pos.size(); ++k) leaves[sorted[k]] = st.leaf_axes[pos[k]];
    for (size_t k = 0; k + 1 < leaves.size(); ++k) {
      auto it = st.annotations.find(leaves[k]->name);
      TESSEL_CHECK(it == st.annotations.end() || it->second != "vectorize")
          << "stage " << x.stage << ", axis " << leaves[k]->name
          << ": reorder would move the vectorized loop away from the innermost position";
    }
    st.leaf_axes = leaves;
  }

  // Stages that read `op` directly, looking through inlined stages.
  std::vector<Stage*> readers(const Stage& p) {
    std::vector<Stage*> out;
    for (auto& r : s.stages_) {
      auto* c = te::as_compute(r->op);
      if (!c) continue;
      for (auto& in : c->inputs()) {
        if (in.get() != p.op.get()) continue;
        if (r->attach == AttachKind::kInline) {
          for (auto* rr : readers(*r)) out.push_back(rr);
        } else {
          out.push_back(r.get());
        }
      }
    }
    return out;
  }
  bool reads_transitively(const Stage& consumer, const Stage& producer) {
    auto* c = te::as_compute(consumer.op);
    if (!c) return false;
    for (auto& in : c->inputs()) {
      if (in.get() == producer.op.get()) return true;
      if (Stage* mid = s.find(in->name()); mid && reads_transitively(*mid, producer)) return true;
    }
    return false;
  }

  // Every attached stage must still be computed at a loop of its target, inside which all its readers
  // run. Checked after each step, so a later step cannot silently invalidate an earlier compute_at.
  void validate_attachments() {
    for (auto& p : s.stages_) {
      if (p->attach != AttachKind::kAt) continue;
      Stage* tg = s.find(p->attach_stage);
      TESSEL_CHECK(tg && tg->attach != AttachKind::kInline && tg->leaf_index(p->attach_axis) >= 0)
          << "stage " << p->name << " is computed at " << p->attach_stage << "." << p->attach_axis
          << ", which would no longer be a loop";
      int i = tg->leaf_index(p->attach_axis);
      for (Stage* r : readers(*p)) {
        bool ok = r == tg || (r->attach == AttachKind::kAt && r->attach_stage == tg->name &&
                              tg->leaf_index(r->attach_axis) >= i);
        TESSEL_CHECK(ok) << "stage " << p->name << " is computed at " << tg->name << "." << p->attach_axis
                         << " but stage " << r->name << " would read it outside that loop";
      }
    }
  }

  void compute_at(const ComputeAtStep& x) {
    Stage& st = stage(x.stage);
    TESSEL_CHECK(!st.is_output) << "stage " << x.stage << " is an output; outputs are computed at the root";
    TESSEL_CHECK(x.stage != x.target) << "stage " << x.stage << ": compute_at into itself";
    Stage& tg = loop_stage(x.target);
    int i = tg.leaf_index(x.axis);
    TESSEL_CHECK(i >= 0) << "compute_at " << x.stage << " to " << x.target << "." << x.axis << ": axis " << x.axis
                         << " is not a loop of stage " << x.target
                         << ", so it is not an ancestor of the consumer (loops: " << join(names(tg.leaf_axes)) << ")";
    TESSEL_CHECK(reads_transitively(tg, st))
        << "compute_at " << x.stage << " to " << x.target << "." << x.axis << ": stage " << x.target
        << " does not read " << x.stage << ", so its loop " << x.axis << " is not an ancestor of any consumer";
    for (Stage* r : readers(st)) {
      bool ok = r == &tg || (r->attach == AttachKind::kAt && r->attach_stage == tg.name &&
                             tg.leaf_index(r->attach_axis) >= i);
      TESSEL_CHECK(ok) << "compute_at " << x.stage << " to " << x.target << "." << x.axis << ": stage " << r->name
                       << " also reads " << x.stage << " but is not computed inside " << x.target << "." << x.axis;
    }
    st.attach = AttachKind::kAt;
    st.attach_stage = x.target;
    st.attach_axis = x.axis;
    if (st.scope == ir::MemScope::kGlobal) st.scope = ir::MemScope::kLocal;
  }

  void compute_inline(const ComputeInlineStep& x) {
    Stage& st = stage(x.stage);
    TESSEL_CHECK(!st.is_output) << "stage " << x.stage << " is an output and cannot be inlined";
    TESSEL_CHECK(!st.is_reduction()) << "stage " << x.stage
                                     << " is a reduction and cannot be inlined (inline of a reduction would "
                                        "recompute it per element); use compute_at instead";
    for (auto& o : s.stages_)
      TESSEL_CHECK(!(o->attach == AttachKind::kAt && o->attach_stage == x.stage))
          << "stage " << x.stage << " cannot be inlined: stage " << o->name << " is computed at its loop "
          << o->attach_axis;
    st.attach = AttachKind::kInline;
  }

  void compute_root(const ComputeRootStep& x) {
    Stage& st = stage(x.stage);
    st.attach = AttachKind::kRoot;
    st.attach_stage.clear();
    st.attach_axis.clear();
  }

  ir::MemScope parse_scope(const std::string& sc) {
    if (sc == "local") return ir::MemScope::kLocal;
    if (sc == "global") return ir::MemScope::kGlobal;
    if (sc == "shared") return ir::MemScope::kShared;
    TESSEL_CHECK(false) << "unknown storage scope '" << sc << "' (expected local, global or shared)";
    return ir::MemScope::kGlobal;
  }

  // Inserts a stage before position of `before` (keeps producer-before-consumer order).
  void insert_stage(std::shared_ptr<Stage> ns, const Stage* before) {
    auto it = std::find_if(s.stages_.begin(), s.stages_.end(), [&](auto& p) { return p.get() == before; });
    s.stages_.insert(it, std::move(ns));
  }

  static te::Operation copy_op(const std::string& name, const te::Operation& src) {
    std::vector<IterVar> axis;
    std::vector<Expr> idx;
    static const char* nm[] = {"i", "j", "l", "m", "n", "p", "q", "r"};
    for (size_t d = 0; d < src->shape().size(); ++d) {
      Var v(d < 8 ? nm[d] : "i" + std::to_string(d), src->shape()[d].dtype());
      axis.push_back(ir::make_iter_var(v, ir::make_zero(v.dtype()), src->shape()[d], ir::IterKind::kDataPar));
      idx.push_back(v);
    }
    return std::make_shared<te::ComputeOp>(name, axis, ir::TensorRead::make(src, idx));
  }

  void cache_read(const CacheReadStep& x) {
    Stage& src = stage(x.tensor, true);
    ir::MemScope scope = parse_scope(x.scope);
    TESSEL_CHECK(!x.readers.empty()) << "cache_read " << x.tensor << ": name at least one reader stage";
    std::vector<Stage*> rs;
    for (auto& r : x.readers) {
      Stage& rd = stage(r);
      auto* c = te::as_compute(rd.op);
      bool reads = false;
      for (auto& in : c->inputs()) reads |= in.get() == src.op.get();
      TESSEL_CHECK(reads) << "cache_read " << x.tensor << ": stage " << r << " does not read " << x.tensor;
      rs.push_back(&rd);
    }
    auto op = copy_op(fresh_stage_name(x.tensor + "." + x.scope), src.op);
    auto ns = make_stage(op);
    ns->scope = scope;
    // Insert right before the first reader.
    const Stage* first = nullptr;
    for (auto& st : s.stages_)
      for (auto* r : rs)
        if (!first && st.get() == r) first = r;
    insert_stage(ns, first);
    for (auto* r : rs) {
      te::Operation old = r->op;
      te::Operation nw = rewrite_reads(old, src.op, op);
      r->op = nw;
      s.replace_op(old, nw);
    }
  }

  void require_fresh(Stage& st, const char* what) {
    TESSEL_CHECK(st.relations.empty() && st.annotations.empty() && st.pragmas.empty())
        << "stage " << st.name << ": apply " << what << " before splitting or annotating the stage";
    for (auto& o : s.stages_)
      TESSEL_CHECK(!(o->attach == AttachKind::kAt && o->attach_stage == st.name))
          << "stage " << st.name << ": apply " << what << " before computing " << o->name << " at it";
  }

  // Rebuilds stage `st` around a new operation, keeping its name, attachment and output flag.
  void rebuild(Stage& st, const te::Operation& op) {
    auto fresh = make_stage(op);
    fresh->attach = st.attach;
    fresh->attach_stage = st.attach_stage;
    fresh->attach_axis = st.attach_axis;
    fresh->is_output = st.is_output;
    fresh->scope = st.scope;
    te::Operation old = st.op;
    st = *fresh;
    s.replace_op(old, op);
  }

  void cache_write(const CacheWriteStep& x) {
    Stage& st = loop_stage(x.stage);
    ir::MemScope scope = parse_scope(x.scope);
    require_fresh(st, "cache_write");
    auto* c = te::as_compute(st.op);
    auto local = std::make_shared<te::ComputeOp>(fresh_stage_name(x.stage + "." + x.scope), c->axis, c->body);
    auto ns = make_stage(local);
    ns->scope = scope;
    insert_stage(ns, &st);
    rebuild(*s.find(x.stage), copy_op(x.stage, local));
  }

  void rfactor(const RfactorStep& x) {
    Stage& st = loop_stage(x.stage);
    TESSEL_CHECK(st.is_reduction()) << "stage " << x.stage << " is not a reduction; rfactor needs one";
    int li = leaf(st, x.axis);
    AxisPtr ax = st.leaf_axes[li];
    TESSEL_CHECK(ax->kind == ir::IterKind::kReduce)
        << "stage " << x.stage << ", axis " << x.axis << ": rfactor needs a reduction axis";
    for (auto& o : s.stages_)
      TESSEL_CHECK(!(o->attach == AttachKind::kAt && o->attach_stage == st.name))
          << "stage " << st.name << ": apply rfactor before computing " << o->name << " at it";
    auto* c = te::as_compute(st.op);
    const ir::Reduce* red = c->reduce();
    // Find the root reduce axis and (optionally) the one split that produced `ax`.
    const Relation* split = nullptr;
    for (auto& r : st.relations) {
      TESSEL_CHECK(r.kind == Relation::kSplit && (r.outer == ax || r.inner == ax) && r.parent->kind == ir::IterKind::kReduce &&
                   !split && std::find(st.root_axes.begin(), st.root_axes.end(), r.parent) != st.root_axes.end())
          << "stage " << x.stage << ": rfactor supports a root reduction axis or one split of it, applied before "
                                    "other loop transformations";
      split = &r;
    }
    AxisPtr root = split ? split->parent : ax;
    size_t ndata = c->axis.size();
    size_t ridx = std::find(st.root_axes.begin(), st.root_axes.end(), root) - st.root_axes.begin() - ndata;
    // rf stage: data axes = [factor axis, original data axes...]; reduce axes = the rest.
    Var fvar(ax->name, DataType::int32());
    std::vector<IterVar> rf_axis{ir::make_iter_var(fvar, 0, int(ax->extent), ir::IterKind::kDataPar)};
    ir::VarMap sub;
    for (auto& iv : c->axis) {
      Var v(iv->var.name(), iv->var.dtype());
      rf_axis.push_back(ir::make_iter_var(v, iv->min, iv->extent, ir::IterKind::kDataPar));
      sub[iv->var.get()] = v;
    }
    std::vector<IterVar> rf_reduce;
    Expr cond = red->condition;
    for (size_t k = 0; k < c->reduce_axis.size(); ++k) {
      const IterVar& iv = c->reduce_axis[k];
      if (k != ridx) {
        rf_reduce.push_back(iv);
        continue;
      }
      Expr value = iv->min + Expr(fvar);
      if (split) {
        AxisPtr other = split->outer == ax ? split->inner : split->outer;
        Var ov(other->name, DataType::int32());
        rf_reduce.push_back(ir::make_iter_var(ov, 0, int(other->extent), ir::IterKind::kReduce));
        Expr outer = split->outer == ax ? Expr(fvar) : Expr(ov);
        Expr inner = split->outer == ax ? Expr(ov) : Expr(fvar);
        Expr flat = outer * int(split->inner->extent) + inner;
        value = iv->min + flat;
        if (split->outer->extent * split->inner->extent != root->extent) {
          Expr guard = flat < int(root->extent);
          cond = cond.defined() ? (cond && guard) : guard;
        }
      }
      sub[iv->var.get()] = ir::cast(iv->var.dtype(), value);
    }
    Expr src = ir::substitute(red->source, sub);
    if (cond.defined()) cond = ir::substitute(cond, sub);
    Expr rf_body = rf_reduce.empty() ? (cond.defined() ? ir::select(cond, src, ir::reduce_identity(red->op, src.dtype())) : src)
                                     : ir::Reduce::make(red->op, src, rf_reduce, cond);
    auto rf = std::make_shared<te::ComputeOp>(fresh_stage_name(x.stage + ".rf"), rf_axis, rf_body);
    // Final stage: reduce the factor axis.
    IterVar k2 = ir::make_iter_var(Var(ax->name, DataType::int32()), 0, int(ax->extent), ir::IterKind::kReduce);
    std::vector<IterVar> out_axis;
    std::vector<Expr> idx{k2->var};
    for (auto& iv : c->axis) {
      Var v(iv->var.name(), iv->var.dtype());
      out_axis.push_back(ir::make_iter_var(v, iv->min, iv->extent, ir::IterKind::kDataPar));
      idx.push_back(v);
    }
    auto fin = std::make_shared<te::ComputeOp>(
        x.stage, out_axis, ir::Reduce::make(red->op, ir::TensorRead::make(rf, idx), {k2}));
    insert_stage(make_stage(rf), &st);
    rebuild(*s.find(x.stage), fin);
  }

  void annotate(const AnnotateStep& x) {
    Stage& st = loop_stage(x.stage);
    int i = leaf(st, x.axis);
    AxisPtr a = st.leaf_axes[i];
    const std::string& k = x.annotation;
    TESSEL_CHECK(k == "vectorize" || k == "unroll" || k == "parallel" || k == "serial")
        << "stage " << x.stage << ", axis " << x.axis << ": unknown annotation '" << k
        << "' (expected vectorize, unroll, parallel or serial)";
    if (k == "vectorize") {
      TESSEL_CHECK(size_t(i) + 1 == st.leaf_axes.size())
          << "stage " << x.stage << ", axis " << x.axis << ": vectorize of a loop that is not innermost (innermost is "
          << st.leaf_axes.back()->name << ")";
      TESSEL_CHECK(a->kind == ir::IterKind::kDataPar)
          << "stage " << x.stage << ", axis " << x.axis
          << ": vectorize of a reduction axis would break the reduction's dependency (lanes share one "
             "accumulator); rfactor it first";
    }
    if (k == "parallel") {
      TESSEL_CHECK(a->kind == ir::IterKind::kDataPar)
          << "stage " << x.stage << ", axis " << x.axis
          << ": parallel on a reduction axis would break the reduction's dependency (threads would race on "
             "the accumulator); rfactor it first";
    }
    if (k == "serial")
      st.annotations.erase(x.axis);
    else
      st.annotations[x.axis] = k;
  }

  void storage_align(const StorageAlignStep& x) {
    Stage& st = loop_stage(x.stage);
    TESSEL_CHECK(x.dim >= 0 && size_t(x.dim) < st.storage_align.size())
        << "stage " << x.stage << ": storage_align dimension " << x.dim << " out of range (rank "
        << st.storage_align.size() << ")";
    TESSEL_CHECK(x.factor > 0 && x.offset >= 0 && x.offset < x.factor)
        << "stage " << x.stage << ", dimension " << x.dim << ": storage_align needs factor > 0 and 0 <= offset < factor";
    TESSEL_CHECK(!st.is_output) << "stage " << x.stage << " is an output; its layout is fixed by the caller";
    TESSEL_CHECK(st.layout_dim < 0) << "stage " << x.stage << ": storage_align and transform_layout cannot be combined";
    st.storage_align[x.dim] = {x.factor, x.offset};
  }

  void transform_layout(const TransformLayoutStep& x) {
    Stage& st = stage(x.stage);
    TESSEL_CHECK(!st.is_output) << "stage " << x.stage << " is an output; its layout is fixed by the caller";
    TESSEL_CHECK(x.dim >= 0 && size_t(x.dim) < st.storage_align.size())
        << "stage " << x.stage << ": transform_layout dimension " << x.dim << " out of range (rank "
        << st.storage_align.size() << ")";
    TESSEL_CHECK(x.factor > 0) << "stage " << x.stage << ", dimension " << x.dim << ": transform_layout factor "
                               << x.factor << " must be positive";
    TESSEL_CHECK(st.layout_dim < 0) << "stage " << x.stage << " already has a layout transform (dimension "
                                    << st.layout_dim << " by " << st.layout_factor << ")";
    for (auto& a : st.storage_align)
      TESSEL_CHECK(a.first == 0) << "stage " << x.stage << ": transform_layout and storage_align cannot be combined";
    st.layout_dim = x.dim;
    st.layout_factor = x.factor;
  }

  static bool is_thread_tag(const std::string& t) {
    ir::ForKind k;
    return t == "vthread" || ir::for_kind_of_thread_tag(t, &k);
  }

  void bind(const BindStep& x) {
    Stage& st = loop_stage(x.stage);
    int i = leaf(st, x.axis);
    AxisPtr a = st.leaf_axes[i];
    TESSEL_CHECK(is_thread_tag(x.thread_tag))
        << "stage " << x.stage << ", axis " << x.axis << ": unknown thread tag '" << x.thread_tag
        << "' (expected blockIdx.x|y|z, threadIdx.x|y|z or vthread)";
    TESSEL_CHECK(a->kind == ir::IterKind::kDataPar)
        << "stage " << x.stage << ", axis " << x.axis << ": binding a reduction axis to " << x.thread_tag
        << " needs a cross-thread reduction, which tessel does not generate yet; rfactor the axis and bind the "
           "factored (data-parallel) axis instead";
    auto it = st.annotations.find(x.axis);
    TESSEL_CHECK(it == st.annotations.end() || it->second == x.thread_tag)
        << "stage " << x.stage << ", axis " << x.axis << ": already annotated " << it->second
        << "; a loop is either bound to a GPU index or annotated, not both";
    if (x.thread_tag != "vthread")
      for (auto& [ax, tag] : st.annotations)
        TESSEL_CHECK(ax == x.axis || tag != x.thread_tag)
            << "stage " << x.stage << ", axis " << x.axis << ": " << x.thread_tag << " is already bound to loop " << ax
            << " of this stage (fuse the loops first)";
    st.annotations[x.axis] = x.thread_tag;
  }

  void set_scope(const SetScopeStep& x) {
    Stage& st = stage(x.stage);
    TESSEL_CHECK(!st.is_output) << "stage " << x.stage << " is an output; it lives in the caller's (global) memory";
    st.scope = parse_scope(x.scope);
  }

  // GPU index tags of the loops enclosing stage st (through its compute_at chain), outermost first.
  std::vector<std::pair<std::string, std::string>> enclosing_tags(const Stage& st) {
    std::vector<std::pair<std::string, std::string>> out;
    const Stage* cur = &st;
    for (int depth = 0; cur->attach == AttachKind::kAt && depth < 64; ++depth) {
      const Stage* tg = s.find(cur->attach_stage);
      if (!tg) break;
      int x = tg->leaf_index(cur->attach_axis);
      std::vector<std::pair<std::string, std::string>> level;
      for (int k = 0; k <= x; ++k) {
        auto it = tg->annotations.find(tg->leaf_axes[k]->name);
        if (it != tg->annotations.end() && is_thread_tag(it->second))
          level.push_back({it->second, tg->name + "." + tg->leaf_axes[k]->name});
      }
      out.insert(out.begin(), level.begin(), level.end());
      cur = tg;
    }
    return out;
  }

  // GPU bindings must nest as blocks outside threads; re-binding an enclosing thread index is only for
  // shared-memory stages (cooperative fetching); one blockIdx tag has one extent.
  void validate_bindings() {
    std::map<std::string, std::pair<int64_t, std::string>> block_extent;
    for (auto& p : s.stages_) {
      const Stage& st = *p;
      if (st.is_placeholder() || st.attach == AttachKind::kInline) continue;
      bool seen_thread = false;
      std::string thread_loop;
      auto outer = enclosing_tags(st);
      for (auto& [tag, loop] : outer)
        if (tag.rfind("threadIdx", 0) == 0 || tag == "vthread") seen_thread = true, thread_loop = loop;
      for (auto& a : st.leaf_axes) {
        auto it = st.annotations.find(a->name);
        if (it == st.annotations.end() || !is_thread_tag(it->second)) continue;
        const std::string& tag = it->second;
        if (tag.rfind("blockIdx", 0) == 0) {
          TESSEL_CHECK(!seen_thread) << "stage " << st.name << ", axis " << a->name << ": bound to " << tag
                                     << " inside loop " << thread_loop
                                     << ", which is bound to a thread index; block loops must enclose thread loops";
          TESSEL_CHECK(outer.empty()) << "stage " << st.name << ", axis " << a->name << ": bound to " << tag
                                      << " but computed inside loop " << outer.back().second << " bound to "
                                      << outer.back().first << "; only stages computed at the root bind blocks";
          auto [bit, fresh] = block_extent.emplace(tag, std::make_pair(a->extent, st.name + "." + a->name));
          TESSEL_CHECK(fresh || bit->second.first == a->extent)
              << "stage " << st.name << ", axis " << a->name << ": bound to " << tag << " with extent " << a->extent
              << " but loop " << bit->second.second << " is bound to it with extent " << bit->second.first
              << "; one kernel has one grid";
        } else {
          // A local stage has one copy per thread: every thread must compute all of it.
          TESSEL_CHECK(tag == "vthread" || st.scope != ir::MemScope::kLocal)
              << "stage " << st.name << ", axis " << a->name << ": bound to " << tag
              << ", but the stage has local scope (one copy per thread), so each thread would fill only part of "
                 "its copy; only a shared-memory stage (cooperative fetching) may bind thread indices inside a "
                 "kernel (cache_read/set_scope \"shared\")";
          seen_thread = true;
          thread_loop = st.name + "." + a->name;
        }
      }
    }
  }

  void pragma(const PragmaStep& x) {
    Stage& st = loop_stage(x.stage);
    leaf(st, x.axis);
    TESSEL_CHECK(x.key == "auto_unroll_max_step" || x.key == "software_pipeline" || x.key == "min_blocks_per_sm")
        << "stage " << x.stage << ", axis " << x.axis << ": unknown pragma '" << x.key
        << "' (expected auto_unroll_max_step, software_pipeline or min_blocks_per_sm)";
    int64_t hi = x.key == "software_pipeline" ? 1 : x.key == "min_blocks_per_sm" ? 32 : 4096;
    TESSEL_CHECK(x.value >= 0 && x.value <= hi) << "stage " << x.stage << ", axis " << x.axis << ": " << x.key << " "
                                                << x.value << " must be in [0, " << hi << "]";
    st.pragmas[x.axis][x.key] = x.value;
  }
};

Status Schedule::apply_step(const Step& step) {
  Primitives p{*this};
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, SplitStep>) p.split(x);
        else if constexpr (std::is_same_v<T, TileStep>) p.tile(x);
        else if constexpr (std::is_same_v<T, FuseStep>) p.fuse(x);
        else if constexpr (std::is_same_v<T, ReorderStep>) p.reorder(x);
        else if constexpr (std::is_same_v<T, ComputeAtStep>) p.compute_at(x);
        else if constexpr (std::is_same_v<T, ComputeInlineStep>) p.compute_inline(x);
        else if constexpr (std::is_same_v<T, ComputeRootStep>) p.compute_root(x);
        else if constexpr (std::is_same_v<T, CacheReadStep>) p.cache_read(x);
        else if constexpr (std::is_same_v<T, CacheWriteStep>) p.cache_write(x);
        else if constexpr (std::is_same_v<T, AnnotateStep>) p.annotate(x);
        else if constexpr (std::is_same_v<T, RfactorStep>) p.rfactor(x);
        else if constexpr (std::is_same_v<T, StorageAlignStep>) p.storage_align(x);
        else if constexpr (std::is_same_v<T, PragmaStep>) p.pragma(x);
        else if constexpr (std::is_same_v<T, TransformLayoutStep>) p.transform_layout(x);
        else if constexpr (std::is_same_v<T, BindStep>) p.bind(x);
        else if constexpr (std::is_same_v<T, SetScopeStep>) p.set_scope(x);
      },
      step);
  p.validate_attachments();
  p.validate_bindings();
  return Status::ok();
}

Status Schedule::apply(const Step& step) {
  Schedule backup(*this);
  try {
    apply_step(step);
  } catch (const UserError& e) {
    *this = backup;
    return Status::error(e.what());
  }
  trace_ = backup.trace_;
  trace_.push_back(step);
  return Status::ok();
}

Status Schedule::apply_all(const std::vector<Step>& steps) {
  for (size_t i = 0; i < steps.size(); ++i) {
    Status st = apply(steps[i]);
    if (!st) return Status::error("step " + std::to_string(i) + " " + step_to_string(steps[i]) + ": " + st.message());
  }
  return Status::ok();
}

namespace {
void throw_if(const Status& st) {
  TESSEL_CHECK(st.is_ok()) << st.message();
}
}  // namespace

std::string Schedule::newest_stage_named(const std::string& base) const {
  std::string last = base;
  for (int k = 2; find(base + std::to_string(k)); ++k) last = base + std::to_string(k);
  return last;
}

std::pair<std::string, std::string> Schedule::split(const std::string& stage, const std::string& axis, int64_t f) {
  throw_if(apply(SplitStep{stage, axis, f, false}));
  auto& r = find(stage)->relations.back();
  return {r.outer->name, r.inner->name};
}
std::pair<std::string, std::string> Schedule::split_nparts(const std::string& stage, const std::string& axis,
                                                           int64_t n) {
  throw_if(apply(SplitStep{stage, axis, n, true}));
  auto& r = find(stage)->relations.back();
  return {r.outer->name, r.inner->name};
}
std::vector<std::string> Schedule::tile(const std::string& stage, const std::string& x, const std::string& y,
                                        int64_t fx, int64_t fy) {
  throw_if(apply(TileStep{stage, x, y, fx, fy}));
  auto& r = find(stage)->relations;
  return {r[r.size() - 2].outer->name, r.back().outer->name, r[r.size() - 2].inner->name, r.back().inner->name};
}
std::string Schedule::fuse(const std::string& stage, const std::vector<std::string>& axes) {
  throw_if(apply(FuseStep{stage, axes}));
  return find(stage)->relations.back().parent->name;
}
void Schedule::reorder(const std::string& stage, const std::vector<std::string>& order) {
  throw_if(apply(ReorderStep{stage, order}));
}
void Schedule::compute_at(const std::string& stage, const std::string& target, const std::string& axis) {
  throw_if(apply(ComputeAtStep{stage, target, axis}));
}
void Schedule::compute_inline(const std::string& stage) { throw_if(apply(ComputeInlineStep{stage})); }
void Schedule::compute_root(const std::string& stage) { throw_if(apply(ComputeRootStep{stage})); }
std::string Schedule::cache_read(const std::string& tensor, const std::string& scope,
                                 const std::vector<std::string>& readers) {
  throw_if(apply(CacheReadStep{tensor, scope, readers}));
  return newest_stage_named(tensor + "." + scope);
}
std::string Schedule::cache_write(const std::string& stage, const std::string& scope) {
  throw_if(apply(CacheWriteStep{stage, scope}));
  return newest_stage_named(stage + "." + scope);
}
void Schedule::vectorize(const std::string& stage, const std::string& axis) {
  throw_if(apply(AnnotateStep{stage, axis, "vectorize"}));
}
void Schedule::unroll(const std::string& stage, const std::string& axis) {
  throw_if(apply(AnnotateStep{stage, axis, "unroll"}));
}
void Schedule::parallel(const std::string& stage, const std::string& axis) {
  throw_if(apply(AnnotateStep{stage, axis, "parallel"}));
}
std::string Schedule::rfactor(const std::string& stage, const std::string& axis) {
  throw_if(apply(RfactorStep{stage, axis}));
  return newest_stage_named(stage + ".rf");
}
void Schedule::transform_layout(const std::string& stage, int dim, int64_t factor) {
  throw_if(apply(TransformLayoutStep{stage, dim, factor}));
}
void Schedule::storage_align(const std::string& stage, int dim, int64_t factor, int64_t offset) {
  throw_if(apply(StorageAlignStep{stage, dim, factor, offset}));
}
void Schedule::bind(const std::string& stage, const std::string& axis, const std::string& thread_tag) {
  throw_if(apply(BindStep{stage, axis, thread_tag}));
}
void Schedule::set_scope(const std::string& stage, const std::string& scope) {
  throw_if(apply(SetScopeStep{stage, scope}));
}
void Schedule::pragma(const std::string& stage, const std::string& axis, const std::string& key, int64_t value) {
  throw_if(apply(PragmaStep{stage, axis, key, value}));
}

}  // namespace tessel::schedule
