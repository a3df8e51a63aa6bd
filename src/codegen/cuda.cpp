// CUDA builds: GPU passes (barriers, launch inference, limit checks), NVPTX code generation for the
// cuda target, the JSON sidecar, and a ptxas runner used by tests and tools.
#include "tessel/codegen/cuda.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "llvm_module.h"
#include "tessel/ir/printer.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"

namespace tessel::codegen {

Status validate_gpu_kernel(const ir::LoweredFunc& f, const lower::GpuLimits& limits, lower::GpuLaunch* launch_out,
                           ir::LoweredFunc* device_out) {
  ir::LoweredFunc d = f;
  lower::GpuLaunch launch;
  try {
    d.body = lower::insert_gpu_barriers(f.body);
    launch = lower::infer_gpu_launch(d.body);
  } catch (const UserError& e) {
    return Status::error(e.what());
  }
  Status st = lower::check_gpu_launch(launch, limits);
  if (launch_out) *launch_out = launch;
  if (device_out) *device_out = d;
  return st;
}

CudaKernel build_cuda(const ir::LoweredFunc& f, const Target& target, const lower::GpuLimits& limits, bool assemble) {
  TESSEL_CHECK(target.is_cuda()) << "build_cuda: target '" << target.to_string()
                                 << "' is not a CUDA target (use \"cuda -arch=sm_90\")";
  CudaKernel k;
  Status st = validate_gpu_kernel(f, limits, &k.launch, &k.device_func);
  TESSEL_CHECK(st.is_ok()) << "invalid GPU kernel " << f.name << ": " << st.message();

  if (dump_ir_after("insert_gpu_barriers"))
    std::cerr << "// ---- IR after insert_gpu_barriers ----\n" << ir::to_string(k.device_func);
  detail::GpuEmitOptions opt;
  opt.launch = k.launch;
  opt.dynamic_shared = k.launch.shared_bytes > limits.max_static_shared_bytes;
  auto tm = detail::make_target_machine(target);
  llvm::LLVMContext ctx;
  auto m = detail::emit_module(k.device_func, ctx, *tm, &opt);
  detail::optimize_module(*m, *tm);
  k.llvm_ir = detail::module_to_string(*m);
  k.ptx = detail::emit_machine_code(*m, *tm, /*object=*/false);
  if (dump_ir_after("llvm")) std::cerr << "// ---- LLVM IR (NVPTX, optimized) ----\n" << k.llvm_ir;
  if (dump_ir_after("ptx")) std::cerr << "// ---- PTX ----\n" << k.ptx;

  if (assemble && !find_ptxas().empty()) {
    std::string log;
    Status as = run_ptxas(k.ptx, target.cpu, &log, &k.registers);
    TESSEL_ICHECK(as.is_ok()) << "ptxas rejected the PTX generated for " << f.name << ": " << as.message();
    Status regs = lower::check_gpu_launch(k.launch, limits, k.registers);
    TESSEL_CHECK(regs.is_ok()) << "invalid GPU kernel " << f.name << ": " << regs.message();
  }

  GpuKernelInfo info;
  info.entry = f.name;
  info.registers = k.registers;
  info.grid = k.launch.grid;
  info.block = k.launch.block;
  info.shared_bytes = opt.dynamic_shared ? k.launch.shared_bytes : 0;
  info.static_shared_bytes = opt.dynamic_shared ? 0 : k.launch.shared_bytes;
  k.artifact.arch = target.cpu;
  k.artifact.kernels.push_back(info);
  for (auto& p : f.params) {
    GpuParamInfo pi{p->name, p->dtype.to_string(), {}};
    for (auto& e : p->shape) {
      const int64_t* c = ir::as_const_int(e);
      TESSEL_CHECK(c) << "build_cuda: parameter " << p->name << " needs a constant shape";
      pi.shape.push_back(*c);
    }
    k.artifact.args.push_back(p->name);
    k.artifact.params.push_back(std::move(pi));
  }
  return k;
}

namespace {
void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  TESSEL_CHECK(out.good()) << "cannot write '" << path << "'";
  out << text;
  out.close();
  TESSEL_CHECK(!out.fail()) << "cannot write '" << path << "' (write failed)";
}
}  // namespace

void write_cuda_kernel(const CudaKernel& k, const std::string& path) {
  write_text(path + ".ptx", k.ptx);
  write_text(path + ".json", to_json(k.artifact).dump(2) + "\n");
}

std::string find_ptxas() {
  if (const char* env = std::getenv("TESSEL_PTXAS"); env && *env) return env;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      std::string p = dir + "/ptxas";
      if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p;
    }
  }
  if (::access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  return "";
}

Status run_ptxas(const std::string& ptx, const std::string& arch, std::string* log, int* registers) {
  if (registers) *registers = -1;
  std::string ptxas = find_ptxas();
  if (ptxas.empty()) return Status::error("ptxas is not installed (looked in PATH and /usr/local/cuda/bin)");
  auto dir = std::filesystem::temp_directory_path();
  std::string in = (dir / ("tessel-ptxas-" + std::to_string(::getpid()) + "-" +
                           std::to_string(reinterpret_cast<uintptr_t>(&ptx)) + ".ptx"))
                       .string();
  write_text(in, ptx);
  std::string cmd = "'" + ptxas + "' -arch=" + arch + " -v -o /dev/null '" + in + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::remove(in.c_str());
    return Status::error("cannot run " + cmd);
  }
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  std::remove(in.c_str());
  if (log) *log = out;
  std::smatch m;
  if (registers && std::regex_search(out, m, std::regex("Used ([0-9]+) registers"))) *registers = std::stoi(m[1]);
  if (status != 0) return Status::error("ptxas -arch=" + arch + " rejected the PTX:\n" + out);
  return Status::ok();
}

}  // namespace tessel::codegen
