// The GPU artifact header is usable by a worker that links nothing of tessel: this test links only
// nlohmann_json and Catch2. The contract's minimal sidecar parses; malformed ones name the field.
#include <catch2/catch.hpp>

#include "tessel/codegen/gpu_artifact.h"

using tessel::codegen::gpu_artifact_from_json;
using tessel::codegen::GpuArtifact;

TEST_CASE("gpu artifact: contract fields, kernels list, round trip, errors", "[gpu][artifact]") {
  auto minimal = nlohmann::json::parse(
      R"({"kind":"ptx","entry":"mm","grid":[32,32,1],"block":[16,16,1],"shared_bytes":0,"args":["A","B","C"]})");
  GpuArtifact a = gpu_artifact_from_json(minimal);
  REQUIRE(a.kernels.size() == 1);
  CHECK(a.first().entry == "mm");
  CHECK(a.first().grid[0] == 32);
  CHECK(a.first().block[1] == 16);
  CHECK(a.args == std::vector<std::string>{"A", "B", "C"});
  CHECK(a.first().registers == -1);

  auto two = nlohmann::json::parse(R"({"kind":"ptx","args":["X","Y"],"kernels":[
      {"entry":"k0","grid":[8,1,1],"block":[256,1,1],"shared_bytes":65536},
      {"entry":"k1","grid":[1,1,1],"block":[32,1,1]}]})");
  GpuArtifact b = gpu_artifact_from_json(two);
  REQUIRE(b.kernels.size() == 2);
  CHECK(b.kernels[0].shared_bytes == 65536);
  CHECK(b.kernels[1].entry == "k1");

  nlohmann::json back = tessel::codegen::to_json(b);
  CHECK(back["entry"] == "k0");  // the top-level fields repeat the first kernel
  CHECK(back["kernels"].size() == 2);
  CHECK(gpu_artifact_from_json(back).kernels[1].block[0] == 32);

  CHECK_THROWS_WITH(gpu_artifact_from_json(nlohmann::json::parse(R"({"kind":"ptx","args":[]})")),
                    Catch::Contains("missing field 'entry'"));
  CHECK_THROWS_WITH(gpu_artifact_from_json(nlohmann::json::parse(R"({"kind":"cubin","args":[]})")),
                    Catch::Contains("unknown kind 'cubin'"));
  CHECK_THROWS_WITH(gpu_artifact_from_json(nlohmann::json::parse(R"({"version":99,"kind":"ptx"})")),
                    Catch::Contains("newer than this reader"));
  CHECK_THROWS_WITH(
      gpu_artifact_from_json(nlohmann::json::parse(R"({"kind":"ptx","args":[],"entry":"k","grid":[1,1],"block":[1,1,1]})")),
      Catch::Contains("malformed"));
}
