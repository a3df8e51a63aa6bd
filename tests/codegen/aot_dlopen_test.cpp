// dlopens the shared library emitted by aot_gen from a process that links neither LLVM nor tessel,
// and calls NAME_packed through dlsym.
#include <dlfcn.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

TEST_CASE("aot: shared library runs after dlopen in a process without LLVM", "[codegen][aot]") {
  void* lib = dlopen(TESSEL_AOT_SO, RTLD_NOW | RTLD_LOCAL);
  INFO((lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  REQUIRE(dlsym(RTLD_DEFAULT, "LLVMContextCreate") == nullptr);  // really no LLVM in this process
  auto packed = reinterpret_cast<int32_t (*)(void* const*)>(dlsym(lib, "tessel_aot_saxpy_packed"));
  auto set_threads = reinterpret_cast<void (*)(int32_t)>(dlsym(lib, "tessel_set_num_threads"));
  REQUIRE(packed != nullptr);
  REQUIRE(set_threads != nullptr);
  uint64_t seed = std::random_device{}();
  std::printf("seed = %llu\n", (unsigned long long)seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int n = 1000;
  float* a = static_cast<float*>(aligned_alloc(64, 4096));
  float* b = static_cast<float*>(aligned_alloc(64, 4096));
  float* c = static_cast<float*>(aligned_alloc(64, 4096 + 64));
  for (int i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
  for (int threads : {1, 2, 4}) {
    set_threads(threads);
    std::memset(c, 0xAB, 4096 + 64);
    void* args[] = {a, b, c};
    REQUIRE(packed(args) == 0);
    for (int i = 0; i < n; ++i) REQUIRE(c[i] == Approx(a[i] * 2.5f + b[i]).margin(1e-6));
    uint32_t tail;
    std::memcpy(&tail, c + n, 4);
    REQUIRE(tail == 0xABABABABu);
  }
  free(a);
  free(b);
  free(c);
  REQUIRE(dlclose(lib) == 0);  // the library's pool threads are joined by its static destructor
}
