// The GPU half of tessel-worker (see gpu_measure.h, docs/gpu.md).
//   cuda_fail       CUresult -> Fail kind (fatal when the context is left unusable)
//   GpuRun          one request's module, device buffers, stream and events; launch, wait with deadline
//   l2_flush        a per-device buffer of 2 x L2 bytes, cleared between timed repeats
//   gpu_run_reference / gpu_measure   the two entry points
#include "gpu_measure.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cuda_driver.h"
#include "gpu_kernel_desc.h"
#include "worker_internal.h"

namespace tessel::tuner {

#if TESSEL_HAVE_CUDA_H
namespace {

using gpu::CudaDriver;
using gpu::GpuKernelDesc;
using runtime::NDArray;
using clock_type = std::chrono::steady_clock;

/** The Fail for a CUDA error `r` while doing `what`. */
Fail cuda_fail(CudaDriver& d, CUresult r, const std::string& what) {
  std::string msg = what + ": " + d.error_text(r);
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return {"runtime_error", msg + "; the CUDA context is unusable, the worker restarts", true};
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return {"run_timeout", msg + "; the worker restarts", true};
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      return {"launch_error", msg};
    case CUDA_ERROR_OUT_OF_MEMORY:
      return {"out_of_memory", msg};
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_NOT_FOUND:
      return {"compile_error", msg};
    default:
      return {"runtime_error", msg + "; the worker restarts to be safe", true};
  }
}

CudaDriver& driver() {
  std::string why;
  CudaDriver* d = CudaDriver::get(&why);
  if (!d) throw Fail{"worker_lost", why};
  return *d;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Fail{"runtime_error", "cannot read the PTX artifact '" + path + "'"};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/** Per device: a buffer of twice the L2 that is cleared between timed repeats to evict the L2. */
CUdeviceptr l2_flush(CudaDriver& d, int device, size_t* bytes) {
  static std::map<int, std::pair<CUdeviceptr, size_t>> buffers;
  auto it = buffers.find(device);
  if (it == buffers.end()) {
    size_t n = std::max<size_t>(size_t(std::max(d.device(device).l2_bytes, 0)) * 2, size_t(64) << 20);
    CUdeviceptr p = 0;
    if (CUresult r = d.cuMemAlloc(&p, n); r != CUDA_SUCCESS) throw cuda_fail(d, r, "allocating the L2 flush buffer");
    it = buffers.emplace(device, std::make_pair(p, n)).first;
  }
  *bytes = it->second.second;
  return it->second.first;
}

/** One PTX artifact loaded on a device with its buffers; everything is released when destroyed (errors
 *  then are ignored: after a fatal error the process exits anyway). */
class GpuRun {
 public:
  GpuRun(const WorkerRequest& r, bool reference, double timeout_s)
      : d_(driver()), req_(r), timeout_s_(timeout_s), t0_(clock_type::now()) {
    try {
      d_.context(r.device);
    } catch (const std::exception& e) {
      throw Fail{"worker_lost", e.what()};
    }
    const std::string& path = reference ? r.ref_artifact : r.artifact;
    const std::string& fn = reference ? r.ref_function : r.function;
    const nlohmann::json& launch = reference ? r.ref_launch : r.launch;
    what_ = reference ? "the reference" : "the candidate";
    try {
      desc_ = launch.is_null() ? GpuKernelDesc::load_sidecar(path, fn) : GpuKernelDesc::from_json(launch, fn);
    } catch (const std::invalid_argument& e) {
      throw Fail{reference ? "worker_lost" : "compile_error", what_ + " '" + path + "': " + e.what()};
    }
    try {
      load_module(path);
      bind_args();
      // A blocking stream: ordered with the synchronous copies and memsets on the legacy default stream.
      check(d_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "creating a stream");
      check(d_.cuEventCreate(&ev_start_, CU_EVENT_DEFAULT), "creating an event");
      check(d_.cuEventCreate(&ev_stop_, CU_EVENT_DEFAULT), "creating an event");
    } catch (...) {
      release();
      throw;
    }
  }
  ~GpuRun() { release(); }
  GpuRun(const GpuRun&) = delete;
  GpuRun& operator=(const GpuRun&) = delete;

  void upload(size_t arg, const NDArray& a) {
    check(d_.cuMemcpyHtoD(bufs_[arg], a.data(), a.nbytes()), "copying input " + arg_name(arg) + " to the device");
  }
  void poison(size_t arg) {
    check(d_.cuMemsetD8(bufs_[arg], poison_byte(runtime::DType::parse(req_.args[arg].dtype)), bytes_[arg]),
          "poisoning output " + arg_name(arg));
  }
  void download(size_t arg, NDArray& a) {
    check(d_.cuMemcpyDtoH(a.data(), bufs_[arg], a.nbytes()), "copying output " + arg_name(arg) + " back");
  }
  /** Launches every kernel once on the stream (asynchronously). */
  void launch() {
    for (size_t k = 0; k < desc_.kernels.size(); ++k) {
      const auto& kl = desc_.kernels[k];
      CUresult r = d_.cuLaunchKernel(funcs_[k], kl.grid[0], kl.grid[1], kl.grid[2], kl.block[0], kl.block[1],
                                     kl.block[2], kl.shared_bytes, stream_, params_.data(), nullptr);
      if (r != CUDA_SUCCESS) fail(cuda_fail(d_, r, "launching " + what_ + "'s kernel " + kl.entry + launch_text(kl)));
    }
  }
  /** Waits until the stream is idle; a kernel still running at the deadline is a fatal run_timeout. */
  void wait() {
    wait_for([&] { return d_.cuStreamQuery(stream_); });
  }
  /** One timed run of all kernels between two events, after an L2 flush when asked; seconds. */
  double timed(bool flush) {
    if (flush) {
      size_t n = 0;
      CUdeviceptr buf = l2_flush(d_, req_.device, &n);
      check(d_.cuMemsetD32Async(buf, ++flush_value_, n / 4, stream_), "flushing the L2");
    }
    check(d_.cuEventRecord(ev_start_, stream_), "recording an event");
    launch();
    check(d_.cuEventRecord(ev_stop_, stream_), "recording an event");
    wait_for([&] { return d_.cuEventQuery(ev_stop_); });
    float ms = 0;
    check(d_.cuEventElapsedTime(&ms, ev_start_, ev_stop_), "reading the event timer");
    return double(ms) * 1e-3;
  }
  double seconds() const { return std::chrono::duration<double>(clock_type::now() - t0_).count(); }

 private:
  /** Frees what was created, unless the context is broken or still runs a kernel: then freeing could
   *  block forever (cuMemFree waits for the device), and the process exits right after the response. */
  void release() {
    if (broken_) return;
    if (ev_start_) d_.cuEventDestroy(ev_start_);
    if (ev_stop_) d_.cuEventDestroy(ev_stop_);
    if (stream_) d_.cuStreamDestroy(stream_);
    for (CUdeviceptr p : bufs_)
      if (p) d_.cuMemFree(p);
    if (module_) d_.cuModuleUnload(module_);
    ev_start_ = ev_stop_ = nullptr;
    stream_ = nullptr;
    bufs_.clear();
    module_ = nullptr;
  }
  [[noreturn]] void fail(Fail f) {
    if (f.fatal) broken_ = true;
    throw f;
  }
  void check(CUresult r, const std::string& what) {
    if (r != CUDA_SUCCESS) fail(cuda_fail(d_, r, what));
  }
  std::string arg_name(size_t i) const {
    return req_.args[i].name.empty() ? "#" + std::to_string(i) : req_.args[i].name;
  }
  static std::string launch_text(const gpu::KernelLaunch& k) {
    auto v = [](const std::array<uint32_t, 3>& a) {
      return "(" + std::to_string(a[0]) + "," + std::to_string(a[1]) + "," + std::to_string(a[2]) + ")";
    };
    return " (grid " + v(k.grid) + ", block " + v(k.block) + ", " + std::to_string(k.shared_bytes) +
           " B dynamic shared)";
  }

  template <class Query>
  void wait_for(Query q) {
    for (int spins = 0;; ++spins) {
      CUresult r = q();
      if (r == CUDA_SUCCESS) return;
      if (r != CUDA_ERROR_NOT_READY) fail(cuda_fail(d_, r, "running " + what_));
      if (seconds() > timeout_s_)
        fail(Fail{"run_timeout",
                  what_ + " was still running after " + fmt(timeout_s_) +
                      " s (run_timeout_s); a running kernel cannot be stopped, so the worker restarts",
                  true});
      if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void load_module(const std::string& path) {
    std::string ptx = read_file(path);
    std::vector<char> err(16384, 0), info(16384, 0);
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {err.data(), reinterpret_cast<void*>(uintptr_t(err.size() - 1)), info.data(),
                    reinterpret_cast<void*>(uintptr_t(info.size() - 1))};
    CUresult r = d_.cuModuleLoadDataEx(&module_, ptx.c_str(), 4, opts, vals);
    if (r != CUDA_SUCCESS) {
      module_ = nullptr;
      Fail f = cuda_fail(d_, r, "the CUDA driver could not load " + what_ + "'s PTX '" + path + "'");
      if (err[0]) f.message += ": " + std::string(err.data());
      throw f;
    }
    const auto& dev = d_.device(req_.device);
    for (const auto& kl : desc_.kernels) {
      CUfunction f = nullptr;
      if (CUresult e = d_.cuModuleGetFunction(&f, module_, kl.entry.c_str()); e != CUDA_SUCCESS)
        throw Fail{"compile_error", what_ + "'s PTX '" + path + "' has no kernel '" + kl.entry + "'"};
      int max_threads = 0, regs = 0, static_shared = 0;
      d_.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
      d_.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
      d_.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
      uint64_t threads = uint64_t(kl.block[0]) * kl.block[1] * kl.block[2];
      if (threads > uint64_t(max_threads))
        throw Fail{"launch_error", "kernel " + kl.entry + " can run at most " + std::to_string(max_threads) +
                                       " threads per block (it uses " + std::to_string(regs) +
                                       " registers per thread); the launch asks for " + std::to_string(threads)};
      if (uint64_t(kl.shared_bytes) + uint64_t(static_shared) > uint64_t(dev.max_shared_optin))
        throw Fail{"launch_error", "kernel " + kl.entry + " asks for " + std::to_string(kl.shared_bytes) +
                                       " B of dynamic shared memory beside " + std::to_string(static_shared) +
                                       " B static; the device allows " + std::to_string(dev.max_shared_optin) +
                                       " B per block"};
      if (kl.shared_bytes > 48 * 1024) {
        CUresult e = d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(kl.shared_bytes));
        if (e != CUDA_SUCCESS) fail(cuda_fail(d_, e, "raising the dynamic shared memory of kernel " + kl.entry));
      }
      funcs_.push_back(f);
    }
  }

  /** Allocates one buffer per request argument and orders the kernel parameters. */
  void bind_args() {
    size_t n = req_.args.size();
    bufs_.assign(n, 0);
    bytes_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const WorkerArg& a = req_.args[i];
      size_t count = 1;
      for (int64_t e : a.shape) count *= size_t(e);
      bytes_[i] = std::max<size_t>(count * size_t(runtime::DType::parse(a.dtype).bytes()), 1);
      if (CUresult r = d_.cuMemAlloc(&bufs_[i], bytes_[i]); r != CUDA_SUCCESS) {
        bufs_[i] = 0;
        fail(cuda_fail(d_, r, "allocating " + std::to_string(bytes_[i]) + " B for " + arg_name(i)));
      }
    }
    std::vector<size_t> order(n);
    if (desc_.args.empty()) {
      for (size_t i = 0; i < n; ++i) order[i] = i;
    } else {
      if (desc_.args.size() != n)
        throw Fail{"compile_error", what_ + " takes " + std::to_string(desc_.args.size()) +
                                        " buffers but the workload has " + std::to_string(n) + " arguments"};
      for (size_t p = 0; p < n; ++p) {
        size_t i = 0;
        while (i < n && req_.args[i].name != desc_.args[p]) ++i;
        if (i == n)
          throw Fail{"compile_error", what_ + "'s buffer '" + desc_.args[p] + "' is no argument of the workload"};
        order[p] = i;
      }
    }
    for (size_t p = 0; p < n; ++p) params_.push_back(&bufs_[order[p]]);
  }

  CudaDriver& d_;
  const WorkerRequest& req_;
  double timeout_s_;
  clock_type::time_point t0_;
  std::string what_;
  GpuKernelDesc desc_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> funcs_;
  std::vector<CUdeviceptr> bufs_;
  std::vector<size_t> bytes_;
  std::vector<void*> params_;
  CUstream stream_ = nullptr;
  CUevent ev_start_ = nullptr, ev_stop_ = nullptr;
  unsigned flush_value_ = 0;
  bool broken_ = false;  // a fatal error: leave everything to process exit
};

}  // namespace

void gpu_run_reference(const WorkerRequest& r, const std::vector<NDArray*>& args, double timeout_s) {
  GpuRun run(r, true, timeout_s);
  for (size_t i = 0; i < args.size(); ++i) {
    if (r.args[i].output)
      run.poison(i);
    else
      run.upload(i, *args[i]);
  }
  run.launch();
  run.wait();
  for (size_t i = 0; i < args.size(); ++i)
    if (r.args[i].output) run.download(i, *args[i]);
}

WorkerResponse gpu_measure(const WorkerRequest& r, const WorkerTiming& opt, const std::vector<const NDArray*>& inputs,
                           const std::vector<const NDArray*>& ref_outputs) {
  GpuRun run(r, false, opt.run_timeout_s);
  std::vector<size_t> out_pos;
  size_t in_k = 0;
  for (size_t i = 0; i < r.args.size(); ++i) {
    if (r.args[i].output)
      out_pos.push_back(i);
    else
      run.upload(i, *inputs[in_k++]);
  }
  auto check = [&](const char* when) {
    for (size_t k = 0; k < out_pos.size(); ++k) {
      const WorkerArg& a = r.args[out_pos[k]];
      NDArray got(a.shape, runtime::DType::parse(a.dtype));
      run.download(out_pos[k], got);
      std::string name = a.name.empty() ? "#" + std::to_string(out_pos[k]) : a.name;
      std::string m = compare_outputs(got, *ref_outputs[k], name);
      if (!m.empty()) throw Fail{"wrong_answer", m + when};
    }
  };
  for (size_t i : out_pos) run.poison(i);
  run.launch();  // checked run on poisoned outputs
  run.wait();
  check("");
  for (int i = 0; i < opt.warmup; ++i) run.launch();
  run.wait();

  WorkerResponse resp = timed_repeats(
      r, opt, [&] { return run.timed(opt.flush_cache); }, [&] { return run.seconds(); });
  if (resp.error_kind == "none") check(" (after the timed runs: the candidate's results vary between runs)");
  return resp;
}

#else

void gpu_run_reference(const WorkerRequest&, const std::vector<runtime::NDArray*>&, double) {
  std::string why;
  gpu::cuda_available(&why);
  throw Fail{"worker_lost", why};
}

WorkerResponse gpu_measure(const WorkerRequest&, const WorkerTiming&, const std::vector<const runtime::NDArray*>&,
                           const std::vector<const runtime::NDArray*>&) {
  std::string why;
  gpu::cuda_available(&why);
  throw Fail{"worker_lost", why};
}

#endif

}  // namespace tessel::tuner
