// Calls the kernel tessel generated at build time (matmul_64.h, from the tuning database) and checks it
// against a naive loop on random inputs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "matmul_64.h"

int main() {
  constexpr int n = 64;
  // The generated function wants 64-byte aligned buffers (see matmul_64.h).
  auto alloc = [] { return static_cast<float*>(std::aligned_alloc(64, sizeof(float) * n * n)); };
  float *a = alloc(), *b = alloc(), *c = alloc();
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < n * n; ++i) {
    a[i] = u(rng);
    b[i] = u(rng);
    c[i] = NAN;  // poison: an element the kernel does not write fails the check
  }
  if (matmul_64(a, b, c) != 0) {
    std::printf("tuned_matmul: the kernel returned an error\n");
    return 1;
  }
  double max_err = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int k = 0; k < n; ++k) ref += double(a[i * n + k]) * b[k * n + j];
      double e = std::fabs(ref - c[i * n + j]);
      max_err = std::isnan(e) ? INFINITY : (e > max_err ? e : max_err);
    }
  bool ok = max_err < 1e-3;
  std::printf("tuned_matmul: %s (max error %.2g)\n", ok ? "ok" : "WRONG", max_err);
  std::free(a);
  std::free(b);
  std::free(c);
  return ok ? 0 : 1;
}
