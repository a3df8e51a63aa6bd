// CUDA code generation: a lowered function whose loops are bound to blockIdx/threadIdx becomes one PTX
// kernel plus its launch description (GpuArtifact). See docs/gpu-codegen.md.
//
//   auto f = lower::lower(sch, {A, B, C}, "matmul");
//   codegen::CudaKernel k = codegen::build_cuda(f);           // throws UserError("invalid GPU kernel: ...")
//   codegen::write_cuda_kernel(k, "out/matmul");              // out/matmul.ptx + out/matmul.json
#pragma once
#include <string>

#include "tessel/codegen/gpu_artifact.h"
#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"
#include "tessel/lower/gpu_kernel.h"

namespace tessel::codegen {

/** A built GPU candidate. */
struct CudaKernel {
  std::string ptx;             // PTX assembly text (the module holds the kernel named artifact.first().entry)
  GpuArtifact artifact;        // launch description (the JSON sidecar)
  std::string llvm_ir;         // optimized LLVM IR, for debugging
  ir::LoweredFunc device_func; // the kernel's IR after barrier insertion
  lower::GpuLaunch launch;
  int registers = -1;          // per thread, from ptxas (-1: not assembled)
};

/** Device-side checks without LLVM: barrier insertion, launch inference and limits. Returns the reason an
 *  invalid candidate must not be launched; fills launch and device_func when given. */
Status validate_gpu_kernel(const ir::LoweredFunc& f, const lower::GpuLimits& limits = {},
                           lower::GpuLaunch* launch = nullptr, ir::LoweredFunc* device_func = nullptr);

/** Builds the PTX kernel for f (target must be a cuda target). Throws UserError starting with
 *  "invalid GPU kernel" when validate_gpu_kernel fails, or naming what codegen does not support. With
 *  assemble (and ptxas installed) the PTX is also assembled: registers are filled in and checked against
 *  the limits (an invalid kernel throws as above; PTX that ptxas rejects throws InternalError). */
CudaKernel build_cuda(const ir::LoweredFunc& f, const Target& target = Target::cuda(),
                      const lower::GpuLimits& limits = {}, bool assemble = false);

/** Writes PATH.ptx and PATH.json (the sidecar). Throws UserError when a file cannot be written. */
void write_cuda_kernel(const CudaKernel& k, const std::string& path_without_extension);

/** Path of CUDA's ptxas (PATH, then /usr/local/cuda/bin), or "" when not installed. */
std::string find_ptxas();
/** Assembles ptx with `ptxas -arch=ARCH -v`; returns an error with ptxas's output on failure. The
 *  registers per thread it reports go to *registers when given (-1 if not found). */
Status run_ptxas(const std::string& ptx, const std::string& arch, std::string* log = nullptr, int* registers = nullptr);

}  // namespace tessel::codegen
