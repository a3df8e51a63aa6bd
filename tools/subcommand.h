// Subcommands of the `tessel` CLI: each is a file in tools/ with one registration line in
// tessel_main.cpp. A subcommand gets its own arguments (after its name) and returns the exit code.
#pragma once
#include <string>
#include <vector>

namespace tessel::tools {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

/** `tessel demo`: a 512^3 matmul with a naive and a hand-written schedule, checked and timed. */
int run_demo(const std::vector<std::string>& args);

/** `tessel workloads`: operators and parameters, network task lists, workload keys. */
int run_workloads(const std::vector<std::string>& args);

/** `tessel db`: list, best, show, export, import, distill, stats, why on a tuning database. */
int run_db(const std::vector<std::string>& args);

/** `tessel compile`: a workload built with its best tuning record -> NAME.o, NAME.so, NAME.h. */
int run_compile(const std::vector<std::string>& args);

/** `tessel tune`: search for fast schedules of a workload, .te file or network; records into a database. */
int run_tune(const std::vector<std::string>& args);

/** `tessel report`: one self-contained HTML page (charts, traces, top records) for a tuning database. */
int run_report(const std::vector<std::string>& args);

/** `tessel costmodel train | eval`: learned cost models from tuning databases. */
int run_costmodel(const std::vector<std::string>& args);

/** `tessel tracker` (and `tessel tracker status`): leases remote workers to tuners by device key. */
int run_tracker(const std::vector<std::string>& args);

/** `tessel worker`: a remote measurement worker (runs the small tessel-rpc-worker executable). */
int run_worker(const std::vector<std::string>& args);

}  // namespace tessel::tools
