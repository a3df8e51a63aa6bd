// The CUDA driver API, resolved at run time: dlopen("libcuda.so.1") and dlsym of each function, so the
// worker builds and runs on machines without a GPU and reports "no CUDA driver" instead of failing to
// start. Compiled against cuda.h for the types and the versioned names its macros choose
// (cuMemAlloc -> cuMemAlloc_v2, ...); without cuda.h at build time, available() is always false.
// One context per device: the device's primary context, retained once and never released.
#pragma once
#include <string>
#include <vector>

#if __has_include(<cuda.h>)
#include <cuda.h>
#define TESSEL_HAVE_CUDA_H 1
#else
#define TESSEL_HAVE_CUDA_H 0
#endif

namespace tessel::tuner::gpu {

#if TESSEL_HAVE_CUDA_H
// Every driver function the worker calls. Each name is a cuda.h macro where the API is versioned, so a
// member declared as X(name) is named and looked up as the versioned symbol (cuMemAlloc_v2, ...).
#define TESSEL_CUDA_FUNCTIONS(X)                                                                                  \
  X(cuInit)                                                                                                       \
  X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)             \
      X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadDataEx) X(cuModuleUnload)  \
          X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuMemAlloc) X(cuMemFree)           \
              X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemsetD32Async) X(cuMemGetInfo) X(cuLaunchKernel) \
                  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamQuery) X(cuEventCreate) X(cuEventDestroy)        \
                      X(cuEventRecord) X(cuEventQuery) X(cuEventElapsedTime) X(cuGetErrorName) X(cuGetErrorString)

/** The loaded driver. Obtain it with CudaDriver::get(); the pointers are never null once loaded. */
class CudaDriver {
 public:
#define TESSEL_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  TESSEL_CUDA_FUNCTIONS(TESSEL_CUDA_MEMBER)
#undef TESSEL_CUDA_MEMBER

  /** The process's driver, loaded and cuInit'ed on first use; nullptr with *error set when there is
   *  none ("no CUDA driver (libcuda.so.1) on this machine: ..."). Thread-safe. */
  static CudaDriver* get(std::string* error);

  /** The primary context of device `ordinal`, made current on this thread. Throws std::runtime_error
   *  naming the device when it does not exist. */
  CUcontext context(int ordinal);
  /** "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)". */
  std::string error_text(CUresult r) const;
  /** Device properties read at context creation. */
  struct Device {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    std::string name;
    int sm_major = 0, sm_minor = 0, multiprocessors = 0, l2_bytes = 0, max_shared_optin = 0;
  };
  const Device& device(int ordinal);
  int driver_version() const { return driver_version_; }
  int device_count() const { return device_count_; }

 private:
  CudaDriver() = default;
  void* handle_ = nullptr;
  int driver_version_ = 0, device_count_ = 0;
  std::vector<Device> devices_;  // index = ordinal; ctx null until first use
};
#endif

/** True when the driver can be loaded; otherwise *why says why (no cuda.h at build time, no libcuda.so.1,
 *  cuInit failed). */
bool cuda_available(std::string* why);

}  // namespace tessel::tuner::gpu
