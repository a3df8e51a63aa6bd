// The persistent thread pool behind tessel_parallel_for (see include/tessel/runtime/c_runtime.h).
//
//  - Pool::run          one fork-join: publish a Job, bump generation_, run chunk 0, wait for workers.
//  - Pool::worker_main  a worker: spin on generation_ for a while, then sleep on sleep_cv_.
//  - chunk_range        static chunking: chunk i of n gets a contiguous range, sizes differ by <= 1.
// This file uses only the C++ standard library (no tessel_support): emit_shared_library links the
// runtime archive into every generated .so, and only the C entry points have external linkage here.
#include "tessel/runtime/thread_pool.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "tessel/runtime/c_runtime.h"

namespace tessel::runtime {
namespace {

constexpr auto kWorkerSpinTime = std::chrono::microseconds(50);  // a worker spins this long, then sleeps
constexpr int kCallerSpins = 1 << 12;                            // then the caller yields while waiting

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

thread_local bool t_in_parallel = false;
std::atomic<bool> g_pool_destroyed{false};

struct Job {
  tessel_task_fn fn = nullptr;
  void* closure = nullptr;
  int64_t begin = 0, end = 0;
  int ntasks = 0;
};

void chunk_range(const Job& j, int i, int64_t* b, int64_t* e) {
  int64_t len = j.end - j.begin, base = len / j.ntasks, rem = len % j.ntasks;
  *b = j.begin + i * base + std::min<int64_t>(i, rem);
  *e = *b + base + (i < rem ? 1 : 0);
}

class Pool {
 public:
  ~Pool() {
    std::lock_guard<std::mutex> lk(call_mu_);
    stop_workers();
    g_pool_destroyed.store(true);
  }

  int num_threads() {
    if (int n = nthreads_.load(std::memory_order_acquire); n > 0) return n;  // no lock: callable from tasks
    std::lock_guard<std::mutex> lk(call_mu_);
    ensure_started();
    return nthreads_.load();
  }

  void set_num_threads(int n) {
    if (t_in_parallel) return;  // resizing from inside a task would wait for itself
    std::lock_guard<std::mutex> lk(call_mu_);
    stop_workers();
    start_workers(n > 0 ? n : default_num_threads());
  }

  int32_t run(int64_t begin, int64_t end, tessel_task_fn fn, void* closure) {
    if (end <= begin) return 0;
    if (t_in_parallel) return fn(begin, end, closure);  // nested parallel loop: serial
    std::unique_lock<std::mutex> lk(call_mu_, std::try_to_lock);
    if (!lk.owns_lock()) return run_serial(begin, end, fn, closure);  // pool busy with another caller
    ensure_started();
    int64_t len = end - begin;
    int ntasks = int(std::min<int64_t>(len, nthreads_.load()));
    if (ntasks <= 1) return run_serial(begin, end, fn, closure);

    job_ = Job{fn, closure, begin, end, ntasks};
    error_.store(0, std::memory_order_relaxed);
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> slk(sleep_mu_);
      sleep_cv_.notify_all();
    }
    int64_t b, e;
    chunk_range(job_, 0, &b, &e);
    t_in_parallel = true;
    int32_t rc = fn(b, e, closure);
    t_in_parallel = false;
    if (rc != 0) record_error(rc);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < kCallerSpins) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    return error_.load(std::memory_order_relaxed);
  }

 private:
  static int32_t run_serial(int64_t begin, int64_t end, tessel_task_fn fn, void* closure) {
    bool was = t_in_parallel;
    t_in_parallel = true;
    int32_t rc = fn(begin, end, closure);
    t_in_parallel = was;
    return rc;
  }

  void record_error(int32_t rc) {
    int32_t expected = 0;
    error_.compare_exchange_strong(expected, rc, std::memory_order_relaxed);
  }

  void ensure_started() {
    if (nthreads_.load() == 0) start_workers(default_num_threads());
  }

  void start_workers(int n) {
    int count = std::max(1, n);
    stop_.store(false);
    uint64_t gen = generation_.load();
    for (int i = 1; i < count; ++i) workers_.emplace_back([this, i, gen] { worker_main(i, gen); });
    nthreads_.store(count, std::memory_order_release);
  }

  void stop_workers() {
    if (workers_.empty()) return;
    stop_.store(true, std::memory_order_seq_cst);
    {
      std::lock_guard<std::mutex> slk(sleep_mu_);
      sleep_cv_.notify_all();
    }
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void worker_main(int id, uint64_t seen) {
    t_in_parallel = true;
    for (;;) {
      uint64_t g;
      int spins = 0;
      auto spin_start = std::chrono::steady_clock::now();
      while ((g = generation_.load(std::memory_order_acquire)) == seen && !stop_.load(std::memory_order_acquire)) {
        cpu_relax();
        if ((++spins & 63) != 0 || std::chrono::steady_clock::now() - spin_start < kWorkerSpinTime) continue;
        std::unique_lock<std::mutex> slk(sleep_mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        sleep_cv_.wait(slk, [&] {
          return generation_.load(std::memory_order_seq_cst) != seen || stop_.load(std::memory_order_seq_cst);
        });
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        spins = 0;
        spin_start = std::chrono::steady_clock::now();
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = g;
      const Job& j = job_;
      if (id < j.ntasks) {
        int64_t b, e;
        chunk_range(j, id, &b, &e);
        int32_t rc = j.fn(b, e, j.closure);
        if (rc != 0) record_error(rc);
      }
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::mutex call_mu_;  // one fork-join (or resize) at a time
  std::vector<std::thread> workers_;
  std::atomic<int> nthreads_{0};  // 0 until first use
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int32_t> error_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  std::atomic<int> sleepers_{0};
};

Pool& pool() {
  static Pool p;
  return p;
}

struct FunctionClosure {
  const std::function<void(int64_t, int64_t)>* f;
  std::mutex mu;
  std::exception_ptr error;
};

int32_t function_trampoline(int64_t b, int64_t e, void* c) {
  auto* fc = static_cast<FunctionClosure*>(c);
  try {
    (*fc->f)(b, e);
    return 0;
  } catch (...) {
    std::lock_guard<std::mutex> lk(fc->mu);
    if (!fc->error) fc->error = std::current_exception();
    return 1;
  }
}

}  // namespace

int usable_cpus() {
#ifdef __linux__
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) return CPU_COUNT(&allowed);
#endif
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : int(hc);
}

int default_num_threads() {
  if (const char* s = std::getenv("TESSEL_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v > 0) return int(std::min<long>(v, 1024));
  }
  return usable_cpus();
}

void set_num_threads(int n) {
  if (!g_pool_destroyed.load()) pool().set_num_threads(n);
}

int num_threads() { return g_pool_destroyed.load() ? 1 : pool().num_threads(); }

bool in_parallel_region() { return t_in_parallel; }

void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t, int64_t)>& f) {
  FunctionClosure fc{&f, {}, nullptr};
  tessel_parallel_for(begin, end, &function_trampoline, &fc);
  if (fc.error) std::rethrow_exception(fc.error);
}

}  // namespace tessel::runtime

extern "C" {

int32_t tessel_parallel_for(int64_t begin, int64_t end, tessel_task_fn fn, void* closure) {
  using namespace tessel::runtime;
  if (g_pool_destroyed.load(std::memory_order_relaxed)) return fn(begin, end, closure);
  return pool().run(begin, end, fn, closure);
}

void tessel_set_num_threads(int32_t n) { tessel::runtime::set_num_threads(n); }

int32_t tessel_get_num_threads(void) { return tessel::runtime::num_threads(); }

}  // extern "C"
