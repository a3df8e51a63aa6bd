// The RPC servers' request handling: the tracker's queue (priorities, then arrival) and lease expiry
// in-process; malformed and hostile requests fuzzed for a bounded time, both as direct calls of the
// handlers and as raw bytes through real gRPC (the servers stay up and answer errors); mutual TLS with a
// CA made by openssl in the test.
#include <grpcpp/generic/generic_stub.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <future>
#include <random>
#include <thread>

#include "rpc_internal.h"
#include "rpc_test_util.h"
#include "tessel/rpc/rpc_runner.h"

using namespace tessel;
using namespace tessel::rpc;
using rpctest::Server;

namespace {

proto::RegisterRequest reg(const std::string& id, const std::string& key) {
  proto::RegisterRequest r;
  r.set_key(key);
  r.set_address("127.0.0.1:" + std::to_string(1000 + id.size()) + id);
  r.set_worker_id(id);
  return r;
}

proto::LeaseRequest lease(const std::string& key, int priority, double wait_s) {
  proto::LeaseRequest r;
  r.set_key(key);
  r.set_priority(priority);
  r.set_wait_s(wait_s);
  return r;
}

std::string random_bytes(std::mt19937_64& rng, size_t max_len) {
  std::string s(std::uniform_int_distribution<size_t>(0, max_len)(rng), '\0');
  for (auto& c : s) c = char(rng());
  return s;
}

/** A measure request of the 64x64 matmul in bad_kernels (good_packed, also its reference). */
tuner::WorkerRequest good_request() {
  tuner::WorkerRequest r;
  r.op = "measure";
  r.function = "good_packed";
  r.ref_function = "good_packed";
  r.ref_key = "matmul64";
  for (const char* name : {"A", "B", "C"}) r.args.push_back({name, {64, 64}, "float32", std::string(name) == "C"});
  r.options = {{"min_time_s", 0}, {"run_timeout_s", 5}, {"memory_limit_mb", 1024}};
  return r;
}
/** A valid measure request JSON, then mutated: bytes flipped, cut, or fields replaced by odd values. */
std::string mutated_request(std::mt19937_64& rng) {
  nlohmann::json j = {{"version", 1},
                      {"id", 7},
                      {"op", "measure"},
                      {"artifact", "/x.so"},
                      {"function", "good_packed"},
                      {"reference", {{"artifact", "/r.so"}, {"function", "good_packed"}, {"key", "k"}}},
                      {"args", {{{"name", "A"}, {"shape", {64, 64}}, {"dtype", "float32"}, {"output", false}}}},
                      {"options", {{"run_timeout_s", 1}, {"memory_limit_mb", 512}, {"min_time_s", 0}}},
                      {"best_so_far_s", 0}};
  const std::vector<nlohmann::json> odd = {
      nullptr, -1, 1e308, "x", nlohmann::json::array(), nlohmann::json::object(), true, std::string(300, 'a'), 99};
  const char* fields[] = {"version", "id", "op", "function", "reference", "args", "options", "best_so_far_s"};
  std::string s;
  switch (rng() % 4) {
    case 0:
      j[fields[rng() % 8]] = odd[rng() % odd.size()];
      s = j.dump();
      break;
    case 1:
      j["args"][0]["shape"] = {int64_t(rng() % 3) - 1, int64_t(rng())};
      j["args"][0]["dtype"] = rng() % 2 ? "float32" : "complex512";
      s = j.dump();
      break;
    case 2:
      s = j.dump();
      s = s.substr(0, rng() % s.size());
      break;
    default:
      s = j.dump();
      for (int k = 0; k < 4; ++k) s[rng() % s.size()] = char(rng());
  }
  return s;
}

}  // namespace

TEST_CASE("tracker: a queue per key (higher priority first, then first come) and lease expiry", "[rpc][tracker]") {
  TrackerParams tp;
  tp.lease_s = 1;
  TrackerService t(tp);
  proto::RegisterReply rr;
  REQUIRE(t.do_register(reg("w1", "cpu"), &rr).ok());
  proto::LeaseReply first;
  REQUIRE(t.do_request(lease("cpu", 0, 0), &first).ok());
  REQUIRE(first.leases_size() == 1);
  // Two waiting requests: low priority first in time, high priority second.
  std::vector<std::string> order;
  std::mutex mu;
  auto wait_for = [&](int prio, const char* name) {
    proto::LeaseReply r;
    t.do_request(lease("cpu", prio, 30), &r);
    std::lock_guard<std::mutex> lk(mu);
    order.push_back(name);
    if (r.leases_size() == 1) {  // hand it back so the other one gets it
      proto::ReleaseRequest rel;
      rel.add_lease_ids(r.leases(0).lease_id());
      t.do_release(rel);
    }
  };
  proto::RenewRequest keep;  // renewed while the two requests line up
  keep.add_lease_ids(first.leases(0).lease_id());
  proto::RenewReply kept;
  std::thread low([&] { wait_for(0, "low"); });
  REQUIRE(rpctest::poll_until(
      [&] {
        t.do_renew(keep, &kept);
        proto::StatusReply s;
        t.do_status(&s);
        return s.keys_size() == 1 && s.keys(0).queued() == 1;
      },
      10));
  std::thread high([&] { wait_for(5, "high"); });
  REQUIRE(rpctest::poll_until(
      [&] {
        t.do_renew(keep, &kept);
        proto::StatusReply s;
        t.do_status(&s);
        return s.keys(0).queued() == 2 && s.keys(0).busy() == 1;
      },
      10));
  CHECK(kept.unknown_size() == 0);
  // The first lease is no longer renewed: it expires and the queue moves, high priority first.
  auto t0 = std::chrono::steady_clock::now();
  low.join();
  high.join();
  REQUIRE(order.size() == 2);
  CHECK(order[0] == "high");
  CHECK(order[1] == "low");
  CHECK(std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(500));  // it waited for the expiry
  proto::StatusReply s;
  t.do_status(&s);
  CHECK(s.keys(0).free() == 1);
  CHECK(s.keys(0).queued() == 0);
  // Renewing an unknown lease says so (what a tuner sees after a tracker restart).
  proto::RenewRequest ren;
  ren.add_lease_ids("L999");
  proto::RenewReply renr;
  t.do_renew(ren, &renr);
  CHECK(renr.unknown_size() == 1);
  // Another key's workers are never leased for this key.
  REQUIRE(t.do_register(reg("g1", "gpu"), &rr).ok());
  proto::LeaseReply none;
  proto::LeaseReply all;
  REQUIRE(t.do_request(lease("cpu", 0, 0), &all).ok());
  REQUIRE(t.do_request(lease("cpu", 0, 0.2), &none).ok());
  CHECK(all.leases_size() == 1);
  CHECK(none.leases_size() == 0);
}

TEST_CASE("rpc fuzz: hostile requests to the handlers get errors and the servers keep working", "[rpc][fuzz]") {
  std::mt19937_64 rng(std::random_device{}());
  uint64_t seed = rng();
  INFO("seed " << seed);
  rng.seed(seed);
  std::string dir = rpctest::test_dir("fuzz");
  WorkerParams wp;
  wp.worker_path = TESSEL_WORKER_BINARY;
  WorkerService worker(wp, dir);
  TrackerParams tp;
  TrackerService tracker(tp);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  int n = 0, protocol_errors = 0;
  while (std::chrono::steady_clock::now() < end) {
    ++n;
    proto::MeasureRequest m;
    m.set_request_json(rng() % 8 ? mutated_request(rng) : random_bytes(rng, 200));
    m.mutable_artifact()->set_kind(rng() % 4 ? "so" : random_bytes(rng, 8));
    m.mutable_artifact()->set_data(random_bytes(rng, 4096));
    if (rng() % 2) {
      m.mutable_reference()->set_kind("so");
      m.mutable_reference()->set_data(random_bytes(rng, 4096));
    }
    proto::MeasureReply reply = worker.handle(m);
    auto resp = tuner::WorkerResponse::from_json(nlohmann::json::parse(reply.response_json()));
    CHECK(resp.error_kind != "none");  // random bytes never measure
    protocol_errors += resp.protocol_error;
    // The tracker's handlers, with random keys, ids, priorities and odd waits (never a long one).
    proto::RegisterRequest r;
    r.set_key(random_bytes(rng, 300));
    r.set_address(random_bytes(rng, 300));
    r.set_worker_id(random_bytes(rng, 20));
    proto::RegisterReply rr;
    tracker.do_register(r, &rr);
    proto::LeaseRequest l;
    l.set_key(random_bytes(rng, 3));
    l.set_priority(int(rng()));
    l.set_max_workers(int(rng()));
    const double waits[] = {0, -1, std::nan(""), -1e308, 1e-9};
    l.set_wait_s(waits[rng() % 5]);
    proto::LeaseReply lr;
    tracker.do_request(l, &lr);
    proto::ReleaseRequest rel;
    for (auto& x : lr.leases()) rel.add_lease_ids(rng() % 2 ? x.lease_id() : random_bytes(rng, 5));
    rel.add_lost_worker_ids(random_bytes(rng, 4));
    tracker.do_release(rel);
  }
  CHECK(n > 20);
  CHECK(protocol_errors > 0);
  proto::StatusReply st;
  tracker.do_status(&st);  // still consistent
  // After all that, a good request is measured.
  std::ifstream so(TESSEL_BAD_KERNELS, std::ios::binary);
  std::string lib((std::istreambuf_iterator<char>(so)), {});
  tuner::WorkerRequest good = good_request();
  proto::MeasureRequest m;
  m.set_request_json(good.to_json().dump());
  m.mutable_artifact()->set_kind("so");
  m.mutable_artifact()->set_data(lib);
  auto first = worker.handle(m);
  CHECK(first.need_reference());  // a new reference key: the worker asks for it
  *m.mutable_reference() = m.artifact();
  auto resp = tuner::WorkerResponse::from_json(nlohmann::json::parse(worker.handle(m).response_json()));
  INFO(resp.message);
  CHECK(resp.error_kind == "none");
  CHECK(resp.times.size() >= 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("rpc fuzz: random bytes through gRPC to a real worker and tracker", "[rpc][fuzz]") {
  std::string dir = rpctest::test_dir("fuzz_grpc");
  Security sec;
  sec.token = "fuzz-token";
  std::ofstream(dir + "/token") << sec.token;
  Server tracker({TESSEL_BIN, "tracker", "--listen", "127.0.0.1:0", "--token-file", dir + "/token"}, dir, "tracker");
  REQUIRE(tracker.start());
  Server worker({TESSEL_RPC_WORKER_BINARY, "--tracker", tracker.address(), "--key", "cpu", "--listen", "127.0.0.1:0",
                 "--token-file", dir + "/token", "--max-message-mb", "1"},
                dir, "worker");
  REQUIRE(worker.start());
  std::mt19937_64 rng(std::random_device{}());
  uint64_t seed = rng();
  INFO("seed " << seed);
  rng.seed(seed);
  const char* methods[] = {"/tessel.rpc.proto.Worker/Measure",     "/tessel.rpc.proto.Worker/Info",
                           "/tessel.rpc.proto.Tracker/Register",   "/tessel.rpc.proto.Tracker/RequestWorkers",
                           "/tessel.rpc.proto.Tracker/Release",    "/tessel.rpc.proto.Tracker/Status",
                           "/tessel.rpc.proto.Worker/NoSuchMethod"};
  auto wch = make_channel(worker.address(), sec, 8), tch = make_channel(tracker.address(), sec, 8);
  grpc::GenericStub wstub(wch), tstub(tch);
  int refused_big = 0, calls = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < end) {
    bool big = calls % 8 == 0;  // every 8th call: a Measure over the worker's 1 MiB limit
    std::string method = big ? methods[0] : methods[rng() % 7];
    bool to_worker = method.find("Worker") != std::string::npos;
    std::string bytes = random_bytes(rng, big ? (2 << 20) : 512);
    if (big) bytes.resize(2 << 20);  // over the worker's 1 MiB limit
    grpc::Slice slice(bytes);
    grpc::ByteBuffer req(&slice, 1), resp;
    auto ctx = client_context(rng() % 8 ? sec : Security(), 2);
    std::promise<grpc::Status> done;
    (to_worker ? wstub : tstub).UnaryCall(ctx.get(), method, grpc::StubOptions(), &req, &resp, [&](grpc::Status s) {
      done.set_value(s);
    });
    grpc::Status s = done.get_future().get();
    ++calls;
    if (big && to_worker && s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++refused_big;
  }
  INFO(calls << " calls");
  CHECK(calls > 20);
  CHECK(refused_big == (calls + 7) / 8);  // every oversized message was refused
  CHECK(worker.running());
  CHECK(tracker.running());
  // Both still answer real requests.
  CHECK(rpctest::poll_until([&] { return rpctest::key_status(tracker.address(), sec, "cpu").free == 1; }, 30));
  auto stub = proto::Worker::NewStub(wch);
  auto ctx = client_context(sec, 10);
  proto::InfoReply info;
  CHECK(stub->Info(ctx.get(), proto::InfoRequest(), &info).ok());
  CHECK(info.key() == "cpu");
  worker.stop(SIGKILL);
  tracker.stop(SIGKILL);
  std::filesystem::remove_all(dir);
}

TEST_CASE("rpc: mutual TLS, and a client without a certificate is refused", "[rpc][security][tls]") {
  if (std::system("openssl version > /dev/null 2>&1") != 0) {
    WARN("openssl is not installed (scripts/setup installs it): TLS not tested");
    return;
  }
  std::string dir = rpctest::test_dir("tls");
  std::string gen =
      "cd " + dir +
      " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=tessel-ca "
      "&& printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext "
      "&& for n in server client; do openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr "
      "-subj /CN=$n && openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out $n.pem -days 2 -extfile san.ext || exit 1; done > openssl.log 2>&1";
  REQUIRE(std::system(gen.c_str()) == 0);
  Server tracker({TESSEL_BIN, "tracker", "--listen", "127.0.0.1:0", "--tls-cert", dir + "/server.pem", "--tls-key",
                  dir + "/server.key", "--tls-ca", dir + "/ca.pem"},
                 dir, "tracker");
  REQUIRE(tracker.start());
  Server worker({TESSEL_RPC_WORKER_BINARY, "--tracker", tracker.address(), "--key", "cpu", "--listen", "127.0.0.1:0",
                 "--tls-cert", dir + "/server.pem", "--tls-key", dir + "/server.key", "--tls-ca", dir + "/ca.pem"},
                dir, "worker");
  REQUIRE(worker.start());
  Security client;
  client.tls_cert = dir + "/client.pem";
  client.tls_key = dir + "/client.key";
  client.tls_ca = dir + "/ca.pem";
  INFO(tracker.log() << worker.log());
  CHECK(rpctest::poll_until([&] { return rpctest::key_status(tracker.address(), client, "cpu").free == 1; }, 60));
  // Without TLS, and with TLS but no client certificate: refused.
  CHECK_THROWS(tracker_status(tracker.address(), Security(), 3));
  {
    grpc::SslCredentialsOptions o;
    std::ifstream ca(dir + "/ca.pem");
    o.pem_root_certs.assign(std::istreambuf_iterator<char>(ca), {});
    auto stub = proto::Tracker::NewStub(grpc::CreateChannel(tracker.address(), grpc::SslCredentials(o)));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    proto::StatusReply r;
    CHECK_FALSE(stub->Status(&ctx, proto::StatusRequest(), &r).ok());
  }
  // A tuner with a client certificate measures through tracker and worker.
  RpcRunnerParams p;
  p.tracker = tracker.address();
  p.key = "cpu";
  p.security = client;
  p.work_dir = dir + "/tuner";
  p.keep_artifacts = true;
  auto runner = make_rpc_runner(p);
  tuner::BuildResult b;
  b.artifact_path = TESSEL_BAD_KERNELS;
  b.function_name = "good";
  auto w = std::make_shared<const workload::Workload>(workload::from_spec("matmul:M=64,N=64,K=64"));
  tuner::MeasureOptions opt;
  opt.min_time_s = 0;
  opt.memory_limit_mb = 1024;
  auto r = runner->run({{w, {}}}, {b}, opt, 0);
  REQUIRE(r.size() == 1);
  INFO(r[0].error_message);
  CHECK(r[0].ok());
  worker.stop(SIGKILL);
  tracker.stop(SIGKILL);
  std::filesystem::remove_all(dir);
}

TEST_CASE("rpc worker: a \"ptx\" artifact needs artifact_kind ptx and a launch description, then reaches the GPU path",
          "[rpc][gpu]") {
  std::string dir = rpctest::test_dir("ptx");
  WorkerParams wp;
  wp.worker_path = TESSEL_WORKER_BINARY;
  WorkerService worker(wp, dir);
  std::ifstream so(TESSEL_BAD_KERNELS, std::ios::binary);
  std::string lib((std::istreambuf_iterator<char>(so)), {});
  tuner::WorkerRequest req = good_request();
  proto::MeasureRequest m;
  m.mutable_artifact()->set_kind("ptx");
  m.mutable_artifact()->set_data(".version 8.0\n.target sm_90\nnot ptx at all\n");
  m.mutable_reference()->set_kind("so");
  m.mutable_reference()->set_data(lib);
  auto answer = [&] {
    m.set_request_json(req.to_json().dump());
    return tuner::WorkerResponse::from_json(nlohmann::json::parse(worker.handle(m).response_json()));
  };
  auto r = answer();  // no artifact_kind, no launch
  CHECK(r.protocol_error);
  CHECK_THAT(r.message, Catch::Contains("\"launch\" description"));
  req.artifact_kind = "ptx";
  req.launch = {{"kind", "ptx"}, {"entry", "k"}, {"grid", {1, 1, 1}}, {"block", {64, 1, 1}}, {"args", {"A", "B", "C"}}};
  r = answer();
  INFO(r.message);
  CHECK_FALSE(r.protocol_error);  // the worker's CUDA path answered: no driver here, or the JIT rejects the PTX
  CHECK((r.message.find("no CUDA driver") != std::string::npos || r.error_kind == "compile_error"));

  // A "ptx" reference (a cuda target's) likewise needs its launch description inside "reference".
  m.mutable_reference()->set_kind("ptx");
  m.mutable_reference()->set_data(".version 8.0\n.target sm_90\nnot ptx at all\n");
  r = answer();
  CHECK(r.protocol_error);
  CHECK_THAT(r.message, Catch::Contains("\"ptx\" reference"));
  req.ref_artifact_kind = "ptx";
  req.ref_function = "ref";
  req.ref_launch = {{"kind", "ptx"}, {"entry", "ref"}, {"grid", {1, 1, 1}}, {"block", {64, 1, 1}}, {"args", {"A", "B", "C"}}};
  req.ref_key = "ptx-reference";
  r = answer();
  INFO(r.message);
  CHECK_FALSE(r.protocol_error);  // the reference reached the worker's CUDA path
  CHECK((r.message.find("no CUDA driver") != std::string::npos || r.error_kind == "compile_error" ||
         r.error_kind == "worker_lost"));
  std::filesystem::remove_all(dir);
}
