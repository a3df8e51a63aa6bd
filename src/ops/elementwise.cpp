// Elementwise operators (add, mul, relu, sigmoid, tanh, exp, a chain of them) and their registration.
#include "tessel/ops/elementwise.h"

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {
const ir::DataType kF32 = ir::DataType::float32();

void check_shape(int M, int N, const char* op) { TESSEL_CHECK(M > 0 && N > 0) << op << ": M, N must be positive"; }
}  // namespace

UnaryOp parse_unary(const std::string& s) {
  if (s == "none") return UnaryOp::kNone;
  if (s == "relu") return UnaryOp::kRelu;
  if (s == "sigmoid") return UnaryOp::kSigmoid;
  if (s == "tanh") return UnaryOp::kTanh;
  if (s == "exp") return UnaryOp::kExp;
  TESSEL_CHECK(false) << "unknown elementwise function '" << s << "' (expected none, relu, sigmoid, tanh or exp)";
  return UnaryOp::kNone;
}

Expr apply_unary(UnaryOp op, const Expr& x) {
  switch (op) {
    case UnaryOp::kNone:
      return x;
    case UnaryOp::kRelu:
      return ir::max(x, ir::make_zero(x.dtype()));
    case UnaryOp::kSigmoid:
      return ir::sigmoid(x);
    case UnaryOp::kTanh:
      return ir::tanh(x);
    case UnaryOp::kExp:
      return ir::exp(x);
  }
  return x;
}

OpTensors unary(UnaryOp op, int M, int N) {
  check_shape(M, N, "unary elementwise");
  Tensor A = te::placeholder({M, N}, kF32, "A");
  Tensor out = te::compute(
      {M, N}, [&](Var i, Var j) { return apply_unary(op, A(i, j)); }, "Out");
  return {{A}, {out}};
}

OpTensors binary(BinaryOp op, int M, int N) {
  check_shape(M, N, "binary elementwise");
  Tensor A = te::placeholder({M, N}, kF32, "A");
  Tensor B = te::placeholder({M, N}, kF32, "B");
  Tensor out = te::compute(
      {M, N}, [&](Var i, Var j) { return op == BinaryOp::kAdd ? A(i, j) + B(i, j) : A(i, j) * B(i, j); }, "Out");
  return {{A, B}, {out}};
}

OpTensors elementwise_chain(int M, int N, bool mul, UnaryOp f) {
  check_shape(M, N, "elementwise_chain");
  Tensor A = te::placeholder({M, N}, kF32, "A");
  Tensor B = te::placeholder({M, N}, kF32, "B");
  Tensor sum = te::compute(
      {M, N}, [&](Var i, Var j) { return A(i, j) + B(i, j); }, "Sum");
  if (!mul) {
    Tensor out = te::compute(
        {M, N}, [&](Var i, Var j) { return apply_unary(f, sum(i, j)); }, "Out");
    return {{A, B}, {out}};
  }
  Tensor C = te::placeholder({M, N}, kF32, "C");
  Tensor prod = te::compute(
      {M, N}, [&](Var i, Var j) { return sum(i, j) * C(i, j); }, "Prod");
  Tensor out = te::compute(
      {M, N}, [&](Var i, Var j) { return apply_unary(f, prod(i, j)); }, "Out");
  return {{A, B, C}, {out}};
}

namespace {
std::vector<OpParam> shape_params() { return {{"M", "1", "rows", {}, 1}, {"N", "", "columns", {}, 1}}; }
}  // namespace

void register_elementwise_ops() {
  register_op({"add", "Out[M, N] = A + B", shape_params(),
               [](const OpArgs& a) { return binary(BinaryOp::kAdd, a.ii("M"), a.ii("N")); }});
  register_op({"mul", "Out[M, N] = A * B", shape_params(),
               [](const OpArgs& a) { return binary(BinaryOp::kMul, a.ii("M"), a.ii("N")); }});
  struct U {
    const char* name;
    const char* summary;
    UnaryOp op;
  };
  for (U u : {U{"relu", "Out[M, N] = max(A, 0)", UnaryOp::kRelu},
              U{"sigmoid", "Out[M, N] = 1 / (1 + exp(-A))", UnaryOp::kSigmoid},
              U{"tanh", "Out[M, N] = tanh(A)", UnaryOp::kTanh}, U{"exp", "Out[M, N] = exp(A)", UnaryOp::kExp}}) {
    UnaryOp op = u.op;
    register_op({u.name, u.summary, shape_params(), [op](const OpArgs& a) { return unary(op, a.ii("M"), a.ii("N")); }});
  }
  auto ps = shape_params();
  ps.push_back({"mul", "0", "multiply the sum by a third input C", {}, 0, 1});
  ps.push_back({"activation", "relu", "the function applied last", {"none", "relu", "sigmoid", "tanh", "exp"}});
  register_op({"elementwise_chain", "Out[M, N] = activation(A + B), or activation((A + B) * C) with mul=1", ps,
               [](const OpArgs& a) {
                 return elementwise_chain(a.ii("M"), a.ii("N"), a.i("mul") != 0, parse_unary(a.s("activation")));
               }});
}

}  // namespace tessel::ops
