// Aligned allocation for generated code (heap Allocate) and NDArray. Standard library only: this object
// is linked into emitted shared libraries.
#include <cstdlib>

#include "tessel/runtime/c_runtime.h"

extern "C" {

void* tessel_alloc_aligned(int64_t alignment, int64_t bytes) {
  if (bytes < 0 || alignment <= 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < int64_t(sizeof(void*))) alignment = sizeof(void*);
  if (bytes == 0) bytes = alignment;
  void* p = nullptr;
  if (posix_memalign(&p, size_t(alignment), size_t(bytes)) != 0) return nullptr;
  return p;
}

void tessel_free_aligned(void* p) { std::free(p); }

}  // extern "C"
