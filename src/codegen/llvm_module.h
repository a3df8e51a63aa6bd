// Private glue between the codegen files (LLVM types allowed here: this header is not installed).
#pragma once
#include <memory>
#include <string>

#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"

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

/** Emits f into a new module (triple and data layout from tm) and verifies it (InternalError on failure). */
std::unique_ptr<llvm::Module> emit_module(const ir::LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm);

/** Runs LLVM's O3 module pipeline with tm's cost model. */
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

/** emit_module + optimize_module. */
std::unique_ptr<llvm::Module> build_module(const ir::LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm);

/** Machine code of m as assembly text or object bytes (m is consumed by code generation passes). */
std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, bool object);

/** The module's IR text. */
std::string module_to_string(const llvm::Module& m);

}  // namespace tessel::codegen::detail
