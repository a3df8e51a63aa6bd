// `tessel tracker` (serve; `tessel tracker status`) and `tessel worker` (runs the small
// tessel-rpc-worker executable, which links neither LLVM nor SQLite; see docs/remote.md).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli_util.h"
#include "subcommand.h"
#include "tessel/support/error.h"
#include "worker_child.h"

#ifndef TESSEL_RPC_WORKER_BUILD_PATH
#define TESSEL_RPC_WORKER_BUILD_PATH ""
#endif

namespace tessel::tools {

namespace po = boost::program_options;

namespace {

int tracker_status_cmd(const std::vector<std::string>& args) {
  std::string tracker;
  double timeout = 10;
  SecurityFlags sec;
  po::options_description desc(
      "tessel tracker status: keys, free and busy workers and queued requests of a tracker\n\n"
      "  tessel tracker status --tracker HOST:PORT [--token-file FILE]\n\nOptions");
  desc.add_options()("help,h", "print this help")("tracker", po::value<std::string>(&tracker)->required(),
                                                  "HOST:PORT of the tracker")(
      "timeout", po::value<double>(&timeout)->default_value(10), "seconds to wait for the tracker");
  sec.add_to(desc, false);
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  auto rows = rpc::tracker_status(tracker, sec.load(), timeout);
  std::printf("%-24s %6s %6s %7s\n", "key", "free", "busy", "queued");
  for (auto& r : rows) std::printf("%-24s %6d %6d %7d\n", r.key.c_str(), r.free, r.busy, r.queued);
  if (rows.empty()) std::printf("(no workers registered)\n");
  return 0;
}

}  // namespace

int run_tracker(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "status") return tracker_status_cmd({args.begin() + 1, args.end()});
  rpc::TrackerParams p;
  SecurityFlags sec;
  po::options_description desc(
      "tessel tracker: workers register under device keys, tuners lease them\n\n"
      "  tessel tracker --listen 0.0.0.0:9190 --token-file secret.txt\n"
      "  tessel tracker status --tracker HOST:PORT --token-file secret.txt\n\nOptions");
  desc.add_options()("help,h", "print this help")("listen", po::value<std::string>(&p.listen)->default_value(p.listen),
                                                  "ADDR:PORT to listen on (port 0: any free port)")(
      "port-file", po::value<std::string>(&p.port_file), "write the chosen port here once listening")(
      "lease-s", po::value<double>(&p.lease_s)->default_value(p.lease_s), "lease time without renewal (s)")(
      "heartbeat-s", po::value<double>(&p.heartbeat_s)->default_value(p.heartbeat_s),
      "how often workers re-register (s)")("worker-timeout-s",
                                           po::value<double>(&p.worker_timeout_s)->default_value(p.worker_timeout_s),
                                           "drop a worker silent this long (s)")(
      "max-message-mb", po::value<int64_t>(&p.max_message_mb)->default_value(p.max_message_mb), "largest message");
  sec.add_to(desc, true);
  po::variables_map vm;
  if (parse_args(desc, args, vm)) return 0;
  TESSEL_CHECK(p.lease_s > 0 && p.heartbeat_s > 0 && p.worker_timeout_s > p.heartbeat_s)
      << "--lease-s and --heartbeat-s must be positive and --worker-timeout-s longer than --heartbeat-s";
  p.security = sec.load();
  return rpc::serve_tracker(p);
}

int run_worker(const std::vector<std::string>& args) {
  std::string path = tuner::find_sibling_binary("tessel-rpc-worker", "TESSEL_RPC_WORKER", TESSEL_RPC_WORKER_BUILD_PATH);
  TESSEL_CHECK(!path.empty()) << "cannot find tessel-rpc-worker (install it next to tessel, or set TESSEL_RPC_WORKER)";
  std::vector<char*> argv = {const_cast<char*>(path.c_str())};
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(path.c_str(), argv.data());
  TESSEL_CHECK(false) << "cannot run " << path << ": " << std::strerror(errno);
  return 1;
}

}  // namespace tessel::tools
