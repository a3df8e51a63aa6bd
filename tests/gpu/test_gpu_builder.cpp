// The tuner's builder for a cuda target: a candidate that breaks the GPU's rules is rejected with the
// reason (kInvalidSchedule, never launched); a valid one is written as PATH.ptx + PATH.json. The
// reference of a cuda target is PTX too, sent with its launch description in the measure request.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "tessel/tuner/measure.h"
#include "tessel/tuner/runner_util.h"
#include "tessel/workload/workload.h"

using namespace tessel;

namespace {
// B = A + 1 over 2^16 elements, split by `threads` and bound to blocks and threads.
tuner::MeasureInput add_one(int64_t threads) {
  auto w = std::make_shared<workload::Workload>();
  te::Tensor A = te::placeholder({1 << 16}, ir::DataType::float32(), "A");
  te::Tensor B = te::compute({1 << 16}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  w->name = "add_one";
  w->inputs = {A};
  w->outputs = {B};
  schedule::Schedule s({B});
  auto [bo, tx] = s.split("B", "i", threads);
  s.bind("B", bo, "blockIdx.x");
  s.bind("B", tx, "threadIdx.x");
  return tuner::MeasureInput{w, s.trace()};
}
}  // namespace

TEST_CASE("gpu builder: an invalid GPU schedule is rejected with its reason, a valid one gives PTX + sidecar",
          "[gpu][builder]") {
  auto dir = std::filesystem::temp_directory_path() / ("tessel-gpu-builder-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string bad = (dir / "bad.ptx").string(), good = (dir / "good.ptx").string();

  tuner::BuildResult r = tuner::build_candidate(add_one(2048), bad, "kernel", "cuda -arch=sm_90");
  CHECK(r.error_kind == records::MeasureErrorKind::kInvalidSchedule);
  CHECK_THAT(r.error_message, Catch::Contains("invalid GPU schedule") && Catch::Contains("2048 threads"));
  CHECK(r.artifact_path.empty());
  CHECK_FALSE(std::filesystem::exists(bad));

  r = tuner::build_candidate(add_one(256), good, "kernel", "cuda");
  REQUIRE(r.error_kind == records::MeasureErrorKind::kNone);
  CHECK(r.artifact_path == good);
  std::ifstream ptx(good);
  std::string text((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  CHECK(text.find(".target sm_90") != std::string::npos);
  auto side = nlohmann::json::parse(std::ifstream(dir / "good.json"));
  CHECK(side["kind"] == "ptx");
  CHECK(side["grid"][0] == 256);
  CHECK(side["block"][0] == 256);

  std::filesystem::remove_all(dir);
}

TEST_CASE("gpu reference: for a cuda target the reference is PTX and the measure request carries its launch",
          "[gpu][builder][measure]") {
  auto dir = std::filesystem::temp_directory_path() / ("tessel-gpu-reference-" + std::to_string(::getpid()));
  auto w = std::make_shared<workload::Workload>(workload::from_spec("matmul:M=64,N=64,K=64"));
  tuner::BuildResult cand;  // the request does not read the candidate's files
  cand.artifact_path = (dir / "cand.ptx").string();
  cand.function_name = "kernel";
  tuner::MeasureOptions opt;
  {
    tuner::ReferenceBuilds refs(dir.string(), "cuda -arch=sm_90");
    const tuner::BuildResult& ref = refs.get(*w);
    INFO(ref.error_message);
    REQUIRE(ref.error_kind == records::MeasureErrorKind::kNone);
    CHECK(std::filesystem::path(ref.artifact_path).extension() == ".ptx");
    auto side_path = std::filesystem::path(ref.artifact_path).replace_extension(".json");
    REQUIRE(std::filesystem::exists(ref.artifact_path));
    REQUIRE(std::filesystem::exists(side_path));
    CHECK(&refs.get(*w) == &ref);  // built once per workload

    tuner::WorkerRequest req = tuner::make_measure_request(*w, cand, ref, opt, 0);
    CHECK(req.artifact_kind == "ptx");
    CHECK(req.ref_artifact == ref.artifact_path);
    CHECK(req.ref_artifact_kind == "ptx");
    CHECK(req.ref_function == "reference");  // a kernel entry, not a packed CPU function
    CHECK(req.ref_launch == nlohmann::json::parse(std::ifstream(side_path)));
    CHECK(req.ref_launch["kind"] == "ptx");
    CHECK(req.ref_launch["grid"].size() == 3);
    // The request survives the protocol's JSON (what a worker and an RPC worker read).
    auto j = req.to_json();
    CHECK(j["reference"]["artifact_kind"] == "ptx");
    auto back = tuner::WorkerRequest::from_json(j);
    CHECK(back.ref_artifact_kind == "ptx");
    CHECK(back.ref_launch == req.ref_launch);
  }
  CHECK(std::filesystem::is_empty(dir));  // the PTX and its launch description are removed with the builds

  tuner::ReferenceBuilds host_refs(dir.string());  // a CPU target keeps the shared-library reference
  const tuner::BuildResult& host_ref = host_refs.get(*w);
  INFO(host_ref.error_message);
  REQUIRE(host_ref.error_kind == records::MeasureErrorKind::kNone);
  CHECK(std::filesystem::path(host_ref.artifact_path).extension() == ".so");
  cand.artifact_path = (dir / "cand.so").string();
  tuner::WorkerRequest req = tuner::make_measure_request(*w, cand, host_ref, opt, 0);
  CHECK(req.artifact_kind == "shared_library");
  CHECK(req.ref_artifact_kind == "shared_library");
  CHECK(req.ref_function == "reference_packed");
  CHECK(req.ref_launch.is_null());
  CHECK_FALSE(req.to_json()["reference"].contains("artifact_kind"));
  std::filesystem::remove_all(dir);
}
