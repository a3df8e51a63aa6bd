// Private glue between the codegen files (LLVM types allowed here: this header is not installed).
#pragma once
#include <memory>
#include <string>

#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"
#include "tessel/lower/gpu_kernel.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessel::codegen::detail {

/** Initializes LLVM's targets once (thread-safe). */
void init_llvm();

/** A TargetMachine for target (PIC, O3 code generation). Throws UserError for an unknown triple. */
std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target);

/** How a GPU kernel is emitted: its launch shape, and whether shared buffers are slices of the dynamic
 *  shared array (needed above 48 KB per block) instead of static addrspace(3) globals. */
struct GpuEmitOptions {
  lower::GpuLaunch launch;
  bool dynamic_shared = false;
};

/** Emits f into a new module (triple and data layout from tm) and verifies it (InternalError on failure).
 *  With gpu, f becomes an NVPTX kernel (f.body must have passed lower::insert_gpu_barriers). */
std::unique_ptr<llvm::Module> emit_module(const ir::LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm,
                                          const GpuEmitOptions* gpu = nullptr);

/** Runs LLVM's O3 module pipeline with tm's cost model. */
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

/** emit_module + optimize_module. */
std::unique_ptr<llvm::Module> build_module(const ir::LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm);

/** Machine code of m as assembly text or object bytes (m is consumed by code generation passes). */
std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, bool object);

/** The module's IR text. */
std::string module_to_string(const llvm::Module& m);

}  // namespace tessel::codegen::detail
