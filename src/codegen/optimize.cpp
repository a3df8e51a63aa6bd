// The LLVM O3 module pipeline (new pass manager) and machine-code emission.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "llvm_module.h"
#include "tessel/support/error.h"

namespace tessel::codegen::detail {

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  pto.LoopUnrolling = true;
  llvm::PassBuilder pb(&tm, pto);  // registers TargetIRAnalysis: the vectorizers see real costs
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

std::unique_ptr<llvm::Module> build_module(const ir::LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm) {
  auto m = emit_module(f, ctx, tm);
  optimize_module(*m, tm);
  return m;
}

std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, bool object) {
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  bool failed = tm.addPassesToEmitFile(
      pm, os, nullptr, object ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile);
  TESSEL_ICHECK(!failed) << "LLVM target " << tm.getTargetTriple().str() << " cannot emit "
                         << (object ? "object code" : "assembly");
  pm.run(m);
  return std::string(buf.str());
}

}  // namespace tessel::codegen::detail
