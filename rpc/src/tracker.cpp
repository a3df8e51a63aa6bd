// The tracker: workers register under device keys; tuners lease free workers of a key.
//   do_register   upsert a worker (also its heartbeat; after a tracker restart workers simply reappear)
//   do_request    queue the request (priority, then arrival) and wait until it is first in its key's
//                 queue and a worker is free, or until its wait_s ran out (then an empty reply)
//   do_renew / do_release   extend or end leases; released "lost" workers are dropped until they register
//   expire_locked drop silent workers, free expired leases
//   serve_tracker, tracker_status   the server and the `tessel tracker status` client
// The tracker keeps no disk state: restarting it loses leases and queues, which tuners and workers
// rebuild by retrying (docs/remote.md).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

#include "rpc_internal.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"

namespace tessel::rpc {

namespace {
template <class F>
grpc::Status authed(grpc::ServerContext* ctx, const std::string& token, F&& f) {
  grpc::Status st = check_token(ctx, token);
  if (!st.ok()) return st;
  return f();
}
}  // namespace

void TrackerService::expire_locked(Clock::time_point now) {
  auto silent = std::chrono::duration<double>(p_.worker_timeout_s);
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (now - it->second.last_seen > silent) {
      TESSEL_LOG(1) << "tracker: worker " << it->first << " (" << it->second.address << ") went silent; dropped\n";
      it = workers_.erase(it);
      continue;
    }
    if (!it->second.lease_id.empty() && now > it->second.lease_expires) it->second.lease_id.clear();
    ++it;
  }
}

grpc::Status TrackerService::do_register(const proto::RegisterRequest& r, proto::RegisterReply* out) {
  if (r.key().empty() || r.key().size() > 256 || r.address().empty() || r.address().size() > 256 ||
      r.worker_id().empty() || r.worker_id().size() > 256)
    return {grpc::StatusCode::INVALID_ARGUMENT, "register needs a key, an address and a worker id (<= 256 bytes each)"};
  std::lock_guard<std::mutex> lk(mu_);
  auto now = Clock::now();
  for (auto it = workers_.begin(); it != workers_.end();)  // a restarted worker reuses its address
    it = it->first != r.worker_id() && it->second.address == r.address() ? workers_.erase(it) : std::next(it);
  auto [it, added] = workers_.try_emplace(r.worker_id());
  if (added) {
    TESSEL_LOG(1) << "tracker: worker " << r.worker_id() << " at " << r.address() << " key " << r.key() << "\n";
  }
  if (it->second.key != r.key()) it->second.lease_id.clear();
  it->second.key = r.key();
  it->second.address = r.address();
  it->second.last_seen = now;
  out->set_heartbeat_s(p_.heartbeat_s);
  cv_.notify_all();
  return grpc::Status::OK;
}

grpc::Status TrackerService::do_request(const proto::LeaseRequest& r, proto::LeaseReply* out,
                                        grpc::ServerContext* ctx) {
  if (r.key().empty() || r.key().size() > 256)
    return {grpc::StatusCode::INVALID_ARGUMENT, "a lease request needs a key"};
  double wait_s = std::isfinite(r.wait_s()) ? std::clamp(r.wait_s(), 0.0, 3600.0) : 0.0;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  std::unique_lock<std::mutex> lk(mu_);
  auto& queue = queues_[r.key()];
  Waiter me{r.priority(), next_seq_++};
  queue.emplace(me, 0);
  out->set_lease_seconds(p_.lease_s);
  for (;;) {
    auto now = Clock::now();
    expire_locked(now);
    if (queue.begin()->first.seq == me.seq) {
      for (auto& [id, e] : workers_) {
        if (e.key != r.key() || !e.lease_id.empty()) continue;
        if (r.max_workers() > 0 && out->leases_size() >= r.max_workers()) break;
        e.lease_id = "L" + std::to_string(next_lease_++);
        e.lease_expires = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p_.lease_s));
        auto* l = out->add_leases();
        l->set_lease_id(e.lease_id);
        l->set_worker_id(id);
        l->set_address(e.address);
      }
    }
    if (out->leases_size() > 0 || now >= deadline || (ctx && ctx->IsCancelled())) break;
    cv_.wait_until(lk, std::min(deadline, now + std::chrono::milliseconds(500)));
  }
  queue.erase(me);
  if (queue.empty()) queues_.erase(r.key());
  cv_.notify_all();  // the next in the queue may take what is left
  return grpc::Status::OK;
}

void TrackerService::do_renew(const proto::RenewRequest& r, proto::RenewReply* out) {
  std::lock_guard<std::mutex> lk(mu_);
  auto now = Clock::now();
  expire_locked(now);
  for (auto& id : r.lease_ids()) {
    bool found = false;
    for (auto& [wid, e] : workers_) {
      if (e.lease_id != id || id.empty()) continue;
      e.lease_expires = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p_.lease_s));
      found = true;
    }
    if (!found) out->add_unknown(id);
  }
}

void TrackerService::do_release(const proto::ReleaseRequest& r) {
  std::lock_guard<std::mutex> lk(mu_);
  std::set<std::string> ids(r.lease_ids().begin(), r.lease_ids().end());
  for (auto& [wid, e] : workers_)
    if (!e.lease_id.empty() && ids.count(e.lease_id)) e.lease_id.clear();
  for (auto& wid : r.lost_worker_ids()) {
    if (workers_.erase(wid)) {
      TESSEL_LOG(1) << "tracker: worker " << wid << " reported lost; dropped\n";
    }
  }
  cv_.notify_all();
}

void TrackerService::do_status(proto::StatusReply* out) {
  std::lock_guard<std::mutex> lk(mu_);
  expire_locked(Clock::now());
  std::map<std::string, KeyStatus> rows;
  for (auto& [id, e] : workers_) {
    auto& k = rows[e.key];
    (e.lease_id.empty() ? k.free : k.busy)++;
  }
  for (auto& [key, q] : queues_) rows[key].queued = int(q.size());
  for (auto& [key, k] : rows) {
    auto* s = out->add_keys();
    s->set_key(key);
    s->set_free(k.free);
    s->set_busy(k.busy);
    s->set_queued(k.queued);
  }
}

grpc::Status TrackerService::Register(grpc::ServerContext* c, const proto::RegisterRequest* r,
                                      proto::RegisterReply* o) {
  return authed(c, p_.security.token, [&] { return do_register(*r, o); });
}
grpc::Status TrackerService::RequestWorkers(grpc::ServerContext* c, const proto::LeaseRequest* r,
                                            proto::LeaseReply* o) {
  return authed(c, p_.security.token, [&] { return do_request(*r, o, c); });
}
grpc::Status TrackerService::Renew(grpc::ServerContext* c, const proto::RenewRequest* r, proto::RenewReply* o) {
  return authed(c, p_.security.token, [&] { return do_renew(*r, o), grpc::Status::OK; });
}
grpc::Status TrackerService::Release(grpc::ServerContext* c, const proto::ReleaseRequest* r, proto::ReleaseReply*) {
  return authed(c, p_.security.token, [&] { return do_release(*r), grpc::Status::OK; });
}
grpc::Status TrackerService::Status(grpc::ServerContext* c, const proto::StatusRequest*, proto::StatusReply* o) {
  return authed(c, p_.security.token, [&] { return do_status(o), grpc::Status::OK; });
}

int serve_tracker(const TrackerParams& p) {
  block_stop_signals();
  TrackerService service(p);
  int port = 0;
  auto server = start_server(p.listen, p.security, p.max_message_mb, {&service}, p.port_file, &port);
  std::cout << "tessel tracker: listening on " << host_of(p.listen) << ":" << port
            << (p.security.token.empty() && !p.security.tls() ? " (no authentication)" : "") << std::endl;
  wait_for_stop_signal();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}

std::vector<KeyStatus> tracker_status(const std::string& tracker, const Security& sec, double timeout_s) {
  auto stub = proto::Tracker::NewStub(make_channel(tracker, sec, kDefaultMaxMessageMb));
  auto ctx = client_context(sec, timeout_s);
  ctx->set_wait_for_ready(true);
  proto::StatusReply reply;
  grpc::Status st = stub->Status(ctx.get(), proto::StatusRequest(), &reply);
  TESSEL_CHECK(st.ok()) << "tracker " << tracker << ": " << st.error_message() << " (gRPC status "
                        << int(st.error_code()) << ")";
  std::vector<KeyStatus> out;
  for (auto& k : reply.keys()) out.push_back({k.key(), k.free(), k.busy(), k.queued()});
  return out;
}

}  // namespace tessel::rpc
