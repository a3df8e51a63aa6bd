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
}  // namespace

int run_compile(const std::vector<std::string>& args) {
  std::string db_path, spec, te_file, target_str, output, function, emit;
  bool quiet = false;
  po::options_description desc(
      "tessel compile: build a workload with its best tuning record\n\n"
      "  tessel compile --db tuning.db --workload matmul:M=512,N=512,K=512 -o build/matmul\n"
      "writes build/matmul.o, build/matmul.so and build/matmul.h (function `matmul`); with no usable\n"
      "record it uses the default schedule and prints why.\n\nOptions");
  desc.add_options()("help,h", "print this help")("db", po::value<std::string>(&db_path), "tuning database (required)")(
      "workload", po::value<std::string>(&spec), "workload spec NAME:P=V,...")(
      "te", po::value<std::string>(&te_file), "workload from a .te file")(
      "target", po::value<std::string>(&target_str)->default_value("host"), "'host' or a target string")(
      "output,o", po::value<std::string>(&output), "output path without extension (required)")(
      "function", po::value<std::string>(&function), "function name (default: the output's file name)")(
      "emit", po::value<std::string>(&emit)->default_value("o,so,h"), "comma-separated outputs: o, so, h")(
      "quiet,q", po::bool_switch(&quiet), "print nothing on success");
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  if (db_path.empty()) throw po::error("--db is required");
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
