// The tessel command-line tool: global flags (--help, --version) and subcommand dispatch.
#include <boost/program_options.hpp>
#include <iostream>

#include "subcommand.h"
#include "tessel/support/error.h"
#include "tessel/codegen/target.h"
#include "tessel/support/version.h"

namespace {
using tessel::tools::Subcommand;

const Subcommand kSubcommands[] = {
    {"demo", "build a 512^3 fp32 matmul with a naive and a hand-written schedule; check and time both",
     tessel::tools::run_demo},
    {"workloads", "list operators and their parameters, network task lists, workload keys",
     tessel::tools::run_workloads},
    {"tune", "search for fast schedules of a workload, .te file or network; record every measurement",
     tessel::tools::run_tune},
    {"costmodel", "train a cost model from tuning databases, or evaluate one on held-out databases",
     tessel::tools::run_costmodel},
    {"db", "inspect a tuning database: list, best, show, export, import, distill, stats, why", tessel::tools::run_db},
    {"compile", "build a workload with its best tuning record into NAME.o, NAME.so, NAME.h", tessel::tools::run_compile},
    {"tracker", "lease remote measurement workers to tuners by device key; 'tracker status' lists them",
     tessel::tools::run_tracker},
    {"worker", "measure candidates for remote tuners on this machine (registers with a tracker)",
     tessel::tools::run_worker},
    {"report", "one self-contained HTML page of a tuning database: tuning curves, errors, best traces",
     tessel::tools::run_report},
};

void print_usage(std::ostream& os) {
  os << "tessel " << tessel::version() << ": an auto-tuning tensor compiler\n\n"
     << "Usage: tessel [--help] [--version] <command> [<args>]\n\nCommands:\n";
  for (auto& c : kSubcommands) os << "  " << c.name << std::string(12 - std::string(c.name).size(), ' ') << c.summary << "\n";
  os << "\nRun 'tessel <command> --help' for a command's options.\n";
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cout);
    return 0;
  }
  std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") {
    auto host = tessel::codegen::Target::host();  // the CPU that picks the shipped cost model (docs/costmodel.md)
    std::cout << "tessel " << tessel::version() << "\nhost cpu: " << host.cpu << " (" << host.triple << ")\n";
    return 0;
  }
  for (auto& c : kSubcommands) {
    if (first != c.name) continue;
    try {
      return c.run(std::vector<std::string>(argv + 2, argv + argc));
    } catch (const boost::program_options::error& e) {
      std::cerr << "tessel " << c.name << ": " << e.what() << " (see 'tessel " << c.name << " --help')\n";
      return 2;
    } catch (const tessel::UserError& e) {
      std::cerr << "tessel " << c.name << ": error: " << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "tessel " << c.name << ": internal error: " << e.what() << "\n";
      return 3;
    }
  }
  std::cerr << "tessel: unknown command or option '" << first << "'\n\n";
  print_usage(std::cerr);
  return 2;
}
