#include "tessel/ops/matmul.h"

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

}  // namespace tessel::ops
