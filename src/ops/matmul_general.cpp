// Matmul with transposed operands and batch_matmul (fp32, int8 -> int32), and batch_matmul's registration
// (matmul itself is registered in matmul.cpp).
#include "tessel/ops/matmul_general.h"

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {
void check_dtype(ir::DataType t, const char* op) {
  TESSEL_CHECK(t == ir::DataType::float32() || t == ir::DataType::int8())
      << op << ": dtype must be float32 or int8, got " << t.to_string();
}
}  // namespace

OpTensors matmul_general(int M, int N, int K, bool ta, bool tb, ir::DataType dtype) {
  check_dtype(dtype, "matmul");
  TESSEL_CHECK(M > 0 && N > 0 && K > 0) << "matmul: M, N, K must be positive";
  ir::DataType acc = detail::accum_type(dtype);
  Tensor A = ta ? te::placeholder({K, M}, dtype, "A") : te::placeholder({M, K}, dtype, "A");
  Tensor B = tb ? te::placeholder({N, K}, dtype, "B") : te::placeholder({K, N}, dtype, "B");
  ir::IterVar k = te::reduce_axis(K, "k");
  Tensor C = te::compute(
      {M, N},
      [&](Var i, Var j) {
        Expr x = ta ? A(k->var, i) : A(i, k->var);
        Expr y = tb ? B(j, k->var) : B(k->var, j);
        return te::sum(detail::to(acc, x) * detail::to(acc, y), {k});
      },
      "C");
  return {{A, B}, {C}};
}

OpTensors batch_matmul(int batch, int M, int N, int K, bool ta, bool tb, ir::DataType dtype) {
  check_dtype(dtype, "batch_matmul");
  TESSEL_CHECK(batch > 0 && M > 0 && N > 0 && K > 0) << "batch_matmul: batch, M, N, K must be positive";
  ir::DataType acc = detail::accum_type(dtype);
  Tensor A = ta ? te::placeholder({batch, K, M}, dtype, "A") : te::placeholder({batch, M, K}, dtype, "A");
  Tensor B = tb ? te::placeholder({batch, N, K}, dtype, "B") : te::placeholder({batch, K, N}, dtype, "B");
  ir::IterVar k = te::reduce_axis(K, "k");
  Tensor C = te::compute(
      {batch, M, N},
      [&](Var b, Var i, Var j) {
        Expr x = ta ? A(b, k->var, i) : A(b, i, k->var);
        Expr y = tb ? B(b, j, k->var) : B(b, k->var, j);
        return te::sum(detail::to(acc, x) * detail::to(acc, y), {k});
      },
      "C");
  return {{A, B}, {C}};
}

void register_matmul_general_ops() {
  register_op({"batch_matmul",
               "C[batch, M, N] = A[batch, M, K] x B[batch, K, N] (A or B optionally transposed; int8 accumulates "
               "in int32)",
               {{"batch", "1", "number of independent matmuls", {}, 1},
                {"M", "", "rows of C", {}, 1},
                {"N", "", "columns of C", {}, 1},
                {"K", "", "reduction length", {}, 1},
                {"transpose_a", "0", "A is stored [batch, K, M]", {}, 0, 1},
                {"transpose_b", "0", "B is stored [batch, N, K]", {}, 0, 1},
                {"dtype", "float32", "element type of A and B", {"float32", "int8"}}},
               [](const OpArgs& a) {
                 return batch_matmul(a.ii("batch"), a.ii("M"), a.ii("N"), a.ii("K"), a.i("transpose_a") != 0,
                                     a.i("transpose_b") != 0, a.dtype());
               }});
}

}  // namespace tessel::ops
