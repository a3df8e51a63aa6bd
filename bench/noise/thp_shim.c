// LD_PRELOAD shim for measurement-noise studies (docs/performance.md, "4 KiB and 2 MiB pages"): every
// posix_memalign of 256 KiB or more becomes 2 MiB-aligned and madvise(MADV_HUGEPAGE)d, so tessel's NDArrays
// and kernel heap buffers get transparent huge pages where the policy is madvise.
// gcc -O2 -shared -fPIC -o thp_shim.so thp_shim.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
static int (*real_pm)(void**, size_t, size_t);
int posix_memalign(void** p, size_t a, size_t n) {
  if (!real_pm) real_pm = (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  if (n >= (256u << 10)) {
    size_t h = 2u << 20;
    size_t m = (n + h - 1) / h * h;
    int r = real_pm(p, h, m);
    if (r == 0) madvise(*p, m, MADV_HUGEPAGE);
    return r;
  }
  return real_pm(p, a, n);
}
