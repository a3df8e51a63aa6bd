// Writes PTX + JSON for the GPU matmul schedule with given tile parameters (for bench/gpu/run_matmul_ptx.cu
// on the GPU machine):  gen_matmul_ptx OUT_PREFIX M N K [bm bn bk tm tn vec [pipeline [min_blocks_per_sm [vt]]]]
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "tessel/codegen/cuda.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc != 5 && argc != 11 && argc != 12 && argc != 13 && argc != 14) {
    std::fprintf(stderr, "usage: %s OUT_PREFIX M N K [bm bn bk tm tn vec [pipeline [min_blocks_per_sm [vt]]]]\n", argv[0]);
    return 2;
  }
  int64_t M = std::atol(argv[2]), N = std::atol(argv[3]), K = std::atol(argv[4]);
  ops::MatmulGpuParams p;
  if (argc >= 11) {
    p.bm = std::atoi(argv[5]), p.bn = std::atoi(argv[6]), p.bk = std::atoi(argv[7]);
    p.tm = std::atoi(argv[8]), p.tn = std::atoi(argv[9]), p.vec = std::atoi(argv[10]);
    p.pipeline = argc >= 12 && std::atoi(argv[11]) != 0;
    if (argc >= 13) p.min_blocks_per_sm = std::atoi(argv[12]);
    if (argc == 14) p.vt = std::atoi(argv[13]);
  }
  auto t = ops::matmul(M, N, K);
  auto f = lower::lower(ops::schedule_matmul_gpu(t[2], p), t, "mm");
  auto k = codegen::build_cuda(f);
  codegen::write_cuda_kernel(k, argv[1]);
  int regs = -1;
  std::string log;
  Status st = codegen::run_ptxas(k.ptx, "sm_90", &log, &regs);
  const auto& ki = k.artifact.first();
  std::cout << argv[1] << ": grid " << ki.grid[0] << " " << ki.grid[1] << " " << ki.grid[2] << " block " << ki.block[0]
            << " " << ki.block[1] << " " << ki.block[2] << " dyn_shared " << ki.shared_bytes << " ptxas "
            << (st.is_ok() ? "ok" : st.message()) << " regs " << regs << "\n";
  return st.is_ok() ? 0 : 1;
}
