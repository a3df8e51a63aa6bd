// Each illegal request returns an error naming the stage and axis, and leaves the schedule unchanged.
#include <catch2/catch.hpp>

#include "tessel/lower/lower.h"
#include "workloads.h"

using namespace tessel;
using namespace tessel::testing;
using namespace tessel::schedule;

namespace {
void expect_error(Schedule& s, const Step& step, const std::vector<std::string>& fragments) {
  size_t before = s.trace().size();
  std::string printed = s.to_string();
  Status st = s.apply(step);
  INFO("step: " << step_to_string(step));
  REQUIRE_FALSE(st.is_ok());
  for (auto& f : fragments) {
    INFO("message: " << st.message() << "\nexpected to contain: " << f);
    CHECK(st.message().find(f) != std::string::npos);
  }
  CHECK(s.trace().size() == before);
  CHECK(s.to_string() == printed);
}
}  // namespace

TEST_CASE("split errors", "[error]") {
  auto w = matmul(16, 16, 16);
  Schedule s({w.args.back()});
  expect_error(s, SplitStep{"C", "i", 0, false}, {"stage C", "axis i", "factor 0 must be positive"});
  expect_error(s, SplitStep{"C", "i", -3, true}, {"nparts -3 must be positive"});
  expect_error(s, SplitStep{"C", "q", 4, false}, {"stage C", "axis q", "not a loop", "loops: i, j, k"});
  expect_error(s, SplitStep{"X", "i", 4, false}, {"no stage named 'X'", "stages: A, B, C"});
  expect_error(s, SplitStep{"A", "i", 4, false}, {"stage A is an input"});
  s.split("C", "i", 4);
  expect_error(s, SplitStep{"C", "i", 2, false}, {"axis i", "not a loop"});
}

TEST_CASE("reorder breaking the vectorized innermost loop, duplicates", "[error]") {
  auto w = matmul(16, 16, 16);
  Schedule s({w.args.back()});
  expect_error(s, ReorderStep{"C", {"i", "i"}}, {"axis i appears twice"});
  s.reorder("C", {"i", "k", "j"});
  s.vectorize("C", "j");
  expect_error(s, ReorderStep{"C", {"j", "k"}}, {"stage C", "axis j", "vectorized loop"});
}

TEST_CASE("vectorize and parallel errors", "[error]") {
  auto w = matmul(16, 16, 100);
  Schedule s({w.args.back()});
  expect_error(s, AnnotateStep{"C", "i", "vectorize"}, {"stage C", "axis i", "not innermost"});
  expect_error(s, AnnotateStep{"C", "k", "vectorize"},
               {"stage C", "axis k", "reduction axis would break the reduction's dependency"});
  expect_error(s, AnnotateStep{"C", "k", "parallel"}, {"stage C", "axis k", "parallel on a reduction axis"});
  s.reorder("C", {"i", "k", "j"});
  expect_error(s, AnnotateStep{"C", "i", "spin"}, {"unknown annotation 'spin'"});
}

TEST_CASE("fuse errors", "[error]") {
  auto w = matmul(16, 16, 16);
  Schedule s({w.args.back()});
  s.split("C", "j", 4);
  expect_error(s, FuseStep{"C", {"i", "j.i"}}, {"stage C", "fuse of non-adjacent loops i and j.i"});
  expect_error(s, FuseStep{"C", {"j.i", "k"}}, {"cannot fuse data-parallel and reduction axes"});
  expect_error(s, FuseStep{"C", {"i"}}, {"fuse needs at least two axes"});
}

TEST_CASE("compute_at / inline / root errors", "[error]") {
  auto c = conv2d(2, 6, 6, 2, 3, 1);
  Schedule s({c.args.back()});
  expect_error(s, ComputeAtStep{"Apad", "O", "zz"}, {"axis zz is not a loop of stage O", "not an ancestor"});
  expect_error(s, ComputeAtStep{"O", "Apad", "i"}, {"stage O is an output"});
  expect_error(s, ComputeAtStep{"Apad", "Apad", "i"}, {"compute_at into itself"});
  expect_error(s, ComputeInlineStep{"O"}, {"stage O is an output"});
  auto r = row_reduce(4, 8);
  Schedule s2({r.args.back()});
  expect_error(s2, ComputeInlineStep{"Mx"}, {"stage Mx is a reduction and cannot be inlined"});
  auto e = elementwise_chain(4, 4);
  Schedule s3({e.args.back()});
  expect_error(s3, ComputeAtStep{"T2", "T1", "i"}, {"stage T1 does not read T2", "not an ancestor"});
  expect_error(s3, ComputeAtStep{"T1", "D", "i"}, {"stage T2 also reads T1", "not computed inside D.i"});
  s3.compute_inline("T2");  // now T1's only reader is D (through the inlined T2)
  CHECK(s3.apply(ComputeAtStep{"T1", "D", "i"}).is_ok());
}

TEST_CASE("cache, rfactor, storage_align, pragma errors", "[error]") {
  auto w = matmul(16, 16, 16);
  Schedule s({w.args.back()});
  expect_error(s, CacheReadStep{"A", "local", {"A"}}, {"stage A is an input"});
  expect_error(s, CacheReadStep{"A", "texture", {"C"}}, {"unknown storage scope 'texture'"});
  expect_error(s, CacheReadStep{"A", "local", {}}, {"name at least one reader"});
  s.split("C", "i", 4);
  expect_error(s, CacheWriteStep{"C", "local"}, {"stage C: apply cache_write before splitting"});
  expect_error(s, RfactorStep{"C", "zz"}, {"stage C, axis zz", "not a loop"});
  expect_error(s, RfactorStep{"C", "i.o"}, {"axis i.o: rfactor needs a reduction axis"});
  expect_error(s, StorageAlignStep{"C", 0, 8, 1}, {"stage C is an output"});
  expect_error(s, StorageAlignStep{"C", 5, 8, 1}, {"dimension 5 out of range"});
  expect_error(s, PragmaStep{"C", "k", "unroll_everything", 4}, {"unknown pragma 'unroll_everything'"});
  expect_error(s, PragmaStep{"C", "k", "auto_unroll_max_step", -1}, {"must be in [0, 4096]"});
  expect_error(s, PragmaStep{"C", "k", "software_pipeline", 2}, {"software_pipeline 2 must be in [0, 1]"});
  expect_error(s, PragmaStep{"C", "k", "min_blocks_per_sm", 33}, {"min_blocks_per_sm 33 must be in [0, 32]"});
  auto e = elementwise_chain(4, 4);
  Schedule s2({e.args.back()});
  expect_error(s2, RfactorStep{"D", "i"}, {"stage D is not a reduction"});
  expect_error(s2, TransformLayoutStep{"D", 0, 4}, {"stage D is an output"});
  expect_error(s2, TransformLayoutStep{"T1", 2, 4}, {"transform_layout dimension 2 out of range"});
  expect_error(s2, TransformLayoutStep{"T1", 0, 0}, {"factor 0 must be positive"});
  s2.transform_layout("T1", 1, 2);
  expect_error(s2, TransformLayoutStep{"T1", 0, 2}, {"already has a layout transform"});
  expect_error(s2, StorageAlignStep{"T1", 0, 8, 1}, {"cannot be combined"});
}

TEST_CASE("tensor-expression construction errors", "[error]") {
  using namespace te;
  CHECK_THROWS_WITH(placeholder({4, 0}, ir::DataType::float32(), "A"),
                    Catch::Contains("tensor A, dimension 1: extent 0 must be > 0"));
  Tensor A = placeholder({4, 4}, ir::DataType::float32(), "A");
  CHECK_THROWS_WITH(A(Var("i")), Catch::Contains("tensor A has 2 dimensions but is indexed with 1"));
  IterVar k = reduce_axis(4, "k");
  CHECK_THROWS_WITH(compute({4}, [&](Var i) { return sum(A(i, k->var), {k}) + 1.0f; }, "B"),
                    Catch::Contains("must be the whole body"));
  CHECK_THROWS_WITH(compute({4}, [&](Var i) { return A(i, i) + Var("x"); }, "B"),
                    Catch::Contains("operand types differ (float32 vs int32)"));
}

TEST_CASE("lowering errors name what is missing", "[error]") {
  auto w = matmul(8, 8, 8);
  Schedule s({w.args.back()});
  CHECK_THROWS_WITH(lower::lower(s, {w.args[0], w.args[2]}, "f"),
                    Catch::Contains("input B is read but is not among the function arguments"));
  CHECK_THROWS_WITH(lower::lower(s, w.args, "bad name"), Catch::Contains("may contain only letters"));
}
