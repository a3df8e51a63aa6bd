// The worker's GPU path where no GPU is needed: the launch description of PTX candidates, the protocol's
// GPU fields, and (on a machine without a CUDA driver) the clear "no CUDA driver" answer after which the
// worker keeps serving. On a machine with a GPU those last checks are skipped: tessel-gpu-selftest
// covers the path there.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "cuda_driver.h"
#include "gpu_kernel_desc.h"
#include "measure_worker.h"

using namespace tessel::tuner;
using gpu::GpuKernelDesc;
using nlohmann::json;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/tessel-gpu-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  return tmpl;
}

WorkerRequest ptx_request(int64_t id, const std::string& ptx) {
  WorkerRequest r;
  r.id = id;
  r.op = "measure";
  r.artifact = ptx;
  r.artifact_kind = "ptx";
  r.function = "vecadd";
  r.launch = {{"kind", "ptx"}, {"entry", "vecadd"}, {"grid", {4}}, {"block", {256}}, {"args", {"A", "B", "C"}}};
  r.ref_artifact = TESSEL_BAD_KERNELS;
  r.ref_function = "good_packed";
  r.ref_key = "matmul64";
  r.args = {{"A", {64, 64}, "float32", false}, {"B", {64, 64}, "float32", false}, {"C", {64, 64}, "float32", true}};
  r.options = {{"seed", 3}, {"min_time_s", 0.0}};
  return r;
}

}  // namespace

TEST_CASE("gpu: a kernel description with one kernel", "[tuner][gpu]") {
  json j = json::parse(
      R"({"kind":"ptx","entry":"k0","grid":[32,4],"block":[128,2,1],"shared_bytes":4096,"args":["A","B","C"]})");
  GpuKernelDesc d = GpuKernelDesc::from_json(j);
  REQUIRE(d.kernels.size() == 1);
  CHECK(d.kernels[0].entry == "k0");
  CHECK(d.kernels[0].grid == std::array<uint32_t, 3>{32, 4, 1});
  CHECK(d.kernels[0].block == std::array<uint32_t, 3>{128, 2, 1});
  CHECK(d.kernels[0].shared_bytes == 4096);
  CHECK(d.args == std::vector<std::string>{"A", "B", "C"});
  GpuKernelDesc back = GpuKernelDesc::from_json(d.to_json());
  CHECK(back.to_json() == d.to_json());
  // Without "entry" the request's function names the kernel; without "shared_bytes" it is 0.
  GpuKernelDesc e = GpuKernelDesc::from_json(json::parse(R"({"grid":[1],"block":[64]})"), "fallback");
  CHECK(e.kernels[0].entry == "fallback");
  CHECK(e.kernels[0].shared_bytes == 0);
  CHECK(e.args.empty());
}

TEST_CASE("gpu: a kernel description with several kernels launched in order", "[tuner][gpu]") {
  json j = json::parse(R"({"kind":"ptx","entry":"first","grid":[8],"block":[256],"shared_bytes":0,"args":["X","Y"],
    "kernels":[{"entry":"first","grid":[8],"block":[256]},{"entry":"second","grid":[1,2,3],"block":[32,32],"shared_bytes":65536}]})");
  GpuKernelDesc d = GpuKernelDesc::from_json(j);
  REQUIRE(d.kernels.size() == 2);
  CHECK(d.kernels[1].entry == "second");
  CHECK(d.kernels[1].grid == std::array<uint32_t, 3>{1, 2, 3});
  CHECK(d.kernels[1].shared_bytes == 65536);
  CHECK(GpuKernelDesc::from_json(d.to_json()).kernels.size() == 2);
}

TEST_CASE("gpu: malformed kernel descriptions name the field", "[tuner][gpu]") {
  struct Case {
    std::string text, expect;
  };
  std::vector<Case> cases = {
      {R"([1,2])", "must be a JSON object"},
      {R"({"kind":"cubin","entry":"k","grid":[1],"block":[1]})", "'kind' must be \"ptx\""},
      {R"({"entry":"k","block":[1]})", "missing field 'grid'"},
      {R"({"entry":"k","grid":[0],"block":[1]})", "'grid' must hold positive integers"},
      {R"({"entry":"k","grid":[1,1,1,1],"block":[1]})", "1 to 3 positive integers"},
      {R"({"entry":"k","grid":[1],"block":[1],"shared_bytes":-1})", "'shared_bytes' must be a non-negative"},
      {R"({"grid":[1],"block":[1]})", "missing field 'entry'"},
      {R"({"entry":"k","grid":[1],"block":[1],"args":["A",3]})", "'args' must hold non-empty strings"},
      {R"({"kernels":[],"grid":[1],"block":[1]})", "'kernels' must be a non-empty array"},
      {R"({"kernels":[{"entry":"a","grid":[1],"block":[1]},{"grid":[1],"block":[1]}]})",
       "kernels[1]: missing field 'entry'"},
  };
  for (auto& c : cases) {
    INFO(c.text);
    CHECK_THROWS_WITH(GpuKernelDesc::from_json(json::parse(c.text)), Catch::Contains(c.expect));
  }
}

TEST_CASE("gpu: the description beside a PTX file", "[tuner][gpu]") {
  CHECK(GpuKernelDesc::sidecar_path("/a/cand_7.ptx") == "/a/cand_7.json");
  CHECK(GpuKernelDesc::sidecar_path("/a/cand_7") == "/a/cand_7.json");
  std::string dir = temp_dir();
  CHECK_THROWS_WITH(GpuKernelDesc::load_sidecar(dir + "/missing.ptx"), Catch::Contains("cannot read"));
  std::ofstream(dir + "/k.json")
      << R"({"kind":"ptx","entry":"kern","grid":[2],"block":[64],"shared_bytes":0,"args":["A"]})";
  GpuKernelDesc d = GpuKernelDesc::load_sidecar(dir + "/k.ptx");
  CHECK(d.kernels.at(0).entry == "kern");
  std::ofstream(dir + "/bad.json") << "{not json";
  CHECK_THROWS_WITH(GpuKernelDesc::load_sidecar(dir + "/bad.ptx"), Catch::Contains("not valid JSON"));
}

TEST_CASE("gpu: the protocol's GPU fields round-trip and stay optional", "[tuner][gpu][worker]") {
  WorkerRequest r = ptx_request(5, "/x/cand.ptx");
  r.device = 1;
  r.ref_artifact_kind = "ptx";
  r.ref_launch = {{"entry", "ref"}, {"grid", {1}}, {"block", {1}}};
  json j = r.to_json();
  CHECK(j["artifact_kind"] == "ptx");
  CHECK(j["reference"]["artifact_kind"] == "ptx");
  CHECK(j["device"] == 1);
  WorkerRequest back = WorkerRequest::from_json(json::parse(j.dump()));
  CHECK(back.to_json() == j);
  CHECK(back.launch["entry"] == "vecadd");
  // A CPU request carries none of the new fields, so an older worker reads it unchanged.
  WorkerRequest cpu = ptx_request(6, "/x/cand.so");
  cpu.artifact_kind = "shared_library";
  cpu.launch = nullptr;
  json c = cpu.to_json();
  CHECK_FALSE(c.contains("artifact_kind"));
  CHECK_FALSE(c.contains("launch"));
  CHECK_FALSE(c.contains("device"));
  CHECK_FALSE(c["reference"].contains("artifact_kind"));
  CHECK(WorkerRequest::from_json(c).artifact_kind == "shared_library");
  json bad = j;
  bad["artifact_kind"] = "cubin";
  CHECK_THROWS_WITH(WorkerRequest::from_json(bad), Catch::Contains("'artifact_kind' must be"));
  bad = j;
  bad["device"] = -1;
  CHECK_THROWS_WITH(WorkerRequest::from_json(bad), Catch::Contains("'device' must be a non-negative"));
}

TEST_CASE("gpu: without a CUDA driver a PTX request fails clearly and the worker keeps serving",
          "[tuner][gpu][worker]") {
  std::string why;
  if (gpu::cuda_available(&why)) {
    WARN("a CUDA driver is present; tessel-gpu-selftest checks the GPU path here");
    return;
  }
  CHECK_THAT(why, Catch::Contains("libcuda.so.1") || Catch::Contains("without CUDA"));
  std::string dir = temp_dir();
  std::ofstream(dir + "/k.ptx") << ".version 8.0\n.target sm_90\n.address_size 64\n";

  SECTION("in process") {
    MeasureWorker w;
    WorkerResponse r = w.handle(ptx_request(1, dir + "/k.ptx"));
    CHECK(r.error_kind == "worker_lost");
    CHECK_THAT(r.message,
               Catch::Contains("no CUDA driver (libcuda.so.1) on this machine") || Catch::Contains("without CUDA"));
    CHECK_FALSE(r.fatal);
    CHECK(r.times.empty());
    // The CPU path still works in the same worker.
    WorkerRequest cpu = ptx_request(2, TESSEL_BAD_KERNELS);
    cpu.artifact_kind = "shared_library";
    cpu.function = "good_packed";
    cpu.launch = nullptr;
    WorkerResponse ok = w.handle(cpu);
    CHECK(ok.error_kind == "none");
    CHECK_FALSE(ok.times.empty());
  }
  SECTION("the tessel-worker process") {
    std::string in = dir + "/req.jsonl", out = dir + "/resp.jsonl";
    {
      std::ofstream f(in);
      f << ptx_request(1, dir + "/k.ptx").to_json().dump() << "\n"
        << R"({"version":1,"id":2,"op":"ping"})"
        << "\n";
    }
    std::string cmd = std::string(TESSEL_WORKER_BINARY) + " --stdio < " + in + " > " + out;
    int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::ifstream f(out);
    std::string l1, l2;
    REQUIRE(std::getline(f, l1));
    REQUIRE(std::getline(f, l2));
    WorkerResponse r1 = WorkerResponse::from_json(json::parse(l1)), r2 = WorkerResponse::from_json(json::parse(l2));
    CHECK(r1.id == 1);
    CHECK(r1.error_kind == "worker_lost");
    CHECK_THAT(r1.message, Catch::Contains("libcuda.so.1") || Catch::Contains("without CUDA"));
    CHECK(r2.id == 2);
    CHECK(r2.message == "pong");
  }
}
