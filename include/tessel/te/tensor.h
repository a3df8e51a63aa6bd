// Tensor expressions: placeholders and computed tensors forming a DAG of operations.
//   Tensor A = placeholder({M, K}, DataType::float32(), "A");
//   IterVar k = reduce_axis(0, K, "k");
//   Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
// Shapes are expressions (constants today; symbolic extents are not designed out).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessel/ir/op.h"

namespace tessel::te {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Var;

class OperationNode;
using Operation = std::shared_ptr<const OperationNode>;

/** The output of an operation; call it with indices to read an element inside another compute. */
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}
  const Operation& op() const { return op_; }
  bool defined() const { return op_ != nullptr; }
  const std::string& name() const;
  DataType dtype() const;
  const std::vector<Expr>& shape() const;
  size_t ndim() const { return shape().size(); }
  /** Element read: A(i, j). */
  Expr operator()(std::vector<Expr> indices) const;
  template <class... I>
  Expr operator()(I... idx) const {
    return (*this)(std::vector<Expr>{Expr(idx)...});
  }

 private:
  Operation op_;
};

/** An operation: a named producer with a shape and dtype. Immutable once built. */
class OperationNode : public ir::Producer, public std::enable_shared_from_this<OperationNode> {
 public:
  enum class Kind { kPlaceholder, kCompute };
  OperationNode(Kind k, std::string name, DataType dtype, std::vector<Expr> shape)
      : kind(k), name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}
  const std::string& name() const override { return name_; }
  DataType dtype() const override { return dtype_; }
  const std::vector<Expr>& shape() const override { return shape_; }
  const Kind kind;

 private:
  std::string name_;
  DataType dtype_;
  std::vector<Expr> shape_;
};

/** An input tensor supplied by the caller. */
class PlaceholderOp : public OperationNode {
 public:
  PlaceholderOp(std::string name, DataType dtype, std::vector<Expr> shape)
      : OperationNode(Kind::kPlaceholder, std::move(name), dtype, std::move(shape)) {}
};

/** out[axis...] = body; body may be a Reduce over reduce_axis (only at the top). */
class ComputeOp : public OperationNode {
 public:
  ComputeOp(std::string name, std::vector<IterVar> axis, Expr body);
  std::vector<IterVar> axis;         // one data-parallel axis per output dimension, domain [0, shape)
  std::vector<IterVar> reduce_axis;  // from the top-level Reduce (empty when none)
  Expr body;
  /** The top-level Reduce, or null. */
  const ir::Reduce* reduce() const { return body.as<ir::Reduce>(); }
  /** Distinct operations read by body, in first-read order. */
  std::vector<Operation> inputs() const;
};

const ComputeOp* as_compute(const Operation& op);

/** Declares an input tensor. Extents must be positive. */
Tensor placeholder(std::vector<Expr> shape, DataType dtype, const std::string& name);

/** Builds a tensor from a function of its indices. axis_names default to i, j, l, m, ... */
Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& f,
               const std::string& name, std::vector<std::string> axis_names = {});
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var)>& f, const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var)>& f, const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var)>& f, const std::string& name);
Tensor compute(std::vector<Expr> shape, const std::function<Expr(Var, Var, Var, Var)>& f, const std::string& name);

/** A reduction axis over [min, min + extent). */
IterVar reduce_axis(Expr min, Expr extent, const std::string& name);
inline IterVar reduce_axis(Expr extent, const std::string& name) { return reduce_axis(0, std::move(extent), name); }

/** Reductions (only allowed as the whole body of a compute). where = optional condition. */
Expr sum(Expr source, std::vector<IterVar> axes, Expr where = Expr());
Expr prod(Expr source, std::vector<IterVar> axes, Expr where = Expr());
Expr reduce_max(Expr source, std::vector<IterVar> axes, Expr where = Expr());
Expr reduce_min(Expr source, std::vector<IterVar> axes, Expr where = Expr());

/** All operations reachable from the outputs, producers before consumers (deterministic). */
std::vector<Operation> topo_order(const std::vector<Tensor>& outputs);

}  // namespace tessel::te
