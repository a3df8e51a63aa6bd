// The tuner's builder for a cuda target: a candidate that breaks the GPU's rules is rejected with the
// reason (kInvalidSchedule, never launched); a valid one is written as PATH.ptx + PATH.json.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu_test_util.h"
#include "tessel/tuner/measure.h"

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
