// Loading the CUDA driver at run time (see cuda_driver.h).
#include "cuda_driver.h"

#include <dlfcn.h>
#include <sys/resource.h>

#include <mutex>
#include <stdexcept>

namespace tessel::tuner::gpu {

#if TESSEL_HAVE_CUDA_H
namespace {

#define TESSEL_STR2(x) #x
#define TESSEL_STR(x) TESSEL_STR2(x)

/** dlsym of `name`; for APIs whose versioned symbol is newer than some drivers, the unversioned one with
 *  the same signature as fallback. */
void* find_symbol(void* handle, const char* name) {
  if (void* p = dlsym(handle, name)) return p;
  std::string n = name;
  if (n == "cuEventElapsedTime_v2") return dlsym(handle, "cuEventElapsedTime");
  return nullptr;
}

}  // namespace

CudaDriver* CudaDriver::get(std::string* error) {
  static std::mutex mu;
  static CudaDriver* driver = nullptr;
  static std::string load_error;
  std::lock_guard<std::mutex> lock(mu);
  if (driver || !load_error.empty()) {
    if (!driver && error) *error = load_error;
    return driver;
  }
  auto fail = [&](std::string msg) -> CudaDriver* {
    load_error = std::move(msg);
    if (error) *error = load_error;
    return nullptr;
  };
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return fail(std::string("no CUDA driver (libcuda.so.1) on this machine: ") + (e ? e : "dlopen failed"));
  }
  auto* d = new CudaDriver();  // never deleted: a context may be unusable at exit, and exit must not wait on it
  d->handle_ = h;
#define TESSEL_CUDA_LOAD(name)                                                          \
  d->name = reinterpret_cast<decltype(d->name)>(find_symbol(h, TESSEL_STR(name)));      \
  if (!d->name)                                                                         \
    return fail(std::string("the CUDA driver libcuda.so.1 has no function " TESSEL_STR( \
                    name) "; the driver is older than the CUDA ") +                     \
                std::to_string(CUDA_VERSION / 1000) + " headers tessel was built with");
  TESSEL_CUDA_FUNCTIONS(TESSEL_CUDA_LOAD)
#undef TESSEL_CUDA_LOAD
  // The driver reserves address space far beyond any RLIMIT_AS meant for CPU candidates (tessel-worker
  // --memory-limit-mb sets only the soft limit): lift the soft limit to the hard one first.
  std::string limit_note;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    if (rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_AS, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY)
      limit_note = "; the address space of this process is limited to " + std::to_string(rl.rlim_cur >> 20) +
                   " MiB (RLIMIT_AS), which the CUDA driver may need more of";
  }
  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS)
    return fail("cuInit failed: " + d->error_text(r) + " (is a GPU visible to this process?)" + limit_note);
  d->cuDriverGetVersion(&d->driver_version_);
  if (CUresult r = d->cuDeviceGetCount(&d->device_count_); r != CUDA_SUCCESS || d->device_count_ == 0)
    return fail("the CUDA driver sees no device");
  d->devices_.resize(size_t(d->device_count_));
  driver = d;
  return driver;
}

std::string CudaDriver::error_text(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(int(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

const CudaDriver::Device& CudaDriver::device(int ordinal) {
  if (ordinal < 0 || ordinal >= device_count_)
    throw std::runtime_error("CUDA device " + std::to_string(ordinal) + " does not exist (the driver sees " +
                             std::to_string(device_count_) + ")");
  Device& d = devices_[size_t(ordinal)];
  if (d.ctx) return d;
  auto check = [&](CUresult r, const char* what) {
    if (r != CUDA_SUCCESS)
      throw std::runtime_error(std::string(what) + " for CUDA device " + std::to_string(ordinal) + ": " +
                               error_text(r));
  };
  check(cuDeviceGet(&d.dev, ordinal), "cuDeviceGet");
  char name[256] = {0};
  cuDeviceGetName(name, sizeof name - 1, d.dev);
  d.name = name;
  cuDeviceGetAttribute(&d.sm_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.dev);
  cuDeviceGetAttribute(&d.sm_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.dev);
  cuDeviceGetAttribute(&d.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.dev);
  cuDeviceGetAttribute(&d.l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d.dev);
  cuDeviceGetAttribute(&d.max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d.dev);
  CUcontext ctx = nullptr;
  check(cuDevicePrimaryCtxRetain(&ctx, d.dev), "cuDevicePrimaryCtxRetain");
  d.ctx = ctx;
  return d;
}

CUcontext CudaDriver::context(int ordinal) {
  const Device& d = device(ordinal);
  if (CUresult r = cuCtxSetCurrent(d.ctx); r != CUDA_SUCCESS)
    throw std::runtime_error("cuCtxSetCurrent for CUDA device " + std::to_string(ordinal) + ": " + error_text(r));
  return d.ctx;
}

bool cuda_available(std::string* why) { return CudaDriver::get(why) != nullptr; }

#else

bool cuda_available(std::string* why) {
  if (why) *why = "this tessel was built without CUDA's cuda.h, so it cannot run GPU kernels";
  return false;
}

#endif

}  // namespace tessel::tuner::gpu
