// Workloads: key stability and distinctness, canonical JSON, .te and spec forms, network task lists.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "tessel/workload/key.h"
#include "tessel/workload/network.h"
#include "tessel/workload/workload.h"

using namespace tessel;
using namespace tessel::workload;

TEST_CASE("the key is stable and independent of names and of how the workload was built", "[workload]") {
  auto a = from_spec("matmul:M=64,N=32,K=16");
  auto b = from_spec("matmul:K=16,N=32,M=64");  // parameter order does not matter
  CHECK(a.key == b.key);
  CHECK(a.spec == b.spec);
  CHECK(a.key.size() == 32);
  // The same computation written as a .te program with other tensor and axis names.
  auto t = from_te_text(
      "input X: float32[64, 16]\ninput Y: float32[16, 32]\nZ[r, c] = sum(X[r, k] * Y[k, c], k)\n", "mm.te");
  INFO(canonical_dag(a.inputs, a.outputs) << "\n---\n" << canonical_dag(t.inputs, t.outputs));
  CHECK(t.key == a.key);
  // Built twice in C++: the same key (no pointer identity in it).
  CHECK(from_spec("softmax:M=8,N=16").key == from_spec("softmax:M=8,N=16").key);
}

TEST_CASE("different computations never share a key", "[workload]") {
  std::vector<std::string> specs = {"matmul:M=64,N=32,K=16",
                                    "matmul:M=64,N=32,K=17",
                                    "matmul:M=32,N=64,K=16",
                                    "matmul:M=64,N=32,K=16,transpose_a=1",
                                    "matmul:M=64,N=32,K=16,transpose_b=1",
                                    "matmul:M=64,N=32,K=16,dtype=int8",
                                    "add:M=4,N=8",
                                    "mul:M=4,N=8",
                                    "relu:M=4,N=8",
                                    "reduce:D0=4,D1=8,op=sum,axes=1",
                                    "reduce:D0=4,D1=8,op=max,axes=1",
                                    "reduce:D0=4,D1=8,op=mean,axes=1",
                                    "conv2d_nchw:H=8,W=8,CI=4,CO=4,pad=1",
                                    "conv2d_nchw:H=8,W=8,CI=4,CO=4,pad=0",
                                    "conv2d_nhwc:H=8,W=8,CI=4,CO=4,pad=1",
                                    "conv2d_nchw:H=8,W=8,CI=4,CO=4,pad=1,stride=2",
                                    "conv2d_nchw:H=8,W=8,CI=4,CO=4,pad=1,dilation=2",
                                    "conv2d_nchw:H=8,W=8,CI=4,CO=4,pad=1,bias=1,activation=relu",
                                    "dense:M=2,N=8,K=4,activation=relu",
                                    "dense:M=2,N=8,K=4,activation=gelu"};
  std::set<std::string> keys;
  for (auto& s : specs) {
    INFO(s);
    CHECK(keys.insert(from_spec(s).key).second);
  }
  // Argument order is part of the computation (it is the calling convention).
  auto t1 = from_te_text("input A: float32[4]\ninput B: float32[4]\nC[i] = A[i] - B[i]\n", "x.te");
  auto t2 = from_te_text("input B: float32[4]\ninput A: float32[4]\nC[i] = A[i] - B[i]\n", "y.te");
  CHECK(t1.key != t2.key);
}

TEST_CASE("canonical JSON round trip, tampering and versions", "[workload]") {
  for (std::string s : {"matmul:M=8,N=8,K=8", "layer_norm:M=4,N=16", "max_pool:C=2,H=8,W=8"}) {
    auto w = from_spec(s);
    auto j = to_json(w);
    CHECK(j["version"] == kWorkloadJsonVersion);
    CHECK(j["inputs"].size() == w.inputs.size());
    auto back = from_json(nlohmann::json::parse(j.dump()));
    CHECK(back.key == w.key);
    CHECK(back.spec == w.spec);
  }
  auto te = from_te_text("input A: float32[4]\nB[i] = exp(A[i])\n", "e.te");
  CHECK(from_json(to_json(te)).key == te.key);
  auto j = to_json(from_spec("matmul:M=8,N=8,K=8"));
  j["key"] = "0123";
  CHECK_THROWS_WITH(from_json(j), Catch::Contains("does not match the computation"));
  j = to_json(from_spec("matmul:M=8,N=8,K=8"));
  j["version"] = kWorkloadJsonVersion + 1;
  CHECK_THROWS_WITH(from_json(j), Catch::Contains("newer than this tessel"));
  CHECK_THROWS_WITH(from_json(nlohmann::json::object({{"version", 1}})), Catch::Contains("'spec' or 'te'"));
}

TEST_CASE("spec errors list what is accepted", "[workload][error]") {
  CHECK_THROWS_WITH(from_spec("matmull:M=1"), Catch::Contains("unknown operator 'matmull'") &&
                                                    Catch::Contains("matmul") && Catch::Contains("conv2d_nhwc"));
  CHECK_THROWS_WITH(from_spec("matmul:M=1,N=1,K=1,Q=3"), Catch::Contains("has no parameter 'Q'") &&
                                                             Catch::Contains("transpose_a"));
  CHECK_THROWS_WITH(from_spec("matmul:M=1,N=1"), Catch::Contains("parameter K is required"));
  CHECK_THROWS_WITH(from_spec("matmul:M=x,N=1,K=1"), Catch::Contains("M=x is not an integer"));
  CHECK_THROWS_WITH(from_spec("matmul:M=1,N=1,K=1,dtype=int4"), Catch::Contains("is not one of float32|int8"));
  CHECK_THROWS_WITH(from_spec("matmul:M"), Catch::Contains("expected PARAM=VALUE"));
}

TEST_CASE("the issue's example specs build", "[workload]") {
  auto m = from_spec("matmul:M=1024,N=1024,K=1024");
  CHECK(m.flop_count() == Approx(2.0 * 1024 * 1024 * 1024));
  auto c = from_spec("conv2d_nhwc:N=1,H=56,W=56,CI=64,CO=64,KH=3,KW=3,stride=1,pad=1");
  CHECK(c.flop_count() >= 2.0 * 56 * 56 * 64 * 64 * 9);
}

TEST_CASE("network task lists: every task builds, counts are positive, keys are distinct", "[workload]") {
  auto names = network_names();
  CHECK(names == std::vector<std::string>{"bert_base", "mobilenet_v2", "resnet50"});
  std::map<std::string, int> occurrences = {{"resnet50", 0}, {"mobilenet_v2", 0}, {"bert_base", 0}};
  for (auto& n : names) {
    Network net = load_network(n);
    CHECK_FALSE(net.description.empty());
    std::set<std::string> keys;
    for (auto& t : net.tasks) {
      INFO(n << " " << t.spec);
      CHECK(t.count >= 1);
      occurrences[n] += t.count;
      CHECK(keys.insert(from_spec(t.spec).key).second);
    }
  }
  // ResNet-50: 53 convolutions (incl. 4 downsample), a max pool, 16 residual additions, pool, fc.
  CHECK(occurrences["resnet50"] == 53 + 1 + 16 + 2);
  CHECK(occurrences["bert_base"] == 12 * 11 + 1);
  CHECK_THROWS_WITH(load_network("vgg16"), Catch::Contains("unknown network 'vgg16'") && Catch::Contains("resnet50"));
  CHECK_THROWS_WITH(parse_network_json("{", "x"), Catch::Contains("not valid JSON"));
}
