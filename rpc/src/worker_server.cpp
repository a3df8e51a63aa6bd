// The worker server (`tessel worker`, the tessel-rpc-worker executable).
//   WorkerService::handle   check the request, write the artifacts to files of its own, measure in the
//                           WorkerChild (a `tessel-worker --stdio` child: crashes, hangs and memory
//                           exhaustion kill the child, never this server), answer the JSON response
//   serve_worker            start the server, then re-register with the tracker every heartbeat
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "rpc_internal.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"
#include "tessel/support/version.h"

namespace tessel::rpc {

namespace fs = std::filesystem;
using tuner::WorkerRequest;
using tuner::WorkerResponse;

namespace {

constexpr size_t kMaxReferences = 8;  // reference files kept (workload keys)

proto::MeasureReply reply_with(const WorkerResponse& r, bool need_reference = false) {
  proto::MeasureReply out;
  // Messages may quote request bytes that are not UTF-8: replace those rather than throw.
  out.set_response_json(r.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  out.set_need_reference(need_reference);
  return out;
}

proto::MeasureReply protocol_error(std::string msg, int64_t id) {
  WorkerResponse r = tuner::worker_error("worker_lost", std::move(msg));
  r.protocol_error = true;
  r.id = id;
  return reply_with(r);
}

bool write_file(const std::string& path, const std::string& data) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(data.data(), std::streamsize(data.size()));
  return bool(os);
}

}  // namespace

WorkerService::WorkerService(const WorkerParams& p, std::string work_dir)
    : p_(p),
      dir_(std::move(work_dir)),
      child_(tuner::WorkerChildParams{p.worker_path, 10}),
      measure_lock_(p.measure_lock) {}

proto::MeasureReply WorkerService::handle(const proto::MeasureRequest& m) {
  try {
    return handle_checked(m);
  } catch (const std::exception& e) {  // e.g. a file system error: an answer, never a dead server
    return protocol_error(std::string("worker error: ") + e.what(), -1);
  }
}

proto::MeasureReply WorkerService::handle_checked(const proto::MeasureRequest& m) {
  WorkerRequest req;
  try {
    req = WorkerRequest::from_json(nlohmann::json::parse(m.request_json()));
  } catch (const std::exception& e) {
    return protocol_error(std::string("malformed request: ") + e.what(), -1);
  }
  if (req.op != "measure") return protocol_error("op '" + req.op.substr(0, 64) + "' is not served over RPC", req.id);
  const std::string& kind = m.artifact().kind();
  if (kind != "so" && kind != "ptx")
    return protocol_error("artifact kind '" + kind.substr(0, 64) + "' is not supported (\"so\", \"ptx\")", req.id);
  if (kind == "ptx" && (req.artifact_kind != "ptx" || !req.launch.is_object()))
    return protocol_error("a \"ptx\" artifact needs \"artifact_kind\": \"ptx\" and the \"launch\" description "
                          "in the request",
                          req.id);
  if (m.artifact().data().empty()) return protocol_error("the artifact is empty", req.id);
  const std::string& ref_kind = m.reference().kind();
  if (!m.reference().data().empty() && ref_kind != "so" && ref_kind != "ptx")
    return protocol_error("reference kind '" + ref_kind.substr(0, 64) + "' is not supported", req.id);
  if (!m.reference().data().empty() && ref_kind == "ptx" &&
      (req.ref_artifact_kind != "ptx" || !req.ref_launch.is_object()))
    return protocol_error("a \"ptx\" reference needs \"artifact_kind\": \"ptx\" and the \"launch\" description "
                          "inside \"reference\" in the request",
                          req.id);
  if (req.ref_key.empty() || req.ref_key.size() > 4096) return protocol_error("reference.key is missing", req.id);
  std::lock_guard<std::mutex> lk(mu_);  // one measurement at a time: timings must not overlap
  int64_t id = req.id;
  if (!m.reference().data().empty()) {
    std::string path =
        (fs::path(dir_) / ("ref_" + std::to_string(next_file_++) + (ref_kind == "ptx" ? ".ptx" : ".so"))).string();
    if (!write_file(path, m.reference().data()))
      return reply_with(tuner::worker_error("worker_lost", "cannot write " + path), id);
    std::error_code ec;
    if (auto it = refs_.find(req.ref_key); it != refs_.end())
      fs::remove(it->second, ec);  // unlink: a mapped copy stays valid
    if (refs_.size() >= kMaxReferences && !refs_.count(req.ref_key)) {
      fs::remove(refs_.begin()->second, ec);
      refs_.erase(refs_.begin());
    }
    refs_[req.ref_key] = path;
  }
  auto ref = refs_.find(req.ref_key);
  if (ref == refs_.end()) {
    WorkerResponse r = tuner::worker_error("worker_lost", "this worker does not have the reference; send it");
    r.id = id;
    return reply_with(r, true);
  }
  std::string cand =
      (fs::path(dir_) / ("cand_" + std::to_string(next_file_++) + (kind == "ptx" ? ".ptx" : ".so"))).string();
  if (!write_file(cand, m.artifact().data()))
    return reply_with(tuner::worker_error("worker_lost", "cannot write " + cand), id);
  req.artifact = cand;
  req.ref_artifact = ref->second;
  WorkerResponse r;
  {
    std::lock_guard<tuner::MeasureLock> ml(measure_lock_);  // other processes measuring on this machine
    r = child_.measure(req);
  }
  r.id = id;
  r.fatal = false;  // the child's death is this server's business, not the tuner's
  std::error_code ec;
  fs::remove(cand, ec);
  ++measured_;
  return reply_with(r);
}

grpc::Status WorkerService::Measure(grpc::ServerContext* ctx, const proto::MeasureRequest* req,
                                    proto::MeasureReply* reply) {
  grpc::Status st = check_token(ctx, p_.security.token);
  if (!st.ok()) return st;
  *reply = handle(*req);
  return grpc::Status::OK;
}

grpc::Status WorkerService::Info(grpc::ServerContext* ctx, const proto::InfoRequest*, proto::InfoReply* reply) {
  grpc::Status st = check_token(ctx, p_.security.token);
  if (!st.ok()) return st;
  reply->set_key(p_.key);
  reply->set_version(tessel::version());
  reply->set_protocol(tuner::kWorkerProtocolVersion);
  reply->set_measured(measured_);
  return grpc::Status::OK;
}

int serve_worker(const WorkerParams& p) {
  block_stop_signals();
  p.security.validate();
  std::string dir = p.work_dir;
  bool own_dir = dir.empty();
  if (own_dir) dir = (fs::temp_directory_path() / ("tessel-rpc-worker-" + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  {
    WorkerService* service = nullptr;  // lives until exit (the server refers to it)
    try {
      service = new WorkerService(p, dir);
    } catch (...) {  // e.g. a measure lock that cannot be opened: leave no directory of ours behind
      std::error_code ec;
      if (own_dir) fs::remove_all(dir, ec);
      throw;
    }
    server = start_server(p.listen, p.security, p.max_message_mb, {service}, p.port_file, &port);
  }
  std::string host = host_of(p.advertise.empty() ? p.listen : p.advertise);
  if (host == "0.0.0.0" || host == "::" || host.empty()) {
    char name[256] = {0};
    gethostname(name, sizeof(name) - 1);
    host = name;
  }
  std::string address = p.advertise.empty() ? host + ":" + std::to_string(port) : p.advertise;
  std::cout << "tessel worker: key " << p.key << ", listening on port " << port << ", reachable as " << address
            << std::endl;
  std::atomic<bool> stop{false};
  std::thread heartbeat;
  if (!p.tracker.empty()) {
    heartbeat = std::thread([&] {
      std::mt19937_64 rng(std::random_device{}());
      std::string id = address + "/" + std::to_string(getpid()) + "/" + std::to_string(rng() % 1000000);
      auto stub = proto::Tracker::NewStub(make_channel(p.tracker, p.security, p.max_message_mb));
      double period = 2;
      bool registered = false;
      while (!stop) {
        proto::RegisterRequest r;
        r.set_key(p.key);
        r.set_address(address);
        r.set_worker_id(id);
        proto::RegisterReply reply;
        auto ctx = client_context(p.security, 3);
        grpc::Status st = stub->Register(ctx.get(), r, &reply);
        if (st.ok() != registered)
          std::cout << "tessel worker: " << (st.ok() ? "registered with " : "cannot reach tracker ") << p.tracker
                    << (st.ok() ? "" : ": " + st.error_message() + " (retrying)") << std::endl;
        registered = st.ok();
        if (!st.ok())  // a fresh channel: the old one may sit in reconnect backoff after a tracker restart
          stub = proto::Tracker::NewStub(make_channel(p.tracker, p.security, p.max_message_mb));
        if (st.ok() && reply.heartbeat_s() > 0.05) period = std::min(reply.heartbeat_s(), 60.0);
        for (int i = 0; i < int(period * 20) && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  wait_for_stop_signal();
  stop = true;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  if (heartbeat.joinable()) heartbeat.join();
  std::error_code ec;
  if (own_dir) fs::remove_all(dir, ec);
  return 0;
}

}  // namespace tessel::rpc
