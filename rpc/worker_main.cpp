// tessel-rpc-worker: the remote measurement worker (`tessel worker` runs it). A small executable: no
// LLVM, XGBoost, SQLite or Boost; copy it and tessel-worker to the measured machine. See docs/remote.md.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "tessel/rpc/rpc.h"
#include "tessel/support/error.h"
#include "tessel/support/version.h"

namespace {

const char* kUsage =
    "Usage: tessel worker [--tracker HOST:PORT --key KEY] [--listen ADDR:PORT] [options]\n"
    "Serves measurement requests of tuners: registers with a tracker under a device key, or (without\n"
    "--tracker) serves tuners that name it with `tessel tune --worker HOST:PORT`.\n\n"
    "  --tracker HOST:PORT      register with this tracker (re-registering every heartbeat)\n"
    "  --key KEY                device key tuners ask for (default: default)\n"
    "  --listen ADDR:PORT       where to listen (default 0.0.0.0:0: all interfaces, any free port)\n"
    "  --advertise HOST:PORT    the address tuners use to reach this worker (default: from --listen)\n"
    "  --port-file PATH         write the chosen port here once listening\n"
    "  --work-dir DIR           received artifacts go here (default: a new temporary directory)\n"
    "  --measure-lock PATH      measure under an exclusive lock on this file: workers and `tessel tune\n"
    "                           --measure-lock` runs given the same file time one kernel at a time\n"
    "  --token-file PATH        shared secret (first line); calls without it are refused\n"
    "  --tls-cert PATH --tls-key PATH --tls-ca PATH   mutual TLS (client certificates required)\n"
    "  --allow-unauthenticated  listen beyond 127.0.0.1 with neither token nor TLS\n"
    "  --max-message-mb N       largest message (artifact) accepted (default 64)\n"
    "  --version, --help\n";

}  // namespace

int main(int argc, char** argv) {
  tessel::rpc::WorkerParams p;
  std::map<std::string, std::string*> values = {
      {"--tracker", &p.tracker},
      {"--key", &p.key},
      {"--listen", &p.listen},
      {"--advertise", &p.advertise},
      {"--port-file", &p.port_file},
      {"--work-dir", &p.work_dir},
      {"--measure-lock", &p.measure_lock},
      {"--tls-cert", &p.security.tls_cert},
      {"--tls-key", &p.security.tls_key},
      {"--tls-ca", &p.security.tls_ca},
  };
  std::string token_file, max_mb;
  values["--token-file"] = &token_file;
  values["--max-message-mb"] = &max_mb;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--version") {
      std::cout << "tessel-rpc-worker " << tessel::version() << "\n";
      return 0;
    }
    if (a == "--allow-unauthenticated") {
      p.security.allow_unauthenticated = true;
      continue;
    }
    std::string value;
    if (size_t eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (values.count(a)) {
      if (i + 1 == argc) {
        std::cerr << "tessel worker: " << a << " needs a value\n" << kUsage;
        return 2;
      }
      value = argv[++i];
    }
    auto it = values.find(a);
    if (it == values.end()) {
      std::cerr << "tessel worker: unknown argument '" << a << "'\n" << kUsage;
      return 2;
    }
    *it->second = value;
  }
  try {
    if (!token_file.empty()) p.security.token = tessel::rpc::read_token_file(token_file);
    if (!max_mb.empty()) {
      char* end = nullptr;
      p.max_message_mb = std::strtoll(max_mb.c_str(), &end, 10);
      TESSEL_CHECK(end && !*end) << "--max-message-mb needs an integer, got '" << max_mb << "'";
    }
    TESSEL_CHECK(!p.key.empty()) << "--key must not be empty";
    return tessel::rpc::serve_worker(p);
  } catch (const std::exception& e) {
    std::cerr << "tessel worker: error: " << e.what() << "\n";
    return 1;
  }
}
