// RpcRunner: the tuner's runner for remote workers.
//   RpcRunner::run      prepare each candidate (reference build, request JSON, artifact bytes), measure
//                       them all (RpcRunner::drain), then the rechecks of the near-best candidates
//                       (MeasureOptions::recheck_*, as the local runner: recheck_rounds more passes)
//   RpcRunner::drain    rounds until no candidate is pending: lease workers, one sending thread per
//                       worker, release the leases
//   RpcRunner::acquire  lease free workers of the key from the tracker (retrying while the tracker is
//                       away), or take the --worker addresses
//   RpcRunner::serve    a worker's thread: take the next candidate, send it, keep the result; on a
//                       transport failure put the candidate back for another worker and stop
//   RpcRunner::send     one Measure call (sending the reference when the worker lacks it)
// Results are written by the tuner (the records database is its concern): a lost worker loses nothing.
#include "tessel/rpc/rpc_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "rpc_internal.h"
#include "tessel/support/error.h"
#include "tessel/support/log.h"
#include "tessel/tuner/runner_util.h"

namespace tessel::rpc {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using tuner::MeasureErrorKind;
using tuner::MeasureResult;

bool read_bytes(const std::string& path, std::string* out) {
  std::ifstream is(path, std::ios::binary);
  if (!is) return false;
  std::ostringstream os;
  os << is.rdbuf();
  *out = os.str();
  return bool(is) || is.eof();
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Leased {
  std::string lease_id, worker_id, address;
};

/** A candidate ready to send. */
struct Job {
  std::string request_json, artifact, key, ref_path;
  std::string ref_kind = "so";  // of the reference: "so" or "ptx"
  std::string kind = "so";  // or "ptx": a GPU kernel, its launch description inline in request_json
};

/** One batch's shared state between the sending threads. */
struct Batch {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> pending;
  int in_flight = 0;
  std::vector<Job> jobs;
  std::vector<MeasureResult> results;
  std::vector<int> attempts;
  std::vector<double> build_s;
  std::vector<std::string> lost_ids;
  std::string last_lost;  // why the last worker was given up on
  tuner::MeasureOptions opt;
  double best = 0;            // the best time known (the tuner's and this batch's)
  std::vector<char> waiting;  // measured once and near the best: handed over after its rechecks
  bool rechecking = false;    // a recheck pass: answers fold into the results (tuner::merge_recheck)
};

class RpcRunner : public tuner::Runner {
 public:
  explicit RpcRunner(RpcRunnerParams p) : p_(std::move(p)), refs_(p_.work_dir, p_.target) {
    if (!p_.stats) p_.stats = std::make_shared<RpcRunnerStats>();
    if (!p_.tracker.empty())
      tracker_ = proto::Tracker::NewStub(make_channel(p_.tracker, p_.security, p_.max_message_mb));
  }

  std::vector<MeasureResult> run(const std::vector<tuner::MeasureInput>& inputs,
                                 const std::vector<tuner::BuildResult>& builds, const tuner::MeasureOptions& opt,
                                 double best_so_far_s) override {
    std::lock_guard<std::mutex> lk(run_mu_);
    Batch b;
    b.opt = opt;
    b.best = best_so_far_s;
    b.results.resize(inputs.size());
    b.jobs.resize(inputs.size());
    b.attempts.assign(inputs.size(), 0);
    b.build_s.assign(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size() && i < builds.size(); ++i) b.build_s[i] = builds[i].build_s;
    for (size_t i = 0; i < inputs.size(); ++i) {
      try {
        prepare(i, inputs[i], i < builds.size() ? &builds[i] : nullptr, b);
      } catch (const std::exception& e) {  // nothing may escape the runner
        b.results[i] = tuner::measure_error(MeasureErrorKind::kWorkerLost, std::string("runner error: ") + e.what());
      }
    }
    b.waiting.assign(inputs.size(), 0);
    drain(b);
    // Rechecks (docs/measurement.md, "Slow phases and rechecks"): more passes over the near-best
    // candidates, each on whichever worker is free; the rest are handed over now.
    std::vector<size_t> again = tuner::recheck_set(b.results, b.waiting, opt, b.best);
    auto hand_over = [&](size_t i) {
      if (on_result_) on_result_(i, b.results[i]);
    };
    for (size_t i = 0; i < inputs.size(); ++i)
      if (b.waiting[i] && !std::binary_search(again.begin(), again.end(), i)) hand_over(i);
    b.rechecking = true;
    for (int round = 0; round < opt.recheck_rounds && !again.empty(); ++round) {
      b.attempts.assign(inputs.size(), 0);
      b.pending.assign(again.begin(), again.end());
      drain(b);
    }
    for (size_t i : again) hand_over(i);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (i < builds.size()) b.results[i].build_s = builds[i].build_s;
      if (i < builds.size() && builds[i].error_kind == MeasureErrorKind::kNone && !p_.keep_artifacts)
        tuner::remove_artifact(builds[i].artifact_path);  // the PTX's launch description too
    }
    return std::move(b.results);
  }

 private:
  /** Measures the pending candidates: rounds of leased (or direct) workers until none is pending, or no
   *  worker could be had, or every worker was lost max_attempts rounds in a row. */
  void drain(Batch& b) {
    auto waiting_since = Clock::now();
    int stalled_rounds = 0;
    while (!b.pending.empty()) {
      std::vector<Leased> workers = acquire(waiting_since);
      if (workers.empty()) {
        give_up(b, "no worker of key '" + p_.key + "' could be had within " +
                       std::to_string(int(p_.wait_for_workers_s)) + " s (tracker " + p_.tracker + ")" +
                       (last_tracker_error_.empty() ? "" : ": " + last_tracker_error_));
        break;
      }
      int64_t before = p_.stats->measured;
      run_round(workers, b);
      // Rounds in which every worker was lost before measuring anything (dead workers that are still
      // listed, or named with --worker) end the batch after max_attempts of them.
      stalled_rounds = p_.stats->measured > before ? 0 : stalled_rounds + 1;
      if (!b.pending.empty() && stalled_rounds >= p_.max_attempts)
        give_up(b, "every worker was lost in " + std::to_string(stalled_rounds) +
                       " rounds in a row without measuring anything; last: " + b.last_lost);
      if (!b.pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      waiting_since = Clock::now();
    }
  }

  /** The pending candidates are worker_lost (a recheck pass keeps their earlier result). */
  void give_up(Batch& b, const std::string& why) {
    for (size_t i : b.pending) settle(b, i, tuner::measure_error(MeasureErrorKind::kWorkerLost, why));
    b.pending.clear();
  }

  /** Candidate i's answer (or final failure): kept, or folded into its result on a recheck pass; handed
   *  over at once unless it waits for rechecks. Under b.mu where sending threads run. */
  void settle(Batch& b, size_t i, MeasureResult r) {
    r.build_s = b.build_s[i];
    if (b.rechecking) {
      tuner::merge_recheck(b.results[i], r, b.opt);
      tuner::note_best(b.results[i], &b.best);
      return;
    }
    b.results[i] = std::move(r);
    tuner::note_best(b.results[i], &b.best);
    if (tuner::wants_recheck(b.results[i], b.opt, b.best))
      b.waiting[i] = 1;
    else if (on_result_)
      on_result_(i, b.results[i]);
  }

  /** Passes build errors through; otherwise makes the job and queues it. */
  void prepare(size_t i, const tuner::MeasureInput& in, const tuner::BuildResult* build, Batch& b) {
    auto& r = b.results[i];
    if (!build) {
      r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "no build result for this candidate");
    } else if (build->error_kind != MeasureErrorKind::kNone) {
      r = tuner::measure_error(build->error_kind, build->error_message);
    } else if (!in.workload) {
      r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "the measure input has no workload");
    } else {
      const tuner::BuildResult& ref = refs_.get(*in.workload);
      if (ref.error_kind != MeasureErrorKind::kNone) {
        r = tuner::measure_error(MeasureErrorKind::kWorkerLost, ref.error_message);
        return;
      }
      Job& j = b.jobs[i];
      if (!read_bytes(build->artifact_path, &j.artifact) || j.artifact.empty()) {
        r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "cannot read the artifact " + build->artifact_path);
        return;
      }
      tuner::WorkerRequest req;
      try {
        req = tuner::make_measure_request(*in.workload, *build, ref, b.opt, b.best);
      } catch (const std::exception& e) {
        r = tuner::measure_error(MeasureErrorKind::kWorkerLost, e.what());
        return;
      }
      if (req.artifact_kind == "ptx") {  // the sidecar PATH.json travels inside the request as "launch"
        std::string side, side_path = fs::path(build->artifact_path).replace_extension(".json").string();
        try {
          if (!read_bytes(side_path, &side)) throw std::runtime_error("cannot read it");
          req.launch = nlohmann::json::parse(side);
        } catch (const std::exception& e) {
          r = tuner::measure_error(MeasureErrorKind::kCompileError,
                                   "the launch description " + side_path + ": " + e.what());
          return;
        }
        j.kind = "ptx";
      }
      j.request_json = req.to_json().dump();
      j.key = in.workload->key;
      j.ref_path = ref.artifact_path;
      if (req.ref_artifact_kind == "ptx") j.ref_kind = "ptx";  // its launch is inside the request
      b.pending.push_back(i);
    }
  }

  /** Workers for one round: leased from the tracker (waiting in its queue), or the direct ones. */
  std::vector<Leased> acquire(Clock::time_point since) {
    std::vector<Leased> out;
    if (!tracker_) {
      for (auto& a : p_.workers) out.push_back({"", a, a});
      return out;
    }
    for (;;) {
      double left = p_.wait_for_workers_s - seconds_since(since);
      if (left <= 0) return out;
      proto::LeaseRequest req;
      req.set_key(p_.key);
      req.set_priority(p_.priority);
      req.set_max_workers(p_.max_workers);
      req.set_wait_s(std::min(left, 10.0));
      req.set_client("tessel tune " + std::to_string(getpid()));
      proto::LeaseReply reply;
      auto ctx = client_context(p_.security, std::min(left, 10.0) + 5);
      grpc::Status st = tracker_->RequestWorkers(ctx.get(), req, &reply);
      if (st.ok()) {
        lease_s_ = reply.lease_seconds() > 0 ? reply.lease_seconds() : 30;
        for (auto& l : reply.leases()) out.push_back({l.lease_id(), l.worker_id(), l.address()});
        if (!out.empty()) return out;
      } else {
        TESSEL_LOG(1) << "rpc runner: tracker " << p_.tracker << ": " << st.error_message() << " (retrying)\n";
        if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
            st.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
          last_tracker_error_ = st.error_message();
          return out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        // A fresh channel: the old one may sit in reconnect backoff after a tracker restart.
        tracker_ = proto::Tracker::NewStub(make_channel(p_.tracker, p_.security, p_.max_message_mb));
      }
    }
  }

  /** One sending thread per worker until the batch is done or every worker was lost; then releases. */
  void run_round(const std::vector<Leased>& workers, Batch& b) {
    std::atomic<bool> done{false};
    std::thread renew;
    if (tracker_) {
      renew = std::thread([&] {
        auto next = Clock::now();
        while (!done) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          if (Clock::now() < next) continue;
          next = Clock::now() + std::chrono::milliseconds(int64_t(std::max(0.2, lease_s_ / 3) * 1000));
          proto::RenewRequest req;
          for (auto& w : workers) req.add_lease_ids(w.lease_id);
          proto::RenewReply reply;
          auto ctx = client_context(p_.security, 3);
          tracker_->Renew(ctx.get(), req, &reply);  // a failure (tracker restarting) changes nothing here
        }
      });
    }
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&, w] { serve(w, b); });
    for (auto& t : threads) t.join();
    done = true;
    if (renew.joinable()) renew.join();
    if (tracker_) {
      proto::ReleaseRequest req;
      for (auto& w : workers) req.add_lease_ids(w.lease_id);
      for (auto& id : b.lost_ids) req.add_lost_worker_ids(id);
      b.lost_ids.clear();
      proto::ReleaseReply reply;
      auto ctx = client_context(p_.security, 3);
      tracker_->Release(ctx.get(), req, &reply);  // expired leases free the workers anyway
    }
  }

  void serve(const Leased& w, Batch& b) {
    auto stub = proto::Worker::NewStub(channel(w.address));
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lk(b.mu);
        b.cv.wait(lk, [&] { return !b.pending.empty() || b.in_flight == 0; });
        if (b.pending.empty()) return;
        i = b.pending.front();
        b.pending.pop_front();
        ++b.in_flight;
      }
      auto t0 = Clock::now();
      MeasureResult r;
      std::string lost = send(*stub, w.address, b.jobs[i], b.opt, &r);
      r.run_s = seconds_since(t0);
      std::lock_guard<std::mutex> lk(b.mu);
      --b.in_flight;
      b.cv.notify_all();
      if (lost.empty()) {
        ++p_.stats->measured;
        if (b.rechecking) ++p_.stats->rechecks;
        settle(b, i, std::move(r));
        continue;
      }
      ++p_.stats->workers_lost;
      b.lost_ids.push_back(w.worker_id);
      b.last_lost = lost;
      if (++b.attempts[i] >= p_.max_attempts) {
        settle(b, i,
               tuner::measure_error(MeasureErrorKind::kWorkerLost, "sent " + std::to_string(b.attempts[i]) +
                                                                       " times, the worker was lost each time; last: " +
                                                                       lost));
      } else {
        ++p_.stats->retried;
        b.pending.push_front(i);
      }
      TESSEL_LOG(1) << "rpc runner: " << lost << "\n";
      return;  // this worker is done for this batch
    }
  }

  /** Measures job on a worker into *r; returns "" or why the worker counts as lost. */
  std::string send(proto::Worker::Stub& stub, const std::string& address, const Job& job,
                   const tuner::MeasureOptions& opt, MeasureResult* r) {
    std::string ref_id = address + "\n" + job.key;
    bool with_ref;
    {
      std::lock_guard<std::mutex> lk(mu_);
      with_ref = !sent_refs_.count(ref_id);
    }
    proto::MeasureRequest m;
    m.set_request_json(job.request_json);
    m.mutable_artifact()->set_kind(job.kind);
    m.mutable_artifact()->set_data(job.artifact);
    for (int round = 0; round < 2; ++round) {
      if (with_ref) {
        std::string bytes;
        if (!read_bytes(job.ref_path, &bytes)) {
          *r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "cannot read the reference " + job.ref_path);
          return "";
        }
        m.mutable_reference()->set_kind(job.ref_kind);
        m.mutable_reference()->set_data(std::move(bytes));
      }
      double timeout = 2 * opt.run_timeout_s + p_.call_slack_s;
      auto ctx = client_context(p_.security, timeout);
      proto::MeasureReply reply;
      grpc::Status st = stub.Measure(ctx.get(), m, &reply);
      if (!st.ok()) {
        if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {  // too large: no worker takes it
          *r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "worker " + address + ": " + st.error_message());
          return "";
        }
        forget_refs(address);
        return "worker " + address + ": " + st.error_message() + " (gRPC status " +
               std::to_string(int(st.error_code())) + ")";
      }
      if (reply.need_reference() && !with_ref) {
        with_ref = true;
        continue;
      }
      tuner::WorkerResponse resp;
      try {
        resp = tuner::WorkerResponse::from_json(nlohmann::json::parse(reply.response_json()));
      } catch (const std::exception& e) {
        *r = tuner::measure_error(MeasureErrorKind::kWorkerLost,
                                  "worker " + address + " sent a malformed response: " + e.what());
        return "";
      }
      *r = tuner::measure_result_from(resp);
      if (resp.protocol_error) r->error_message = "worker " + address + " refused the request: " + resp.message;
      if (with_ref && !resp.protocol_error) {
        std::lock_guard<std::mutex> lk(mu_);
        sent_refs_.insert(ref_id);
      }
      return "";
    }
    *r = tuner::measure_error(MeasureErrorKind::kWorkerLost, "worker " + address + " keeps asking for the reference");
    return "";
  }

  std::shared_ptr<grpc::Channel> channel(const std::string& address) {
    std::lock_guard<std::mutex> lk(mu_);
    auto& c = channels_[address];
    if (!c) c = make_channel(address, p_.security, p_.max_message_mb);
    return c;
  }

  /** A worker that failed may come back without our references (a restart). */
  void forget_refs(const std::string& address) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = sent_refs_.begin(); it != sent_refs_.end();)
      it = it->rfind(address + "\n", 0) == 0 ? sent_refs_.erase(it) : std::next(it);
  }

  RpcRunnerParams p_;
  std::mutex run_mu_, mu_;
  tuner::ReferenceBuilds refs_;
  std::unique_ptr<proto::Tracker::Stub> tracker_;
  double lease_s_ = 30;
  std::string last_tracker_error_;
  std::set<std::string> sent_refs_;  // "address\nworkload key": the worker has this reference
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

}  // namespace

std::unique_ptr<tuner::Runner> make_rpc_runner(const RpcRunnerParams& p) {
  TESSEL_CHECK(!p.tracker.empty() || !p.workers.empty()) << "the RPC runner needs --tracker or --worker";
  p.security.validate();
  return std::make_unique<RpcRunner>(p);
}

}  // namespace tessel::rpc
