// In-process compilation of a lowered function with LLVM ORC (LLJIT).
// Calling convention: see include/tessel/runtime/c_runtime.h. Floating-point policy: see docs/codegen.md
// (a*b+c may be contracted into an FMA; no other fast-math).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "tessel/codegen/target.h"
#include "tessel/ir/stmt.h"

namespace tessel::codegen {

/** A compiled function living in this process. Owns its JIT; the code is freed with it. */
class JitModule {
 public:
  /** Generates LLVM IR for f, runs the O3 pipeline for target and JIT-compiles it.
   *  Throws InternalError on malformed IR (verifier message included), UserError on a bad target. */
  static std::unique_ptr<JitModule> compile(const ir::LoweredFunc& f, const Target& target = Target::host());
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  /** Address of a symbol of the module (NAME, NAME_packed); throws UserError when absent. */
  void* symbol(const std::string& name);
  /** Calls NAME_packed(args): args[i] is the i-th parameter's data pointer. Returns its status (0). */
  int32_t call_packed(void* const* args);
  const std::string& name() const;
  const Target& target() const;

  /** Optimized LLVM IR text of the module. */
  std::string llvm_ir() const;
  /** Target assembly of the module (generated on demand from llvm_ir()). */
  std::string assembly() const;

 private:
  struct Impl;
  explicit JitModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::codegen
