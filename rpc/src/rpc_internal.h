// Private pieces of the RPC module: credentials and the token check (security.cpp), the tracker and
// worker services (their request handling is callable without gRPC, for the fuzz tests).
#pragma once
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tessel/rpc/rpc.h"
#include "tessel_rpc.grpc.pb.h"
#include "measure_lock.h"
#include "worker_child.h"

namespace tessel::rpc {

/** The metadata entry that carries the shared-secret token. */
inline constexpr const char* kTokenHeader = "x-tessel-token";

/** Server credentials: mutual TLS (client certificates required) when sec.tls(), else insecure. */
std::shared_ptr<grpc::ServerCredentials> server_credentials(const Security& sec);
/** A channel to target with the security settings and message-size limits. */
std::shared_ptr<grpc::Channel> make_channel(const std::string& target, const Security& sec, int64_t max_message_mb);
/** A client context with the token and a deadline timeout_s from now. */
std::unique_ptr<grpc::ClientContext> client_context(const Security& sec, double timeout_s);
/** OK when the call carries the right token (or no token is configured); else UNAUTHENTICATED. The
 *  token is compared in constant time. */
grpc::Status check_token(const grpc::ServerContext* ctx, const std::string& token);
/** Builds and starts a server on listen with the services; writes the chosen port to port_file. Throws
 *  UserError when it cannot listen or when it would listen beyond loopback without authentication. */
std::unique_ptr<grpc::Server> start_server(const std::string& listen, const Security& sec, int64_t max_message_mb,
                                           const std::vector<grpc::Service*>& services, const std::string& port_file,
                                           int* port);
/** Blocks SIGINT/SIGTERM in this thread (call first in main, before any thread starts) ... */
void block_stop_signals();
/** ... then waits for one of them. */
void wait_for_stop_signal();
/** "HOST:PORT" -> HOST ("[::1]:80" -> "::1"). */
std::string host_of(const std::string& addr);

/** The tracker's state and handlers. Workers by id; one queue of waiting lease requests per key. */
class TrackerService final : public proto::Tracker::Service {
 public:
  explicit TrackerService(TrackerParams p) : p_(std::move(p)) {}
  grpc::Status Register(grpc::ServerContext*, const proto::RegisterRequest*, proto::RegisterReply*) override;
  grpc::Status RequestWorkers(grpc::ServerContext*, const proto::LeaseRequest*, proto::LeaseReply*) override;
  grpc::Status Renew(grpc::ServerContext*, const proto::RenewRequest*, proto::RenewReply*) override;
  grpc::Status Release(grpc::ServerContext*, const proto::ReleaseRequest*, proto::ReleaseReply*) override;
  grpc::Status Status(grpc::ServerContext*, const proto::StatusRequest*, proto::StatusReply*) override;
  /** The handlers without the token check (what the fuzz test calls). */
  grpc::Status do_register(const proto::RegisterRequest& r, proto::RegisterReply* out);
  /** ctx (may be null): the wait ends early when the caller cancels or its deadline passes. */
  grpc::Status do_request(const proto::LeaseRequest& r, proto::LeaseReply* out, grpc::ServerContext* ctx = nullptr);
  void do_renew(const proto::RenewRequest& r, proto::RenewReply* out);
  void do_release(const proto::ReleaseRequest& r);
  void do_status(proto::StatusReply* out);

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::string key, address;
    Clock::time_point last_seen;
    std::string lease_id;  // "" = free
    Clock::time_point lease_expires;
  };
  struct Waiter {
    int priority;
    uint64_t seq;
    bool operator<(const Waiter& o) const { return priority != o.priority ? priority > o.priority : seq < o.seq; }
  };
  void expire_locked(Clock::time_point now);

  TrackerParams p_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> workers_;                 // worker id -> entry
  std::map<std::string, std::map<Waiter, int>> queues_;  // key -> waiting requests (ordered)
  uint64_t next_seq_ = 1, next_lease_ = 1;
};

/** The worker's handler: writes the artifacts to files and measures them in a WorkerChild, one request
 *  at a time. */
class WorkerService final : public proto::Worker::Service {
 public:
  WorkerService(const WorkerParams& p, std::string work_dir);
  grpc::Status Measure(grpc::ServerContext*, const proto::MeasureRequest*, proto::MeasureReply*) override;
  grpc::Status Info(grpc::ServerContext*, const proto::InfoRequest*, proto::InfoReply*) override;
  /** Handles one request without the token check. Never throws: a malformed request gets a response
   *  with protocol_error set. */
  proto::MeasureReply handle(const proto::MeasureRequest& r);

 private:
  proto::MeasureReply handle_checked(const proto::MeasureRequest& r);
  WorkerParams p_;
  std::string dir_;
  std::mutex mu_;
  tuner::WorkerChild child_;
  tuner::MeasureLock measure_lock_;  // WorkerParams::measure_lock (none when empty)
  std::map<std::string, std::string> refs_;  // workload key -> reference file (newest few)
  int64_t next_file_ = 1;
  std::atomic<int64_t> measured_{0};  // requests measured (Info reports it)
};

}  // namespace tessel::rpc
