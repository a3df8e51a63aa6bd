// As thp_shim.c, but each large buffer starts 12352 * (1..8) bytes into its 2 MiB region (cycled), so
// buffers do not all share one offset modulo 2 MiB; free() maps the pointer back.
// gcc -O2 -shared -fPIC -o thp_shim_staggered.so thp_shim_staggered.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
static int (*real_pm)(void**, size_t, size_t);
static void (*real_free)(void*);
#define N 256
static void* orig[N]; static void* given[N]; static unsigned seq;
int posix_memalign(void** p, size_t a, size_t n) {
  if (!real_pm) real_pm = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  if (n >= (256u << 10)) {
    size_t h = 2u << 20;
    size_t off = ((seq++ % 8) + 1) * 12352;
    size_t m = (n + off + h - 1) / h * h;
    void* q; int r = real_pm(&q, h, m);
    if (r) return r;
    madvise(q, m, MADV_HUGEPAGE);
    for (int i = 0; i < N; ++i) if (!orig[i]) { orig[i] = q; given[i] = (char*)q + off; *p = given[i]; return 0; }
    *p = q; return 0;
  }
  return real_pm(p, a, n);
}
void free(void* p) {
  if (!real_free) real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  if (p) for (int i = 0; i < N; ++i) if (given[i] == p) { p = orig[i]; orig[i] = given[i] = 0; break; }
  real_free(p);
}
