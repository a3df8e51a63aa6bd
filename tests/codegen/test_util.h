// Helpers for the codegen tests: building small lowered functions by hand, JIT-running them on
// NDArrays, a printed random seed.
#pragma once
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "tessel/codegen/jit.h"
#include "tessel/ir/op.h"
#include "tessel/ir/stmt.h"
#include "tessel/runtime/ndarray.h"

namespace tessel::test {

using namespace tessel::ir;
using runtime::NDArray;

/** The seed for this test process: TESSEL_TEST_SEED if set, else random; printed once. */
inline uint64_t test_seed() {
  static uint64_t seed = [] {
    uint64_t s = std::random_device{}();
    if (const char* e = std::getenv("TESSEL_TEST_SEED")) s = std::strtoull(e, nullptr, 10);
    std::cout << "test seed = " << s << " (set TESSEL_TEST_SEED to replay)\n";
    return s;
  }();
  return seed;
}

/** A 1-D global buffer of n elements. */
inline Buffer buf1(const std::string& name, DataType t, int64_t n) {
  return make_buffer(name, t, {IntImm::make(DataType::int32(), n)});
}

inline Expr i32(int64_t v) { return IntImm::make(DataType::int32(), v); }
inline Expr i64(int64_t v) { return IntImm::make(DataType::int64(), v); }
inline Expr f32(double v) { return FloatImm::make(DataType::float32(), v); }
inline Expr ramp(Expr base, int64_t stride, int lanes) {
  return Ramp::make(base, IntImm::make(base.dtype(), stride), lanes);
}
inline Stmt loop(Var v, int64_t n, Stmt body, ForKind k = ForKind::kSerial) {
  return For::make(v, IntImm::make(v.dtype(), 0), IntImm::make(v.dtype(), n), k, std::move(body));
}

/** Compiles f and calls it on the arrays (in parameter order); returns the status. */
inline int32_t run(const LoweredFunc& f, std::vector<NDArray*> arrays) {
  auto jit = codegen::JitModule::compile(f);
  std::vector<void*> args;
  for (auto* a : arrays) args.push_back(a->data());
  return jit->call_packed(args.data());
}

/** An array of n random values in [lo, hi). */
inline NDArray random_array(int64_t n, const std::string& dtype, double lo, double hi, uint64_t salt) {
  NDArray a({n}, dtype);
  a.fill_random(test_seed() * 1000003 + salt, lo, hi);
  return a;
}

/** An array of n elements with every byte 0xAB (poison). */
inline NDArray poison_array(int64_t n, const std::string& dtype) {
  NDArray a({n}, dtype);
  a.fill_bytes(0xAB);
  return a;
}

}  // namespace tessel::test
