// Hand-written GPU matmul schedule (see include/tessel/ops/matmul.h, docs/gpu-codegen.md).
#include "tessel/ops/matmul.h"

namespace tessel::ops {

namespace {
// Cooperative fetch of a shared stage: its two loops fused, split into vec lanes (vectorized) and
// threads (threadIdx.y x threadIdx.x); the remaining outer loop runs serially.
void cooperative_fetch(schedule::Schedule& s, const std::string& st, int nty, int ntx, int vec) {
  auto loops = s.leaf_names(st);
  std::string f = s.fuse(st, loops);
  auto [fo, v] = s.split(st, f, vec);
  auto [foo, tx] = s.split(st, fo, ntx);
  auto [rest, ty] = s.split(st, foo, nty);
  s.bind(st, ty, "threadIdx.y");
  s.bind(st, tx, "threadIdx.x");
  if (vec > 1) s.vectorize(st, v);
}
}  // namespace

schedule::Schedule schedule_matmul_gpu(const te::Tensor& C, const MatmulGpuParams& p) {
  auto* c = te::as_compute(C.op());
  TESSEL_CHECK(c && c->reduce() && c->axis.size() == 2 && c->reduce_axis.size() == 1)
      << "schedule_matmul_gpu expects C[i, j] = sum_k A[i, k] * B[k, j]";
  int64_t M = *ir::as_const_int(C.shape()[0]), N = *ir::as_const_int(C.shape()[1]);
  int64_t K = *ir::as_const_int(c->reduce_axis[0]->extent);
  TESSEL_CHECK(p.bm % p.tm == 0 && p.bn % p.tn == 0)
      << "schedule_matmul_gpu: the thread tile " << p.tm << "x" << p.tn << " must divide the block tile " << p.bm << "x"
      << p.bn;
  TESSEL_CHECK(M % p.bm == 0 && N % p.bn == 0 && K % p.bk == 0)
      << "schedule_matmul_gpu: M=" << M << ", N=" << N << ", K=" << K << " must be multiples of bm=" << p.bm
      << ", bn=" << p.bn << ", bk=" << p.bk;
  TESSEL_CHECK(p.vt >= 1 && p.tm % p.vt == 0 && p.tn % p.vt == 0)
      << "schedule_matmul_gpu: vt=" << p.vt << " must divide the thread tile " << p.tm << "x" << p.tn;
  int nty = p.bm / p.tm, ntx = p.bn / p.tn;
  TESSEL_CHECK(p.vec > 0 && p.bk % p.vec == 0 && p.bn % p.vec == 0)
      << "schedule_matmul_gpu: vec=" << p.vec << " must divide bk=" << p.bk << " and bn=" << p.bn;
  const std::string out = C.name();
  const std::string a = c->inputs()[0]->name(), b = c->inputs()[1]->name();
  schedule::Schedule s({C});
  std::string cl = s.cache_write(out, "local");
  std::string as = s.cache_read(a, "shared", {cl});
  std::string bs = s.cache_read(b, "shared", {cl});
  auto t = s.tile(out, "i", "j", p.bm, p.bn);  // i.o, j.o, i.i, j.i
  std::vector<std::string> order = {t[0], t[1]};
  if (p.vt > 1) {
    auto [vy, ri] = s.split(out, t[2], p.bm / p.vt);
    auto [vx, rj] = s.split(out, t[3], p.bn / p.vt);
    t[2] = ri, t[3] = rj;
    s.bind(out, vy, "vthread");
    s.bind(out, vx, "vthread");
    order.insert(order.end(), {vy, vx});
  }
  auto [ty, ii] = s.split(out, t[2], p.tm / p.vt);
  auto [tx, ji] = s.split(out, t[3], p.tn / p.vt);
  order.insert(order.end(), {ty, tx, ii, ji});
  s.reorder(out, order);
  if (p.min_blocks_per_sm > 0) s.pragma(out, t[0], "min_blocks_per_sm", p.min_blocks_per_sm);
  s.bind(out, t[0], "blockIdx.y");
  s.bind(out, t[1], "blockIdx.x");
  s.bind(out, ty, "threadIdx.y");
  s.bind(out, tx, "threadIdx.x");
  s.compute_at(cl, out, tx);
  auto [ko, ki] = s.split(cl, "k", p.bk);
  s.reorder(cl, {ko, ki, "i", "j"});
  s.unroll(cl, ki);
  s.unroll(cl, "i");
  s.unroll(cl, "j");
  if (p.pipeline) s.pragma(cl, ko, "software_pipeline", 1);
  s.compute_at(as, cl, ko);
  s.compute_at(bs, cl, ko);
  cooperative_fetch(s, as, nty, ntx, p.vec);
  cooperative_fetch(s, bs, nty, ntx, p.vec);
  s.unroll(out, ii);
  s.vectorize(out, ji);
  return s;
}

}  // namespace tessel::ops
