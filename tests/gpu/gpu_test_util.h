// Helpers for the GPU tests: build a GPU-scheduled workload to PTX, assemble it with ptxas when it is
// installed, and run the same IR on the CPU (thread-bound loops as serial loops) against a reference.
#pragma once
#include <catch2/catch.hpp>
#include <fstream>
#include <iostream>

#include "codegen/test_util.h"
#include "tessel/codegen/cuda.h"
#include "tessel/codegen/jit.h"
#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"
#include "workloads.h"

namespace tessel::gputest {

/** The test process's seed (TESSEL_TEST_SEED or random; printed once). */
inline uint64_t seed() { return test::test_seed(); }

/** True when ptxas exists; warns once otherwise (tests then check only what LLVM produced). */
inline bool have_ptxas() {
  static bool have = [] {
    bool h = !codegen::find_ptxas().empty();
    if (!h) std::cout << "ptxas not installed (PATH, /usr/local/cuda/bin): PTX is not assembled in these tests\n";
    return h;
  }();
  return have;
}

/** ptxas -arch=sm_90 must accept k's PTX; returns the registers per thread it reports (-1 without ptxas). */
inline int require_ptxas_accepts(const codegen::CudaKernel& k) {
  if (!have_ptxas()) return -1;
  std::string log;
  int regs = -1;
  Status st = codegen::run_ptxas(k.ptx, k.artifact.arch, &log, &regs);
  INFO(st.message());
  INFO("PTX (first 6000 characters):\n" << k.ptx.substr(0, 6000));
  REQUIRE(st.is_ok());
  return regs;
}

/** Lowers sch for w's arguments and builds it for CUDA. */
inline codegen::CudaKernel build(const testing::Workload& w, const schedule::Schedule& sch, const std::string& name) {
  ir::LoweredFunc f = lower::lower(sch, w.args, name);
  codegen::CudaKernel k = codegen::build_cuda(f);
  if (const char* dir = std::getenv("TESSEL_GPU_TEST_DUMP")) {  // inspect: IR, PTX and sidecar per kernel
    codegen::write_cuda_kernel(k, std::string(dir) + "/" + name);
    std::ofstream(std::string(dir) + "/" + name + ".tir") << ir::to_string(k.device_func);
  }
  return k;
}

/** The CPU run of the GPU-scheduled IR matches the reference on random inputs (outputs poisoned). */
inline void require_cpu_semantics(const testing::Workload& w, const schedule::Schedule& sch) {
  std::string err = testing::check_schedule(w, sch, seed());
  INFO(err);
  REQUIRE(err.empty());
}

/** JIT-runs f on the CPU: the first nin arguments are inputs (the given arrays, or seeded random values
 *  when `inputs` is empty), the outputs are poisoned with NaN first. Returns all arguments. */
inline std::vector<runtime::NDArray> run_on_cpu(const ir::LoweredFunc& f, size_t nin,
                                                const std::vector<runtime::NDArray>& inputs, uint64_t seed = 0) {
  std::vector<runtime::NDArray> arrays;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i < nin && !inputs.empty()) {
      arrays.push_back(inputs[i].copy());
      continue;
    }
    std::vector<int64_t> shape;
    for (auto& e : f.params[i]->shape) shape.push_back(*ir::as_const_int(e));
    arrays.emplace_back(shape, runtime::DType::parse(f.params[i]->dtype.to_string()));
    if (i < nin)
      arrays.back().fill_random(seed + i, -1.0, 1.0);
    else
      arrays.back().fill_bytes(0xFF);
  }
  auto jit = codegen::JitModule::compile(f);
  std::vector<void*> ptrs;
  for (auto& a : arrays) ptrs.push_back(a.data());
  jit->call_packed(ptrs.data());
  return arrays;
}

}  // namespace tessel::gputest
