// The runtime alone (no LLVM): thread pool coverage, nesting, resizing, errors; aligned memory; NDArray.
#include "tessel/runtime/thread_pool.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessel/runtime/c_runtime.h"
#include "tessel/runtime/ndarray.h"

using namespace tessel::runtime;

TEST_CASE("runtime: parallel_for covers the range exactly once in contiguous chunks", "[runtime]") {
  for (int threads : {1, 2, 3, 4, 8}) {
    set_num_threads(threads);
    REQUIRE(num_threads() == threads);
    for (int64_t n : {0, 1, 2, 7, 100, 1000}) {
      std::vector<std::atomic<int>> hits(size_t(n) + 1);
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> chunks;
      parallel_for(5, 5 + n, [&](int64_t b, int64_t e) {
        {
          std::lock_guard<std::mutex> lk(mu);
          chunks.emplace_back(b, e);
        }
        for (int64_t i = b; i < e; ++i) hits[size_t(i - 5)]++;
      });
      for (int64_t i = 0; i < n; ++i) REQUIRE(hits[size_t(i)] == 1);
      REQUIRE(chunks.size() <= size_t(std::max<int64_t>(1, std::min<int64_t>(n, threads))));
      if (n > 0) {
        int64_t lo = n, hi = 0;
        for (auto& [b, e] : chunks) lo = std::min(lo, e - b), hi = std::max(hi, e - b);
        REQUIRE(hi - lo <= 1);  // static chunking: sizes differ by at most one
      }
    }
  }
  set_num_threads(0);
}

TEST_CASE("runtime: the pool actually uses several threads", "[runtime]") {
  set_num_threads(4);
  std::mutex mu;
  std::set<std::thread::id> ids;
  parallel_for(0, 4, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lk(mu);
    ids.insert(std::this_thread::get_id());
  });
  REQUIRE(ids.size() == 4);
  set_num_threads(0);
}

TEST_CASE("runtime: nested parallel loops run serially inside a task", "[runtime]") {
  set_num_threads(4);
  std::atomic<int64_t> sum{0};
  std::atomic<int> nested_not_in_region{0};
  parallel_for(0, 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::thread::id me = std::this_thread::get_id();
      parallel_for(0, 10, [&](int64_t b2, int64_t e2) {
        if (std::this_thread::get_id() != me || !in_parallel_region()) nested_not_in_region++;
        if (num_threads() != 4) nested_not_in_region++;  // must not block inside a task
        for (int64_t j = b2; j < e2; ++j) sum += i * 10 + j;
      });
    }
  });
  REQUIRE(nested_not_in_region == 0);
  int64_t ref = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 10; ++j) ref += i * 10 + j;
  REQUIRE(sum == ref);
  REQUIRE(!in_parallel_region());
  set_num_threads(0);
}

TEST_CASE("runtime: many small fork-joins and error propagation", "[runtime]") {
  set_num_threads(2);
  std::atomic<int64_t> total{0};
  for (int r = 0; r < 2000; ++r) parallel_for(0, 16, [&](int64_t b, int64_t e) { total += e - b; });
  REQUIRE(total == 2000 * 16);
  REQUIRE_THROWS_AS(parallel_for(0, 16,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("task failed");
                                 }),
                    std::runtime_error);
  auto fail = [](int64_t b, int64_t, void*) -> int32_t { return b == 0 ? 0 : 7; };
  REQUIRE(tessel_parallel_for(0, 10, fail, nullptr) == 7);
  set_num_threads(0);
}

TEST_CASE("runtime: default thread count honours TESSEL_NUM_THREADS", "[runtime]") {
  setenv("TESSEL_NUM_THREADS", "3", 1);
  REQUIRE(default_num_threads() == 3);
  tessel_set_num_threads(0);
  REQUIRE(tessel_get_num_threads() == 3);
  unsetenv("TESSEL_NUM_THREADS");
  REQUIRE(default_num_threads() >= 1);
  tessel_set_num_threads(0);
}

TEST_CASE("runtime: aligned allocation", "[runtime]") {
  for (int64_t align : {8, 16, 64, 4096}) {
    void* p = tessel_alloc_aligned(align, 1000);
    REQUIRE(p != nullptr);
    REQUIRE(reinterpret_cast<uintptr_t>(p) % uintptr_t(align) == 0);
    tessel_free_aligned(p);
  }
  REQUIRE(tessel_alloc_aligned(48, 10) == nullptr);  // not a power of two
  tessel_free_aligned(nullptr);
}

TEST_CASE("runtime: NDArray", "[runtime]") {
  NDArray a({3, 5}, "float32");
  REQUIRE(a.num_elements() == 15);
  REQUIRE(a.nbytes() == 60);
  REQUIRE(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
  a.fill_random(42, -1, 1);
  for (int64_t i = 0; i < 15; ++i) REQUIRE((a.get(i) >= -1 && a.get(i) < 1));
  NDArray b = a.copy();
  REQUIRE(b.get(7) == a.get(7));
  NDArray c = std::move(b);
  REQUIRE(c.get(7) == a.get(7));
  a.fill_bytes(0xFF);
  REQUIRE(std::isnan(a.get(0)));
  REQUIRE(DType::parse("bfloat16").to_string() == "bfloat16");
  REQUIRE_THROWS(DType::parse("float128"));
  NDArray h({4}, "float16");
  h.set(0, 1.5), h.set(1, -65504), h.set(2, 1e-7), h.set(3, 70000);
  REQUIRE(h.get(0) == 1.5);
  REQUIRE(h.get(1) == -65504);
  REQUIRE(h.get(2) == Approx(1.1920929e-07));  // nearest subnormal
  REQUIRE(std::isinf(h.get(3)));
  REQUIRE(float_to_bfloat16(1.0f) == 0x3f80);
  REQUIRE(float_to_half(1.0f) == 0x3c00);
  REQUIRE(half_to_float(0x0001) == std::ldexp(1.0f, -24));
}

#ifdef __linux__
TEST_CASE("runtime: the default thread count is the CPUs this process may use (taskset, cpusets)", "[runtime]") {
  cpu_set_t saved;
  REQUIRE(sched_getaffinity(0, sizeof(saved), &saved) == 0);
  REQUIRE(usable_cpus() == CPU_COUNT(&saved));
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  unsetenv("TESSEL_NUM_THREADS");
  int pinned = usable_cpus(), threads = default_num_threads();
  REQUIRE(sched_setaffinity(0, sizeof(saved), &saved) == 0);  // restored before any check can stop the test
  CHECK(pinned == 1);
  CHECK(threads == 1);
}
#endif
