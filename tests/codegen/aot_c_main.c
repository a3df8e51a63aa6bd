/* Plain C: links tessel_aot_matmul.o (a scheduled 37x45x19 matmul emitted at build time) and checks it
 * against a naive triple loop on pseudo-random inputs, with the output poisoned first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel_aot_matmul.h"

enum { M = 37, N = 45, K = 19 };

static float rnd(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

int main(void) {
  float* a = aligned_alloc(64, 64 * ((M * K * 4 + 63) / 64));
  float* b = aligned_alloc(64, 64 * ((K * N * 4 + 63) / 64));
  float* c = aligned_alloc(64, 64 * ((M * N * 4 + 63) / 64));
  unsigned seed = 12345u;
  printf("seed = %u\n", seed);
  for (int i = 0; i < M * K; ++i) a[i] = rnd(&seed);
  for (int i = 0; i < K * N; ++i) b[i] = rnd(&seed);
  memset(c, 0xFF, M * N * sizeof(float)); /* NaN poison */
  if (tessel_aot_matmul(a, b, c) != 0) return 1;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[k * N + j];
      if (!(fabs(c[i * N + j] - acc) <= 1e-4 * (1 + fabs(acc)))) {
        printf("C[%d][%d] = %g, expected %g\n", i, j, c[i * N + j], acc);
        return 1;
      }
    }
  printf("ok\n");
  free(a);
  free(b);
  free(c);
  return 0;
}
