// Trace JSON round trip, replay, malformed traces, and schedule copies being independent.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::testing;
using namespace tessel::schedule;

TEST_CASE("trace JSON round trip of every step kind", "[schedule]") {
  std::vector<Step> steps = {SplitStep{"C", "i", 8, false}, SplitStep{"C", "j", 3, true},
                             TileStep{"C", "i", "j", 4, 4}, FuseStep{"C", {"a", "b"}},
                             ReorderStep{"C", {"k", "i"}}, ComputeAtStep{"A", "C", "i"},
                             ComputeInlineStep{"T"}, ComputeRootStep{"T"},
                             CacheReadStep{"A", "local", {"C"}}, CacheWriteStep{"C", "local"},
                             AnnotateStep{"C", "j", "vectorize"}, RfactorStep{"C", "k"},
                             StorageAlignStep{"A", 1, 16, 2}, PragmaStep{"C", "i", "auto_unroll_max_step", 64},
                             TransformLayoutStep{"B.global", 1, 32}};
  auto j = trace_to_json(steps);
  CHECK(j["version"] == kTraceVersion);
  auto back = trace_from_json(nlohmann::json::parse(j.dump()));
  REQUIRE(back.size() == steps.size());
  CHECK(trace_to_json(back) == j);
  for (size_t i = 0; i < steps.size(); ++i) CHECK(step_to_string(back[i]) == step_to_string(steps[i]));
}

TEST_CASE("malformed traces are refused with the step index", "[schedule][error]") {
  using nlohmann::json;
  CHECK_THROWS_WITH(trace_from_json(json::array()), Catch::Contains("'version' and 'steps'"));
  CHECK_THROWS_WITH(trace_from_json(json{{"version", 99}, {"steps", json::array()}}),
                    Catch::Contains("newer than this tessel supports"));
  CHECK_THROWS_WITH(trace_from_json(json{{"version", 1}, {"steps", {{{"kind", "warp"}}}}}),
                    Catch::Contains("unknown step kind 'warp'"));
  CHECK_THROWS_WITH(trace_from_json(json{{"version", 1}, {"steps", {{{"kind", "split"}, {"stage", "C"}}}}}),
                    Catch::Contains("trace step 0 (split)"));
  CHECK_THROWS_WITH(trace_from_json(json{{"version", 1}, {"steps", {{{"kind", "split"}, {"stage", 3}, {"axis", "i"},
                                                                     {"factor", 2}, {"nparts", false}}}}}),
                    Catch::Contains("trace step 0"));
}

TEST_CASE("replaying a trace reproduces identical lowered code", "[schedule]") {
  auto w = matmul(32, 48, 16);
  Schedule s({w.args.back()});
  std::string cl = s.cache_write("C", "local");
  auto t = s.tile("C", "i", "j", 4, 16);
  s.compute_at(cl, "C", t[1]);
  s.reorder(cl, {"k", "i", "j"});
  s.vectorize(cl, "j");
  s.parallel("C", t[0]);
  Schedule r({w.args.back()});
  REQUIRE(r.apply_all(trace_from_json(trace_to_json(s.trace()))).is_ok());
  CHECK(ir::to_string(lower::lower(s, w.args, "f")) == ir::to_string(lower::lower(r, w.args, "f")));
  CHECK(r.to_string() == s.to_string());
}

TEST_CASE("a copied schedule is independent of the original", "[schedule]") {
  auto w = matmul(8, 8, 8);
  Schedule a({w.args.back()});
  Schedule b = a;
  b.split("C", "i", 2);
  CHECK(a.leaf_names("C") == std::vector<std::string>{"i", "j", "k"});
  CHECK(b.leaf_names("C") == std::vector<std::string>{"i.o", "i.i", "j", "k"});
  CHECK(a.trace().empty());
  CHECK(b.trace().size() == 1);
}

TEST_CASE("apply_all stops at the first illegal step and names it", "[schedule][error]") {
  auto w = matmul(8, 8, 8);
  Schedule s({w.args.back()});
  Status st = s.apply_all({SplitStep{"C", "i", 2, false}, SplitStep{"C", "zz", 2, false}});
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("step 1 split(") != std::string::npos);
  CHECK(s.trace().size() == 1);
}
