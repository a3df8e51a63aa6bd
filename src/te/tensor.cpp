// Tensor-expression construction: placeholder, compute, reductions, and the DAG walk.
#include "tessel/te/tensor.h"

#include <set>
#include <unordered_set>

#include "tessel/ir/functor.h"
#include "tessel/support/error.h"

namespace tessel::te {

const std::string& Tensor::name() const { return op_->name(); }
DataType Tensor::dtype() const { return op_->dtype(); }
const std::vector<Expr>& Tensor::shape() const { return op_->shape(); }

Expr Tensor::operator()(std::vector<Expr> indices) const {
  TESSEL_CHECK(defined()) << "reading an undefined tensor";
  for (auto& i : indices) {
    // Allow int64 constants etc. to act as indices by adopting int32 where they are plain constants.
    if (i.defined() && i.dtype() != DataType::int32())
      if (auto* c = i.as<ir::IntImm>()) i = ir::IntImm::make(DataType::int32(), c->value);
  }
  return ir::TensorRead::make(op_, std::move(indices));
}

namespace {
void check_no_nested_reduce(const Expr& e, const std::string& name) {
  ir::post_order_visit(e, [&](const Expr& x) {
    TESSEL_CHECK(!x.as<ir::Reduce>()) << "compute " << name
                                      << ": a reduction (sum/max/...) must be the whole body, not nested inside "
                                         "another expression; compute it as its own tensor";
  });
}

void check_shape(const std::vector<Expr>& shape, const std::string& name) {
  for (size_t d = 0; d < shape.size(); ++d) {
    TESSEL_CHECK(shape[d].defined() && shape[d].dtype().is_integer() && shape[d].dtype().is_scalar())
        << "tensor " << name << ", dimension " << d << ": extent must be an integer";
    if (auto* c = ir::as_const_int(shape[d]))
      TESSEL_CHECK(*c > 0) << "tensor " << name << ", dimension " << d << ": extent " << *c << " must be > 0";
  }
}
}  // namespace

ComputeOp::ComputeOp(std::string name, std::vector<IterVar> ax, Expr b)
    : OperationNode(Kind::kCompute, std::move(name), b.dtype(), [&] {
        std::vector<Expr> s;
        for (auto& a : ax) s.push_back(a->extent);
        return s;
      }()),
      axis(std::move(ax)),
      body(std::move(b)) {
  if (auto* r = body.as<ir::Reduce>()) {
    reduce_axis = r->axes;
    check_no_nested_reduce(r->source, this->name());
    if (r->condition.defined()) check_no_nested_reduce(r->condition, this->name());
  } else {
    check_no_nested_reduce(body, this->name());
  }
}

std::vector<Operation> ComputeOp::inputs() const {
  std::vector<Operation> out;
  std::unordered_set<const ir::Producer*> seen;
  ir::post_order_visit(body, [&](const Expr& e) {
    if (auto* t = e.as<ir::TensorRead>()) {
      if (seen.insert(t->producer.get()).second)
        out.push_back(std::static_pointer_cast<const OperationNode>(t->producer));
    }
  });
  return out;
}

const ComputeOp* as_compute(const Operation& op) {
  return op && op->kind == OperationNode::Kind::kCompute ? static_cast<const ComputeOp*>(op.get()) : nullptr;
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, const std::string& name) {
  TESSEL_CHECK(!name.empty()) << "placeholder needs a name";
  TESSEL_CHECK(dtype.is_scalar()) << "placeholder " << name << ": element type must be scalar, got " << dtype;
  check_shape(shape, name);
  return Tensor(std::make_shared<PlaceholderOp>(name, dtype, std::move(shape)));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               const std::string& name, std::vector<std::string> axis_names) {
  TESSEL_CHECK(!name.empty()) << "compute needs a name";
  check_shape(shape, name);
  static const char* defaults[] = {"i", "j", "l", "m", "n", "p", "q", "r"};
  if (axis_names.empty()) {
    for (size_t d = 0; d < shape.size(); ++d)
      axis_names.push_back(d < 8 ? defaults[d] : "i" + std::to_string(d));
  }
  TESSEL_CHECK(axis_names.size() == shape.size())
      << "compute " << name << ": " << axis_names.size() << " axis names for " << shape.size() << " dimensions";
  std::vector<Var> vars;
  std::vector<IterVar> axis;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.emplace_back(axis_names[d], shape[d].dtype());
    axis.push_back(ir::make_iter_var(vars.back(), ir::make_zero(shape[d].dtype()), shape[d], ir::IterKind::kDataPar));
  }
  Expr body = f(vars);
  TESSEL_CHECK(body.defined()) << "compute " << name << ": the body is undefined";
  TESSEL_CHECK(body.dtype().is_scalar()) << "compute " << name << ": body must be scalar, got " << body.dtype();
  // Reduce axes must not reuse a data axis name (they name loops in schedules).
  if (auto* r = body.as<ir::Reduce>()) {
    for (auto& ra : r->axes)
      for (auto& n : axis_names)
        TESSEL_CHECK(ra->var.name() != n) << "compute " << name << ": reduce axis '" << n
                                          << "' has the same name as a data axis; rename one";
  }
  return Tensor(std::make_shared<ComputeOp>(name, std::move(axis), std::move(body)));
}

Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& f, const std::string& name) {
  TESSEL_CHECK(shape.size() == 1) << "compute " << name << ": 1-argument lambda for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return f(v[0]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& f, const std::string& name) {
  TESSEL_CHECK(shape.size() == 2) << "compute " << name << ": 2-argument lambda for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return f(v[0], v[1]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& f, const std::string& name) {
  TESSEL_CHECK(shape.size() == 3) << "compute " << name << ": 3-argument lambda for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return f(v[0], v[1], v[2]); }, name);
}
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& f, const std::string& name) {
  TESSEL_CHECK(shape.size() == 4) << "compute " << name << ": 4-argument lambda for a " << shape.size() << "-d shape";
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return f(v[0], v[1], v[2], v[3]); }, name);
}

IterVar reduce_axis(Expr min, Expr extent, const std::string& name) {
  TESSEL_CHECK(!name.empty()) << "reduce_axis needs a name";
  TESSEL_CHECK(min.defined() && extent.defined() && min.dtype().is_integer() && extent.dtype().is_integer())
      << "reduce_axis " << name << ": min and extent must be integers";
  if (auto* c = ir::as_const_int(extent)) TESSEL_CHECK(*c > 0) << "reduce_axis " << name << ": extent must be > 0";
  if (min.dtype() != extent.dtype()) min = ir::cast(extent.dtype(), min);
  return ir::make_iter_var(Var(name, extent.dtype()), min, extent, ir::IterKind::kReduce);
}

Expr sum(Expr s, std::vector<IterVar> a, Expr w) { return ir::Reduce::make(ir::ReduceKind::kSum, s, a, w); }
Expr prod(Expr s, std::vector<IterVar> a, Expr w) { return ir::Reduce::make(ir::ReduceKind::kProd, s, a, w); }
Expr reduce_max(Expr s, std::vector<IterVar> a, Expr w) { return ir::Reduce::make(ir::ReduceKind::kMax, s, a, w); }
Expr reduce_min(Expr s, std::vector<IterVar> a, Expr w) { return ir::Reduce::make(ir::ReduceKind::kMin, s, a, w); }

std::vector<Operation> topo_order(const std::vector<Tensor>& outputs) {
  std::vector<Operation> order;
  std::unordered_set<const OperationNode*> done;
  std::function<void(const Operation&)> walk = [&](const Operation& op) {
    if (done.count(op.get())) return;
    done.insert(op.get());
    if (auto* c = as_compute(op))
      for (auto& in : c->inputs()) walk(in);
    order.push_back(op);
  };
  for (auto& t : outputs) {
    TESSEL_CHECK(t.defined()) << "undefined output tensor";
    walk(t.op());
  }
  return order;
}

}  // namespace tessel::te
