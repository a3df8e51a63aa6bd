#include "tessel/ops/matmul.h"

#include <algorithm>

#include "builtin_ops.h"
#include "tessel/ops/matmul_general.h"
#include "tessel/ops/registry.h"

namespace tessel::ops {

std::vector<te::Tensor> matmul(int64_t M, int64_t N, int64_t K, ir::DataType dtype) {
  te::Tensor A = te::placeholder({int(M), int(K)}, dtype, "A");
  te::Tensor B = te::placeholder({int(K), int(N)}, dtype, "B");
  ir::IterVar k = te::reduce_axis(int(K), "k");
  te::Tensor C = te::compute(
      {int(M), int(N)}, [&](te::Var i, te::Var j) { return te::sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
  return {A, B, C};
}

schedule::Schedule schedule_matmul_cpu(const te::Tensor& C, const MatmulCpuParams& p) {
  schedule::Schedule s({C});
  std::string cl = s.cache_write(C.name(), "local");
  auto t = s.tile(C.name(), "i", "j", p.mr, p.nr);  // i.o, j.o, i.i, j.i
  s.vectorize(C.name(), t[3]);
  if (p.parallel) s.parallel(C.name(), t[0]);
  s.compute_at(cl, C.name(), t[1]);
  auto [ko, ki] = s.split(cl, "k", p.kunroll);
  s.reorder(cl, {ko, ki, "i", "j"});
  s.unroll(cl, ki);
  s.unroll(cl, "i");
  s.vectorize(cl, "j");
  return s;
}

std::vector<te::Tensor> matmul_packed(int64_t M, int64_t N, int64_t K, int nr, ir::DataType dtype) {
  TESSEL_CHECK(nr > 0) << "matmul_packed: panel width nr must be positive, got " << nr;
  te::Tensor A = te::placeholder({int(M), int(K)}, dtype, "A");
  te::Tensor B = te::placeholder({int(K), int(N)}, dtype, "B");
  int nb = int((N + nr - 1) / nr);
  te::Tensor Bp = te::compute(
      {nb, int(K), nr},
      [&](te::Var jo, te::Var k, te::Var ji) {
        ir::Expr col = jo * nr + ji;
        if (N % nr == 0) return B(k, col);
        return ir::if_then_else(col < int(N), B(k, ir::min(col, int(N - 1))), ir::make_zero(dtype));
      },
      "Bp");
  ir::IterVar k = te::reduce_axis(int(K), "k");
  te::Tensor C = te::compute(
      {int(M), int(N)},
      [&](te::Var i, te::Var j) { return te::sum(A(i, k->var) * Bp(j / nr, k->var, j % nr), {k}); }, "C");
  return {A, B, C};
}

MatmulCpuParams matmul_cpu_params(int vector_bytes) {
  MatmulCpuParams p;
  int lanes = std::max(1, vector_bytes / 4);
  // Two vectors per row and 8 rows: 16 accumulators (AVX-512 has 32 registers); with 16 registers
  // (AVX2), 6 rows x 2 vectors = 12 accumulators.
  p.nr = 2 * lanes;
  p.mr = vector_bytes >= 64 ? 8 : 6;
  p.kunroll = 4;
  return p;
}

schedule::Schedule schedule_matmul_packed_cpu(const std::vector<te::Tensor>& t, const MatmulCpuParams& p) {
  TESSEL_CHECK(t.size() == 3) << "schedule_matmul_packed_cpu expects {A, B, C} from matmul_packed";
  const auto& bp_shape = t[2].op()->name() == "C" ? te::as_compute(t[2].op())->inputs().back()->shape()
                                                    : std::vector<ir::Expr>{};
  TESSEL_CHECK(bp_shape.size() == 3 && ir::as_const_int(bp_shape[2]) && *ir::as_const_int(bp_shape[2]) == p.nr)
      << "schedule_matmul_packed_cpu: params nr=" << p.nr << " must equal the panel width of matmul_packed";
  schedule::Schedule s({t[2]});
  const std::string c = t[2].name();
  auto [io, ii] = s.split(c, "i", p.mr);
  auto [jo, ji] = s.split(c, "j", p.nr);
  auto [ko, ki] = s.split(c, "k", p.kunroll);
  s.reorder(c, {jo, io, ko, ki, ii, ji});
  s.unroll(c, ki);
  s.unroll(c, ii);
  s.vectorize(c, ji);
  if (p.parallel) {
    s.parallel(c, jo);
    s.parallel("Bp", "i");
  }
  s.vectorize("Bp", "l");
  return s;
}

namespace {
// C[i, j] = sum_k A[i, k] * B[k, j] with optional transposes; int8 operands accumulate in int32.
OpTensors build_matmul(const OpArgs& a) {
  return matmul_general(a.ii("M"), a.ii("N"), a.ii("K"), a.i("transpose_a") != 0, a.i("transpose_b") != 0, a.dtype());
}
}  // namespace

void register_matmul_ops() {
  register_op({"matmul",
               "C[M, N] = A[M, K] x B[K, N] (A or B optionally transposed; int8 accumulates in int32)",
               {{"M", "", "rows of C", {}, 1},
                {"N", "", "columns of C", {}, 1},
                {"K", "", "reduction length", {}, 1},
                {"transpose_a", "0", "A is stored [K, M]", {}, 0, 1},
                {"transpose_b", "0", "B is stored [N, K]", {}, 0, 1},
                {"dtype", "float32", "element type of A and B", {"float32", "int8"}}},
               build_matmul});
}

}  // namespace tessel::ops
