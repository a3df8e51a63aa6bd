// Links the object and header emitted at build time by aot_gen (with tessel_runtime, no LLVM) and runs it.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "tessel/runtime/c_runtime.h"
#include "tessel/runtime/ndarray.h"
#include "tessel_aot_saxpy.h"

TEST_CASE("aot: object file + header linked into a C++ program", "[codegen][aot]") {
  uint64_t seed = std::random_device{}();
  std::printf("seed = %llu\n", (unsigned long long)seed);
  const int n = 1000;
  tessel::runtime::NDArray a({n}, "float32"), b({n}, "float32"), c({n + 16}, "float32");
  a.fill_random(seed, -1, 1);
  b.fill_random(seed + 1, -1, 1);
  for (int threads : {1, 2, 4}) {
    tessel_set_num_threads(threads);
    c.fill_bytes(0xAB);
    REQUIRE(tessel_aot_saxpy(a.data_as<float>(), b.data_as<float>(), c.data_as<float>()) == 0);
    for (int i = 0; i < n; ++i)
      REQUIRE(c.data_as<float>()[i] == Approx(a.data_as<float>()[i] * 2.5f + b.data_as<float>()[i]).margin(1e-6));
    for (int i = n; i < n + 16; ++i) REQUIRE(c.data_as<uint32_t>()[i] == 0xABABABABu);  // masked tail
    c.fill_bytes(0xAB);
    void* args[] = {a.data(), b.data(), c.data()};
    REQUIRE(tessel_aot_saxpy_packed(args) == 0);
    REQUIRE(c.data_as<float>()[n - 1] == Approx(a.data_as<float>()[n - 1] * 2.5f + b.data_as<float>()[n - 1]));
  }
}
