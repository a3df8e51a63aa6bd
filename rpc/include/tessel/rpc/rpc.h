// Remote measurement: a tracker that leases workers by device key, and worker servers that measure
// built artifacts in `tessel-worker --stdio` children. See docs/remote.md. This header has no gRPC
// types: gRPC stays inside rpc/src.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::rpc {

/** Authentication of tracker, worker and tuner: a shared secret, mutual TLS, or both. */
struct Security {
  std::string token;                   // shared secret sent as call metadata "x-tessel-token" ("" = none)
  std::string tls_cert;                // PEM certificate chain of this side (file path)
  std::string tls_key;                 // PEM private key of this side (file path)
  std::string tls_ca;                  // PEM CA certificates the peer's certificate must chain to (file path)
  bool allow_unauthenticated = false;  // servers: listen beyond loopback with neither token nor TLS
  bool tls() const { return !tls_cert.empty() || !tls_key.empty() || !tls_ca.empty(); }
  /** Checks that TLS settings are complete and readable; throws UserError naming the flag. */
  void validate() const;
};

/** The token in a --token-file: its first line without surrounding white space. Throws UserError when
 *  the file cannot be read or the token is empty. */
std::string read_token_file(const std::string& path);

/** Largest message accepted or sent, both ends (artifacts travel inside messages). */
constexpr int64_t kDefaultMaxMessageMb = 64;

/** Settings of `tessel tracker`. */
struct TrackerParams {
  std::string listen = "0.0.0.0:9190";  // ADDR:PORT; port 0 = any free port
  std::string port_file;                // write the chosen port here once listening
  Security security;
  double lease_s = 30;           // a lease expires this long after its grant or last renewal
  double heartbeat_s = 2;        // workers are told to re-register this often
  double worker_timeout_s = 10;  // a worker silent this long is dropped
  int64_t max_message_mb = kDefaultMaxMessageMb;
};
/** Serves until SIGINT or SIGTERM; returns the exit code. */
int serve_tracker(const TrackerParams& p);

/** Settings of `tessel worker` (the tessel-rpc-worker executable). */
struct WorkerParams {
  std::string tracker;               // HOST:PORT of the tracker ("" = serve directly, no registration)
  std::string key = "default";       // device key tuners ask for
  std::string listen = "0.0.0.0:0";  // ADDR:PORT; port 0 = any free port
  std::string advertise;             // HOST:PORT tuners use to reach this worker ("" = from listen)
  std::string port_file;             // write the chosen port here once listening
  std::string work_dir;              // received artifacts are written here ("" = a new temp dir)
  std::string worker_path;           // tessel-worker binary ("" = next to this executable)
  std::string measure_lock;          // measure under an exclusive flock on this file, so that workers and
                                     // tuners sharing the machine time one kernel at a time ("" = none)
  Security security;
  int64_t max_message_mb = kDefaultMaxMessageMb;
};
/** Serves until SIGINT or SIGTERM, registering with the tracker every heartbeat; returns the exit code. */
int serve_worker(const WorkerParams& p);

/** One row of `tessel tracker status`. */
struct KeyStatus {
  std::string key;
  int free = 0, busy = 0, queued = 0;
};
/** Asks a tracker for its keys; throws UserError when it cannot be reached or refuses. */
std::vector<KeyStatus> tracker_status(const std::string& tracker, const Security& sec, double timeout_s = 10);

}  // namespace tessel::rpc
