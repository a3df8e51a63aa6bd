// Runs a tessel matmul PTX kernel on the GPU, checks it against cuBLAS SGEMM (fp32, no TF32) and times
// both. Built on the GPU machine only (needs libcuda and cuBLAS):
//   nvcc -O2 -o run_matmul_ptx bench/gpu/run_matmul_ptx.cu -lcuda -lcublas
//   ./run_matmul_ptx mm.ptx ENTRY GX GY GZ BX BY BZ DYN_SHARED M N K
// The kernel's arguments are (A[M,K], B[K,N], C[M,N]), row-major float32 (docs/gpu-codegen.md).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                              \
  do {                                                                     \
    CUresult r = (x);                                                      \
    if (r != CUDA_SUCCESS) {                                               \
      const char* s = nullptr;                                             \
      cuGetErrorString(r, &s);                                             \
      std::fprintf(stderr, "%s failed: %s\n", #x, s ? s : "?");            \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 13) {
    std::fprintf(stderr, "usage: %s PTX ENTRY GX GY GZ BX BY BZ DYN_SHARED M N K\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string ptx = ss.str();
  unsigned g[3], b[3];
  for (int i = 0; i < 3; ++i) g[i] = std::atoi(argv[3 + i]), b[i] = std::atoi(argv[6 + i]);
  unsigned dyn = std::atoi(argv[9]);
  long M = std::atol(argv[10]), N = std::atol(argv[11]), K = std::atol(argv[12]);
  cudaFree(0);  // runtime context (shared with the driver API)
  CUmodule mod;
  char log[8192] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, (void*)(size_t)sizeof log};
  CUresult lr = cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals);
  if (lr != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuModuleLoadDataEx failed: %s\n", log);
    return 1;
  }
  CUfunction fn;
  CK(cuModuleGetFunction(&fn, mod, argv[2]));
  if (dyn > 48 * 1024) CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn));
  int regs = 0, local = 0;
  cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);

  std::vector<float> hA(M * K), hB(K * N), hC(M * N, NAN), hR(M * N);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : hA) x = u(rng);
  for (auto& x : hB) x = u(rng);
  float *dA, *dB, *dC, *dR;
  cudaMalloc(&dA, hA.size() * 4);
  cudaMalloc(&dB, hB.size() * 4);
  cudaMalloc(&dC, hC.size() * 4);
  cudaMalloc(&dR, hR.size() * 4);
  cudaMemcpy(dA, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dC, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice);  // NaN poison
  void* args[] = {&dA, &dB, &dC};
  auto launch = [&] { CK(cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], dyn, 0, args, nullptr)); };
  launch();
  CK(cuCtxSynchronize());
  cudaMemcpy(hC.data(), dC, hC.size() * 4, cudaMemcpyDeviceToHost);

  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);  // fp32 FFMA, no TF32 tensor cores
  float one = 1, zero = 0;
  // Row-major C = A B is column-major C^T = B^T A^T.
  auto gemm = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, N, dA, K, &zero, dR, N); };
  gemm();
  cudaDeviceSynchronize();
  cudaMemcpy(hR.data(), dR, hR.size() * 4, cudaMemcpyDeviceToHost);
  double max_err = 0;
  long bad = -1;
  for (long i = 0; i < M * N; ++i) {
    double e = std::fabs(double(hC[i]) - hR[i]) / std::max(1.0, std::fabs(double(hR[i])));
    if (!(e <= max_err)) max_err = e, bad = i;
  }
  bool ok = max_err < 1e-3;

  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto time = [&](auto&& f) {
    for (int i = 0; i < 3; ++i) f();
    cudaEventRecord(e0);
    int iters = 20;
    for (int i = 0; i < iters; ++i) f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms / iters;
  };
  float t_ours = time(launch), t_cublas = time(gemm);
  double flop = 2.0 * M * N * K;
  std::printf("%s %ldx%ldx%ld: regs %d local %d B | correct %s (max rel err %.3g at %ld) | tessel %.3f ms %.1f GFLOP/s | "
              "cuBLAS %.3f ms %.1f GFLOP/s | ratio %.3f\n",
              argv[2], M, N, K, regs, local, ok ? "yes" : "NO", max_err, bad, t_ours, flop / t_ours / 1e6, t_cublas,
              flop / t_cublas / 1e6, t_cublas / t_ours);
  return ok ? 0 : 1;
}
