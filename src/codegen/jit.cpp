// JitModule: LLJIT over the optimized module; runtime symbols are defined as absolute addresses of this
// process's tessel_runtime, everything else (libm, libc) is looked up in the process.
#include "tessel/codegen/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "llvm_module.h"
#include "tessel/runtime/c_runtime.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"

namespace tessel::codegen {

struct JitModule::Impl {
  std::string name;
  Target target;
  std::string ir_text;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int32_t (*packed)(void* const*) = nullptr;
};

namespace {
std::string error_text(llvm::Error e) { return llvm::toString(std::move(e)); }
}  // namespace

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

std::unique_ptr<JitModule> JitModule::compile(const ir::LoweredFunc& f, const Target& target) {
  auto impl = std::make_unique<Impl>();
  impl->name = f.name;
  impl->target = target;
  auto tm = detail::make_target_machine(target);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = detail::build_module(f, *ctx, *tm);
  impl->ir_text = detail::module_to_string(*mod);
  TESSEL_LOG(3) << "optimized LLVM IR of " << f.name << " for " << target.to_string() << ":\n" << impl->ir_text;

  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu.empty() ? "generic" : target.cpu);
  llvm::SubtargetFeatures feats(target.features);
  jtmb.addFeatures(feats.getFeatures());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  TESSEL_ICHECK(static_cast<bool>(jit)) << "cannot create the LLVM JIT: " << error_text(jit.takeError());
  impl->jit = std::move(*jit);
  auto& jd = impl->jit->getMainJITDylib();

  auto& es = impl->jit->getExecutionSession();
  llvm::orc::SymbolMap runtime_syms;
  auto add = [&](const char* n, void* p) {
    runtime_syms[impl->jit->mangleAndIntern(n)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported);
  };
  add("tessel_parallel_for", reinterpret_cast<void*>(&tessel_parallel_for));
  add("tessel_alloc_aligned", reinterpret_cast<void*>(&tessel_alloc_aligned));
  add("tessel_free_aligned", reinterpret_cast<void*>(&tessel_free_aligned));
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(runtime_syms))))
    TESSEL_ICHECK(false) << "JIT: cannot define runtime symbols: " << error_text(std::move(err));
  (void)es;
  auto gen =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(impl->jit->getDataLayout().getGlobalPrefix());
  TESSEL_ICHECK(static_cast<bool>(gen)) << "JIT: cannot search this process's symbols: " << error_text(gen.takeError());
  jd.addGenerator(std::move(*gen));

  mod->setDataLayout(impl->jit->getDataLayout());
  if (auto err = impl->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    TESSEL_ICHECK(false) << "JIT: cannot add module " << f.name << ": " << error_text(std::move(err));
  auto sym = impl->jit->lookup(f.name + "_packed");
  TESSEL_ICHECK(static_cast<bool>(sym)) << "JIT: cannot compile " << f.name << ": " << error_text(sym.takeError());
  impl->packed = sym->toPtr<int32_t (*)(void* const*)>();
  return std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
}

void* JitModule::symbol(const std::string& name) {
  auto sym = impl_->jit->lookup(name);
  TESSEL_CHECK(static_cast<bool>(sym)) << "JIT module " << impl_->name << " has no symbol '" << name
                                       << "': " << error_text(sym.takeError());
  return sym->toPtr<void*>();
}

int32_t JitModule::call_packed(void* const* args) { return impl_->packed(args); }

const std::string& JitModule::name() const { return impl_->name; }
const Target& JitModule::target() const { return impl_->target; }

std::string JitModule::llvm_ir() const { return impl_->ir_text; }

std::string JitModule::assembly() const {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  auto m = llvm::parseIR(llvm::MemoryBufferRef(impl_->ir_text, impl_->name), diag, ctx);
  TESSEL_ICHECK(m != nullptr) << "cannot re-read the IR of " << impl_->name << ": " << diag.getMessage().str();
  auto tm = detail::make_target_machine(impl_->target);
  return detail::emit_machine_code(*m, *tm, /*object=*/false);
}

}  // namespace tessel::codegen
