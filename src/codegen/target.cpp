// Target: host detection, parsing/printing, and the TargetMachine it configures.
#include "tessel/codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <mutex>
#include <sstream>
#include <vector>

#include "llvm_module.h"
#include "tessel/support/error.h"

namespace tessel::codegen {

namespace detail {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target) {
  init_llvm();
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, err);
  TESSEL_CHECK(t != nullptr) << "target '" << target.to_string() << "': unknown triple '" << target.triple
                             << "': " << err;
  llvm::TargetOptions opts;  // FP fusion: only where the IR carries the `contract` flag
  auto* tm = t->createTargetMachine(target.triple, target.cpu.empty() ? "generic" : target.cpu, target.features, opts,
                                    llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive);
  TESSEL_CHECK(tm != nullptr) << "target '" << target.to_string() << "': LLVM cannot create a target machine";
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

}  // namespace detail

Target Target::host() {
  static const Target cached = [] {
    detail::init_llvm();
    Target t;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    // Enabled features, plus the disabled ones the CPU name would otherwise imply (e.g. AVX-512 turned
    // off by the OS), so that the string fully describes what the code may use.
    std::vector<std::string> on, off;
    std::unique_ptr<llvm::MCSubtargetInfo> sti;
    std::string err;
    if (const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err))
      sti.reset(lt->createMCSubtargetInfo(t.triple, t.cpu, ""));
    for (const auto& kv : llvm::sys::getHostCPUFeatures()) {
      std::string name = kv.getKey().str();
      if (kv.getValue())
        on.push_back("+" + name);
      else if (sti && sti->checkFeatures("+" + name))
        off.push_back("-" + name);
    }
    std::sort(on.begin(), on.end());
    std::sort(off.begin(), off.end());
    on.insert(on.end(), off.begin(), off.end());
    for (size_t i = 0; i < on.size(); ++i) t.features += (i ? "," : "") + on[i];
    return t;
  }();
  return cached;
}

Target Target::cuda(const std::string& arch) {
  TESSEL_CHECK(arch.rfind("sm_", 0) == 0 && arch.size() > 3)
      << "cuda target: architecture '" << arch << "' is not of the form sm_XX (e.g. sm_90)";
  Target t;
  t.triple = "nvptx64-nvidia-cuda";
  t.cpu = arch;
  t.features = "+ptx80";  // PTX ISA 8.0: sm_90 needs >= 7.8; CUDA 12+ ptxas accepts it
  return t;
}

bool Target::is_cuda() const { return triple.rfind("nvptx", 0) == 0; }

Target Target::parse(const std::string& s) {
  std::istringstream is(s);
  std::string tok;
  Target t;
  {
    std::istringstream first(s);
    std::string kind;
    first >> kind;
    if (kind == "cuda" || kind == "nvptx") {
      std::string arch = "sm_90";
      std::string features;
      is >> tok;
      while (is >> tok) {
        if (tok.rfind("-arch=", 0) == 0)
          arch = tok.substr(6);
        else if (tok.rfind("-mcpu=", 0) == 0)
          arch = tok.substr(6);
        else if (tok.rfind("-mattr=", 0) == 0)
          features = tok.substr(7);
        else
          TESSEL_CHECK(false) << "target '" << s << "': unknown option '" << tok
                              << "' (expected \"cuda -arch=sm_XX [-mattr=+ptxNN]\")";
      }
      Target c = Target::cuda(arch);
      if (!features.empty()) c.features = features;
      return c;
    }
  }
  bool any = false, want_host = false;
  while (is >> tok) {
    if (tok == "host") {
      want_host = true;
    } else if (tok == "llvm") {
      // kind marker
    } else if (tok.rfind("-mtriple=", 0) == 0) {
      t.triple = tok.substr(9);
      any = true;
    } else if (tok.rfind("-mcpu=", 0) == 0) {
      t.cpu = tok.substr(6);
      any = true;
    } else if (tok.rfind("-mattr=", 0) == 0) {
      t.features = tok.substr(7);
      any = true;
    } else {
      TESSEL_CHECK(false) << "target '" << s << "': unknown option '" << tok
                          << "' (expected \"host\" or \"llvm -mtriple=... -mcpu=... -mattr=...\")";
    }
  }
  if (want_host || !any) {
    TESSEL_CHECK(!any) << "target '" << s << "': \"host\" cannot be combined with options";
    return Target::host();
  }
  if (t.triple.empty()) t.triple = llvm::sys::getProcessTriple();
  if (t.cpu.empty()) t.cpu = "generic";
  return t;
}

std::string Target::to_string() const {
  if (is_cuda()) return "cuda -arch=" + cpu + (features == "+ptx80" ? "" : " -mattr=" + features);
  std::string s = "llvm -mtriple=" + triple + " -mcpu=" + (cpu.empty() ? "generic" : cpu);
  if (!features.empty()) s += " -mattr=" + features;
  return s;
}

bool Target::has_feature(const std::string& name) const {
  bool on = false, off = false;
  std::istringstream is(features);
  std::string f;
  while (std::getline(is, f, ',')) {
    if (f == "+" + name) on = true, off = false;
    if (f == "-" + name) on = false, off = true;
  }
  if (!on && !off && !cpu.empty() && cpu != "generic") {  // implied by the CPU name?
    detail::init_llvm();
    std::string err;
    if (const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(triple, err)) {
      std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(triple, cpu, ""));
      on = sti && sti->checkFeatures("+" + name);
    }
  }
  return on;
}

int Target::vector_bytes() const {
  if (is_cuda()) return 16;  // ld.global.v4.f32
  llvm::Triple tr(triple);
  if (tr.isX86()) {
    if (has_feature("avx512f")) return 64;
    if (has_feature("avx")) return 32;
  }
  return 16;
}

}  // namespace tessel::codegen
