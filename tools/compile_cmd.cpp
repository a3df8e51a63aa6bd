// `tessel compile`: builds a workload with the best record of a tuning database (or the default
// schedule, saying why) and writes NAME.o, NAME.so and NAME.h. See docs/compile.md.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/codegen/aot.h"
#include "tessel/codegen/cuda.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/records/compile.h"
#include "tessel/records/database.h"
#include "tessel/workload/workload.h"

namespace tessel::tools {

namespace po = boost::program_options;

namespace {
bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}
// Builds the PTX kernel and writes OUTPUT.ptx and OUTPUT.json.
int write_cuda(const ir::LoweredFunc& f, const codegen::Target& target, const std::string& output,
               const std::string& function, bool quiet) {
  codegen::CudaKernel ck = codegen::build_cuda(f, target, {}, /*assemble=*/true);  // registers, when ptxas exists
  codegen::write_cuda_kernel(ck, output);
  const auto& ki = ck.artifact.first();
  if (!quiet)
    std::cout << "tessel compile: wrote " << output << ".ptx " << output << ".json (kernel " << function << ", grid ["
              << ki.grid[0] << "," << ki.grid[1] << "," << ki.grid[2] << "], block [" << ki.block[0] << ","
              << ki.block[1] << "," << ki.block[2] << "], shared " << ck.launch.shared_bytes << " bytes)\n";
  return 0;
}
}  // namespace

int run_compile(const std::vector<std::string>& args) {
  std::string db_path, spec, te_file, target_str, output, function, emit;
  bool quiet = false;
  po::options_description desc(
      "tessel compile: build a workload with its best tuning record\n\n"
      "  tessel compile --db tuning.db --workload matmul:M=512,N=512,K=512 -o build/matmul\n"
      "writes build/matmul.o, build/matmul.so and build/matmul.h (function `matmul`); with no usable\n"
      "record it uses the default schedule and prints why.\n"
      "With --target cuda (or \"cuda -arch=sm_90\") it writes build/matmul.ptx and build/matmul.json (the\n"
      "kernel's launch description; see docs/gpu-codegen.md) instead.\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::string>(&db_path), "tuning database (required)")(
      "workload", po::value<std::string>(&spec), "workload spec NAME:P=V,...")(
      "te", po::value<std::string>(&te_file), "workload from a .te file")(
      "target", po::value<std::string>(&target_str)->default_value("host"), "'host' or a target string")(
      "output,o", po::value<std::string>(&output), "output path without extension (required)")(
      "function", po::value<std::string>(&function), "function name (default: the output's file name)")(
      "emit", po::value<std::string>(&emit)->default_value("o,so,h"),
      "comma-separated outputs: o, so, h (CPU targets; cuda targets always write .ptx and .json)")(
      "quiet,q", po::bool_switch(&quiet), "print nothing on success");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  bool cuda_target = codegen::Target::parse(target_str).is_cuda();
  if (db_path.empty() && !cuda_target) throw po::error("--db is required");
  if (output.empty()) throw po::error("-o/--output is required");
  if (spec.empty() == te_file.empty()) throw po::error("give exactly one of --workload and --te");
  if (function.empty()) function = std::filesystem::path(output).filename().string();
  if (!is_c_identifier(function))
    throw po::error("function name '" + function + "' is not a C identifier (use --function NAME)");
  std::set<std::string> kinds;
  std::stringstream ss(emit);
  for (std::string k; std::getline(ss, k, ',');) {
    if (k != "o" && k != "so" && k != "h") throw po::error("--emit: unknown output '" + k + "' (o, so, h)");
    kinds.insert(k);
  }

  codegen::Target target = codegen::Target::parse(target_str);
  workload::Workload w = spec.empty() ? workload::from_te_file(te_file) : workload::from_spec(spec);
  if (db_path.empty()) {  // cuda without a database: the default GPU schedule
    ops::OpTensors t{w.inputs, w.outputs};
    records::CompiledKernel k0;
    k0.func = lower::lower(ops::default_gpu_schedule(t), w.args(), function);
    if (!quiet) std::cout << "tessel: " << function << " (" << w.name << "): default GPU schedule (no --db)\n";
    return write_cuda(k0.func, target, output, function, quiet);
  }
  records::OpenOptions oo;
  oo.create = false;
  oo.read_only = ::access(db_path.c_str(), W_OK) != 0 && ::access(db_path.c_str(), R_OK) == 0;  // e.g. a read-only checkout
  auto db = records::open_database(db_path, oo);
  records::BuildOptions bo;
  bo.name = function;
  bo.report = [&](const std::string& line) {
    if (!quiet) std::cout << line << "\n";
  };
  records::CompiledKernel k = records::build_best(*db, w, target, bo);
  if (target.is_cuda()) return write_cuda(k.func, target, output, function, quiet);
  std::string written;
  if (kinds.count("o")) {
    codegen::emit_object(k.func, target, output + ".o");
    written += " " + output + ".o";
  }
  if (kinds.count("so")) {
    codegen::emit_shared_library(k.func, target, output + ".so");
    written += " " + output + ".so";
  }
  if (kinds.count("h")) {
    codegen::emit_header(k.func, output + ".h");
    written += " " + output + ".h";
  }
  if (!quiet) std::cout << "tessel compile: wrote" << written << " (function " << function << ")\n";
  return 0;
}

}  // namespace tessel::tools
