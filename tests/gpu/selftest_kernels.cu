// Hand-written CUDA kernels for tessel-gpu-selftest: they stand in for generated PTX while exercising the
// worker's GPU path (load, launch, check, time, error kinds). Shapes are compile-time constants because
// tessel's kernels take one pointer per buffer and no scalars. Regenerate the PTX after an edit with
//   nvcc -arch=sm_90 -ptx -O3 -o tests/gpu/selftest_kernels.ptx tests/gpu/selftest_kernels.cu
// (tests/CMakeLists.txt embeds the committed .ptx, so builds need no nvcc.)
#include <cstdint>

// ---- element-wise: C = A + B over n floats ----------------------------------------------------------
template <int N>
__device__ void vecadd(const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) c[i] = a[i] + b[i];
}
extern "C" __global__ void vecadd_1m(const float* a, const float* b, float* c) { vecadd<1 << 20>(a, b, c); }

// ---- matmul C[M,N] = A[M,K] x B[K,N]: naive (the reference) and 128x128 tiles -----------------------
template <int M, int N, int K>
__device__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M || j >= N) return;
  float s = 0;
  for (int k = 0; k < K; ++k) s = fmaf(A[i * K + k], B[k * N + j], s);
  C[i * N + j] = s;
}

// 256 threads, block tile 128x128x8, 8x8 outputs per thread; M, N multiples of 128, K of 8.
template <int M, int N, int K>
__device__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  __shared__ __align__(16) float As[2][BK][BM];  // A tile, transposed
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tid = threadIdx.x;
  const int trow = tid / (BN / TN), tcol = tid % (BN / TN);
  const int brow = blockIdx.y * BM, bcol = blockIdx.x * BN;
  const int a_r = tid >> 1, a_c = (tid & 1) * 4;
  const int b_r = tid >> 5, b_c = (tid & 31) * 4;
  const float* Ap = A + (brow + a_r) * K + a_c;
  const float* Bp = B + b_r * N + bcol + b_c;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  float4 va = *reinterpret_cast<const float4*>(Ap);
  float4 vb = *reinterpret_cast<const float4*>(Bp);
  As[0][a_c + 0][a_r] = va.x, As[0][a_c + 1][a_r] = va.y, As[0][a_c + 2][a_r] = va.z, As[0][a_c + 3][a_r] = va.w;
  *reinterpret_cast<float4*>(&Bs[0][b_r][b_c]) = vb;
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    bool more = k0 + BK < K;
    if (more) {  // prefetch the next tiles into registers
      va = *reinterpret_cast<const float4*>(Ap + k0 + BK);
      vb = *reinterpret_cast<const float4*>(Bp + (k0 + BK) * N);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][trow * 4]);
      float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][64 + trow * 4]);
      float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tcol * 4]);
      float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][64 + tcol * 4]);
      float ra[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      float rb[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (more) {
      int nb = buf ^ 1;
      As[nb][a_c + 0][a_r] = va.x, As[nb][a_c + 1][a_r] = va.y, As[nb][a_c + 2][a_r] = va.z,
      As[nb][a_c + 3][a_r] = va.w;
      *reinterpret_cast<float4*>(&Bs[nb][b_r][b_c]) = vb;
      __syncthreads();
      buf = nb;
    }
  }
  // Thread rows: trow*4 + {0..3} and 64 + trow*4 + {0..3}; columns likewise with tcol.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int r = brow + (i < 4 ? trow * 4 + i : 64 + trow * 4 + i - 4);
    float* c = C + r * N + bcol;
    *reinterpret_cast<float4*>(c + tcol * 4) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(c + 64 + tcol * 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}

#define TESSEL_MATMUL(S)                                                                              \
  extern "C" __global__ void matmul_naive_##S(const float* A, const float* B, float* C) {           \
    matmul_naive<S, S, S>(A, B, C);                                                                   \
  }                                                                                                   \
  extern "C" __global__ void __launch_bounds__(256) matmul_tiled_##S(const float* A, const float* B, \
                                                                      float* C) {                     \
    matmul_tiled<S, S, S>(A, B, C);                                                                   \
  }
TESSEL_MATMUL(128)
TESSEL_MATMUL(1024)
TESSEL_MATMUL(2048)
TESSEL_MATMUL(4096)

// ---- softmax of each row of X[M, N], one block of 256 threads per row --------------------------------
template <int M, int N>
__device__ void softmax_rows(const float* __restrict__ X, float* __restrict__ Y) {
  __shared__ float red[32];
  const float* x = X + size_t(blockIdx.x) * N;
  float* y = Y + size_t(blockIdx.x) * N;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, x[j]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < int(blockDim.x >> 5); ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  float s = 0;
  for (int j = threadIdx.x; j < N; j += blockDim.x) s += __expf(x[j] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
  __syncthreads();
  s = 0;
  for (int w = 0; w < int(blockDim.x >> 5); ++w) s += red[w];
  float inv = 1.f / s;
  for (int j = threadIdx.x; j < N; j += blockDim.x) y[j] = __expf(x[j] - m) * inv;
}
extern "C" __global__ void softmax_4096x4096(const float* X, float* Y) { softmax_rows<4096, 4096>(X, Y); }
extern "C" __global__ void softmax_64x1000(const float* X, float* Y) { softmax_rows<64, 1000>(X, Y); }

// ---- sum of each row of X[M, N] -> Y[M], one block of 256 threads per row ---------------------------
template <int M, int N>
__device__ void row_sum(const float* __restrict__ X, float* __restrict__ Y) {
  __shared__ float red[32];
  const float* x = X + size_t(blockIdx.x) * N;
  float s = 0;
  for (int j = threadIdx.x * 4; j < N; j += blockDim.x * 4) {
    float4 v = *reinterpret_cast<const float4*>(x + j);
    s += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < int(blockDim.x >> 5); ++w) t += red[w];
    Y[blockIdx.x] = t;
  }
}
extern "C" __global__ void rowsum_4096x4096(const float* X, float* Y) { row_sum<4096, 4096>(X, Y); }
extern "C" __global__ void rowsum_64x1024(const float* X, float* Y) { row_sum<64, 1024>(X, Y); }

// ---- conv2d NHWC, In[N,H,W,CI] * W[KH,KW,CI,CO] -> Out[N,H,W,CO], 3x3, stride 1, pad 1; direct -------
template <int NB, int H, int W, int CI, int CO>
__device__ void conv3x3_nhwc(const float* __restrict__ In, const float* __restrict__ Wt, float* __restrict__ Out) {
  int co = blockIdx.x * blockDim.x + threadIdx.x;  // consecutive threads: consecutive output channels
  int pix = blockIdx.y;                             // n * H * W + y * W + x
  if (co >= CO) return;
  int n = pix / (H * W), y = (pix / W) % H, x = pix % W;
  float s = 0;
  for (int kh = 0; kh < 3; ++kh) {
    int iy = y + kh - 1;
    if (iy < 0 || iy >= H) continue;
    for (int kw = 0; kw < 3; ++kw) {
      int ix = x + kw - 1;
      if (ix < 0 || ix >= W) continue;
      const float* in = In + ((size_t(n) * H + iy) * W + ix) * CI;
      const float* w = Wt + (size_t(kh) * 3 + kw) * CI * CO + co;
      for (int ci = 0; ci < CI; ++ci) s = fmaf(in[ci], w[size_t(ci) * CO], s);
    }
  }
  Out[size_t(pix) * CO + co] = s;
}
extern "C" __global__ void conv3x3_nhwc_n1_56_64(const float* In, const float* Wt, float* Out) {
  conv3x3_nhwc<1, 56, 56, 64, 64>(In, Wt, Out);
}
extern "C" __global__ void conv3x3_nhwc_n2_8_16(const float* In, const float* Wt, float* Out) {
  conv3x3_nhwc<2, 8, 8, 16, 16>(In, Wt, Out);
}

// ---- faulty kernels: the worker must report these and stay usable (or restart) ----------------------
// Writes far outside every allocation: CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void bad_illegal_address(const float* a, const float* b, float* c) {
  c[threadIdx.x + (size_t(1) << 40)] = a[threadIdx.x] + b[threadIdx.x];
}
// Never returns (the flag is never set); the worker must report a timeout.
extern "C" __global__ void bad_hang(const float* a, const float* b, float* c) {
  volatile const float* v = a;
  while (v[0] == v[0] || v[0] != v[0]) {
  }
  c[0] = b[0];
}
// One element wrong: C[1000] off by one.
extern "C" __global__ void bad_wrong_vecadd_1m(const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1 << 20)) c[i] = a[i] + b[i] + (i == 1000 ? 1.f : 0.f);
}
// Leaves the last element unwritten.
extern "C" __global__ void bad_nowrite_vecadd_1m(const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1 << 20) - 1) c[i] = a[i] + b[i];
}
// Limited to 128 threads per block: a launch with 1024 must be refused (launch_error).
extern "C" __global__ void __launch_bounds__(128) bad_small_blocks(const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (1 << 20)) c[i] = a[i] + b[i];
}
