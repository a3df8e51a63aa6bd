// Schedule bookkeeping: stages, lookup, copying, op replacement and the printer.
// The primitives themselves (checks + effect) live in primitives.cpp.
#include "tessel/schedule/schedule.h"

#include <sstream>
#include <unordered_map>

#include "tessel/ir/functor.h"
#include "tessel/ir/printer.h"

namespace tessel::schedule {

bool Stage::is_reduction() const {
  auto* c = te::as_compute(op);
  return c && c->reduce();
}

AxisPtr Stage::find_axis(const std::string& n) const {
  for (auto& a : root_axes)
    if (a->name == n) return a;
  for (auto& r : relations) {
    for (auto& a : {r.parent, r.outer, r.inner})
      if (a->name == n) return a;
  }
  return nullptr;
}

int Stage::leaf_index(const std::string& n) const {
  for (size_t i = 0; i < leaf_axes.size(); ++i)
    if (leaf_axes[i]->name == n) return int(i);
  return -1;
}

std::shared_ptr<Stage> make_stage(const te::Operation& op) {
  auto s = std::make_shared<Stage>();
  s->name = op->name();
  s->op = op;
  auto add = [&](const IterVar& iv) {
    auto a = std::make_shared<Axis>();
    a->name = iv->var.name();
    a->var = iv->var;
    a->kind = iv->kind;
    const int64_t* e = ir::as_const_int(iv->extent);
    TESSEL_CHECK(e) << "stage " << op->name() << ", axis " << a->name
                    << ": symbolic extents are not supported yet (extent " << ir::to_string(iv->extent) << ")";
    a->extent = *e;
    s->root_axes.push_back(a);
  };
  if (auto* c = te::as_compute(op)) {
    for (auto& iv : c->axis) add(iv);
    for (auto& iv : c->reduce_axis) add(iv);
  }
  s->leaf_axes = s->root_axes;
  s->storage_align.assign(op->shape().size(), {0, 0});
  return s;
}

Schedule::Schedule(std::vector<te::Tensor> outputs) : outputs_(std::move(outputs)) {
  TESSEL_CHECK(!outputs_.empty()) << "a schedule needs at least one output tensor";
  std::unordered_map<std::string, const te::OperationNode*> names;
  for (auto& op : te::topo_order(outputs_)) {
    auto [it, fresh] = names.emplace(op->name(), op.get());
    TESSEL_CHECK(fresh) << "two different tensors are both named '" << op->name()
                        << "'; tensor names must be unique within a computation";
    stages_.push_back(make_stage(op));
  }
  for (auto& t : outputs_) {
    find(t.name())->is_output = true;
  }
}

Schedule::Schedule(const Schedule& o) { *this = o; }

Schedule& Schedule::operator=(const Schedule& o) {
  if (this == &o) return *this;
  outputs_ = o.outputs_;
  trace_ = o.trace_;
  stages_.clear();
  for (auto& s : o.stages_) {
    auto c = std::make_shared<Stage>(*s);
    // Deep-copy axes so later splits in one copy do not alter the other.
    std::unordered_map<const Axis*, AxisPtr> m;
    auto cp = [&](const AxisPtr& a) {
      auto it = m.find(a.get());
      if (it != m.end()) return it->second;
      auto n = std::make_shared<Axis>(*a);
      m[a.get()] = n;
      return n;
    };
    for (auto& a : c->root_axes) a = cp(a);
    for (auto& a : c->leaf_axes) a = cp(a);
    for (auto& r : c->relations) {
      r.parent = cp(r.parent);
      r.outer = cp(r.outer);
      r.inner = cp(r.inner);
    }
    stages_.push_back(c);
  }
  return *this;
}

Stage* Schedule::find(const std::string& name) const {
  for (auto& s : stages_)
    if (s->name == name) return s.get();
  return nullptr;
}

const Stage& Schedule::stage(const std::string& name) const {
  Stage* s = find(name);
  if (!s) {
    std::string all;
    for (auto& x : stages_) all += (all.empty() ? "" : ", ") + x->name;
    TESSEL_CHECK(false) << "no stage named '" << name << "' (stages: " << all << ")";
  }
  return *s;
}

te::Tensor Schedule::tensor(const std::string& name) const { return te::Tensor(stage(name).op); }

std::vector<std::string> Schedule::leaf_names(const std::string& name) const {
  std::vector<std::string> out;
  for (auto& a : stage(name).leaf_axes) out.push_back(a->name);
  return out;
}

te::Operation rewrite_reads(const te::Operation& reader, const te::Operation& from, const te::Operation& to) {
  auto* c = te::as_compute(reader);
  if (!c) return reader;
  Expr body = ir::rewrite_tensor_reads(c->body, [&](const ir::TensorRead* t, const Expr& r) {
    return t->producer.get() == from.get() ? ir::TensorRead::make(to, t->indices) : r;
  });
  if (body.same_as(c->body)) return reader;
  return std::make_shared<te::ComputeOp>(c->name(), c->axis, body);
}

void Schedule::replace_op(const te::Operation& old_op, const te::Operation& new_op) {
  // Every reader is rebuilt; a rebuilt reader is itself replaced in its readers (stages are in
  // producer-before-consumer order, so one forward sweep suffices).
  std::vector<std::pair<te::Operation, te::Operation>> pending{{old_op, new_op}};
  for (auto& s : stages_) {
    te::Operation cur = s->op;
    for (auto& [from, to] : pending) cur = rewrite_reads(cur, from, to);
    if (cur.get() != s->op.get()) {
      pending.emplace_back(s->op, cur);
      s->op = cur;
    }
  }
  for (auto& t : outputs_) {
    for (auto& [from, to] : pending)
      if (t.op().get() == from.get()) t = te::Tensor(to);
  }
}

std::string Schedule::to_string() const {
  std::ostringstream os;
  for (auto& s : stages_) {
    os << "stage " << s->name;
    if (s->is_placeholder()) {
      os << " (input)\n";
      continue;
    }
    switch (s->attach) {
      case AttachKind::kRoot: os << " [root]"; break;
      case AttachKind::kInline: os << " [inline]"; break;
      case AttachKind::kAt: os << " [at " << s->attach_stage << "." << s->attach_axis << "]"; break;
    }
    if (s->scope != ir::MemScope::kGlobal) os << " scope=" << ir::scope_name(s->scope);
    if (s->is_output) os << " output";
    os << "\n";
    if (s->attach == AttachKind::kInline) continue;
    int depth = 1;
    for (auto& a : s->leaf_axes) {
      os << std::string(depth * 2, ' ') << a->name << " : " << a->extent;
      if (a->kind == ir::IterKind::kReduce) os << " (reduce)";
      auto it = s->annotations.find(a->name);
      if (it != s->annotations.end()) os << " " << it->second;
      auto pit = s->pragmas.find(a->name);
      if (pit != s->pragmas.end())
        for (auto& [k, v] : pit->second) os << " pragma " << k << "=" << v;
      os << "\n";
      ++depth;
    }
  }
  return os.str();
}

}  // namespace tessel::schedule
