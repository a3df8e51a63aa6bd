// The measurement worker in-process (no LLVM): protocol robustness and the measurement outcomes of
// hand-made kernels (tests/tuner/bad_kernels.c). Crashing kernels are tested through the real worker
// process in test_measure_local.cpp.
#include <catch2/catch.hpp>

#include "measure_worker.h"

using namespace tessel::tuner;
using nlohmann::json;

namespace {

WorkerRequest matmul_request(int64_t id, const std::string& function, const std::string& ref_function = "good_packed") {
  WorkerRequest r;
  r.id = id;
  r.op = "measure";
  r.artifact = TESSEL_BAD_KERNELS;
  r.function = function;
  r.ref_artifact = TESSEL_BAD_KERNELS;
  r.ref_function = ref_function;
  r.ref_key = "matmul64";
  r.args = {{"A", {64, 64}, "float32", false}, {"B", {64, 64}, "float32", false}, {"C", {64, 64}, "float32", true}};
  r.options = {{"warmup", 1}, {"min_repeats", 3}, {"min_time_s", 0.0}, {"seed", 7}};
  return r;
}

WorkerResponse via_json(MeasureWorker& w, const WorkerRequest& r) { return w.handle_line(r.to_json().dump()); }

}  // namespace

TEST_CASE("worker: malformed requests give protocol errors and the worker keeps serving", "[tuner][worker]") {
  MeasureWorker w;
  struct Case {
    std::string line, expect;
  };
  std::vector<Case> cases = {
      {"garbage", "not valid JSON"},
      {"[1,2,3]", "must be a JSON object"},
      {R"({"id":1,"op":"ping"})", "missing field 'version'"},
      {R"({"version":1,"id":2,"op":"frobnicate"})", "unknown op 'frobnicate'"},
      {R"({"version":2,"id":3,"op":"ping"})", "newer than this worker's protocol version 1"},
      {R"({"version":1,"id":4,"op":"measure"})", "missing field 'artifact'"},
      {R"({"version":1,"id":5,"op":"measure","artifact":"a.so","function":"f","reference":{"artifact":"r.so","function":"g","key":"k"},"args":[{"shape":[2],"dtype":"float99"}]})",
       "float99"},
      {R"({"version":1,"id":6,"op":"measure","artifact":"a.so","function":"f","reference":{"artifact":"r.so","function":"g","key":"k"},"args":[{"shape":[-2],"dtype":"float32"}]})",
       "non-negative"},
  };
  for (auto& c : cases) {
    INFO(c.line);
    WorkerResponse r = w.handle_line(c.line);
    CHECK(r.protocol_error);
    CHECK(r.error_kind == "worker_lost");
    CHECK_THAT(r.message, Catch::Contains(c.expect));
    WorkerResponse again = WorkerResponse::from_json(json::parse(r.to_json().dump()));
    CHECK(again.message == r.message);
  }
  CHECK(w.handle_line(R"({"version":2,"id":3,"op":"ping"})").id == 3);  // the id is echoed when readable
  WorkerResponse pong = w.handle_line(R"({"version":1,"id":9,"op":"ping"})");
  CHECK(pong.error_kind == "none");
  CHECK(pong.id == 9);
  CHECK(pong.message == "pong");
  CHECK_FALSE(w.exit_requested());
  CHECK(w.handle_line(R"({"version":1,"id":10,"op":"exit"})").error_kind == "none");
  CHECK(w.exit_requested());
}

TEST_CASE("worker: request and response JSON round trip", "[tuner][worker]") {
  WorkerRequest r = matmul_request(42, "good_packed");
  r.best_so_far_s = 0.25;
  WorkerRequest back = WorkerRequest::from_json(json::parse(r.to_json().dump()));
  CHECK(back.to_json() == r.to_json());
  CHECK(back.args[2].output);
  CHECK(back.args[1].shape == std::vector<int64_t>{64, 64});
  WorkerTiming t = WorkerTiming::from_json(r.options);
  CHECK(t.seed == 7);
  CHECK(t.min_repeats == 3);
  CHECK_THROWS_AS(WorkerTiming::from_json(json{{"min_repeats", 0}}), std::invalid_argument);
  CHECK_THROWS_AS(WorkerTiming::from_json(json{{"flush_cache", 1}}), std::invalid_argument);
}

TEST_CASE("worker: outcomes of good / wrong / unwritten / failing kernels", "[tuner][worker]") {
  MeasureWorker w;
  WorkerResponse good = via_json(w, matmul_request(1, "good_packed"));
  CHECK(good.error_kind == "none");
  CHECK(good.message == "");
  REQUIRE(good.times.size() >= 3);
  for (double t : good.times) CHECK(t > 0);

  WorkerResponse wrong = via_json(w, matmul_request(2, "wrong_packed"));
  CHECK(wrong.error_kind == "wrong_answer");
  CHECK_THAT(wrong.message, Catch::Contains("output C[5, 7]") && Catch::Contains("1 of 4096 elements differ"));
  CHECK(wrong.times.empty());

  WorkerResponse nowrite = via_json(w, matmul_request(3, "nowrite_packed"));
  CHECK(nowrite.error_kind == "wrong_answer");
  CHECK_THAT(nowrite.message,
             Catch::Contains("output C[0, 0] = ") && Catch::Contains("nan") && Catch::Contains("4096 of 4096"));

  WorkerResponse fail = via_json(w, matmul_request(4, "fail_packed"));
  CHECK(fail.error_kind == "runtime_error");
  CHECK_THAT(fail.message, Catch::Contains("returned status 3"));

  WorkerResponse nosym = via_json(w, matmul_request(5, "no_such_packed"));
  CHECK(nosym.error_kind == "runtime_error");
  CHECK_THAT(nosym.message, Catch::Contains("no symbol 'no_such_packed'"));

  WorkerRequest missing = matmul_request(6, "good_packed");
  missing.artifact = "/nonexistent/cand.so";
  WorkerResponse nofile = via_json(w, missing);
  CHECK(nofile.error_kind == "runtime_error");
  CHECK_THAT(nofile.message, Catch::Contains("cannot load the candidate '/nonexistent/cand.so'"));

  // A reference that cannot be loaded is not the candidate's fault.
  WorkerRequest badref = matmul_request(7, "good_packed");
  badref.ref_key = "other";
  badref.ref_artifact = "/nonexistent/ref.so";
  WorkerResponse noref = via_json(w, badref);
  CHECK(noref.error_kind == "worker_lost");
  CHECK_THAT(noref.message, Catch::Contains("cannot load the reference"));

  // The reference of a key is computed once: a (wrong) "reference" under a cached key is not rerun.
  WorkerResponse cached = via_json(w, matmul_request(8, "good_packed", "wrong_packed"));
  CHECK(cached.error_kind == "none");
  // A different seed draws different inputs, so the (wrong) reference is run and the good one differs.
  WorkerRequest seeded = matmul_request(9, "good_packed", "wrong_packed");
  seeded.options["seed"] = 8;
  CHECK(via_json(w, seeded).error_kind == "wrong_answer");
}

TEST_CASE("worker: early abort / repeats / cache flush", "[tuner][worker]") {
  MeasureWorker w;
  WorkerRequest slow = matmul_request(1, "slow_packed");
  slow.best_so_far_s = 1e-9;  // any real run is more than 5x slower
  WorkerResponse r = via_json(w, slow);
  CHECK(r.error_kind == "early_aborted");
  REQUIRE(r.times.size() == 1);
  CHECK(r.times[0] > 5e-9);
  CHECK_THAT(r.message, Catch::Contains("best so far"));

  slow.best_so_far_s = 0;  // no best yet: no abort
  slow.options["min_repeats"] = 5;
  r = via_json(w, slow);
  CHECK(r.error_kind == "none");
  CHECK(r.times.size() == 5);

  WorkerRequest flushed = matmul_request(2, "good_packed");
  flushed.options["flush_cache"] = true;
  flushed.options["max_repeats"] = 4;
  flushed.options["min_repeats"] = 4;
  flushed.options["threads"] = 2;
  r = via_json(w, flushed);
  CHECK(r.error_kind == "none");
  CHECK(r.times.size() == 4);
}
