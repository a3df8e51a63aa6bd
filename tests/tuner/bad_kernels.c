/* Hand-made candidates for the measurement tests: a 64x64x64 float32 matmul C = A x B (arguments
 * A[64,64], B[64,64], C[64,64], the packed calling convention of tessel) done right, slowly, or wrong,
 * and kernels that crash, hang, exhaust memory or fail. */
#include <stdint.h>
#include <stdlib.h>

#define N 64

static void matmul(const float* A, const float* B, float* C) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int k = 0; k < N; ++k) s += A[i * N + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

int32_t good_packed(void* const* args) {
  matmul((const float*)args[0], (const float*)args[1], (float*)args[2]);
  return 0;
}

/* The same result, about 40 times slower. */
int32_t slow_packed(void* const* args) {
  for (volatile int r = 0; r < 40; ++r) matmul((const float*)args[0], (const float*)args[1], (float*)args[2]);
  return 0;
}

/* One wrong element: C[5, 7]. */
int32_t wrong_packed(void* const* args) {
  matmul((const float*)args[0], (const float*)args[1], (float*)args[2]);
  ((float*)args[2])[5 * N + 7] += 1.0f;
  return 0;
}

/* Returns without writing its output. */
int32_t nowrite_packed(void* const* args) {
  (void)args;
  return 0;
}

/* Returns a failure status. */
int32_t fail_packed(void* const* args) {
  (void)args;
  return 3;
}

int32_t segv_packed(void* const* args) {
  (void)args;
  volatile int* p = (volatile int*)0;
  *p = 1;
  return 0;
}

int32_t hang_packed(void* const* args) {
  (void)args;
  for (volatile uint64_t i = 0;; ++i) {
  }
  return 0;
}

/* Allocates 64 MiB blocks (touching one byte of each) until malloc fails, then uses the NULL. */
int32_t oom_packed(void* const* args) {
  (void)args;
  for (;;) {
    volatile char* p = (volatile char*)malloc((size_t)64 << 20);
    p[0] = 1;
  }
  return 0;
}
