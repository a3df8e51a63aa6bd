// Parallel loops: outlining, closures (captured variables, buffers, allocations), nesting, 1/2/4 threads.
#include "tessel/runtime/thread_pool.h"
#include "test_util.h"

using namespace tessel::test;
using tessel::codegen::JitModule;

TEST_CASE("codegen: parallel loop writes every element", "[codegen][parallel]") {
  const int n = 1001;
  auto A = buf1("A", DataType::float32(), n), B = buf1("B", DataType::float32(), n);
  Var i("i");
  Stmt body = loop(i, n, Store::make(B, Load::make(A, i) + cast(DataType::float32(), i), i), ForKind::kParallel);
  auto jit = JitModule::compile({"par_add", {A, B}, body});
  REQUIRE(jit->llvm_ir().find("tessel_parallel_for") != std::string::npos);
  for (int threads : {1, 2, 4}) {
    tessel::runtime::set_num_threads(threads);
    REQUIRE(tessel::runtime::num_threads() == threads);
    NDArray a = random_array(n, "float32", -1, 1, 20 + threads), b = poison_array(n, "float32");
    std::vector<void*> args{a.data(), b.data()};
    REQUIRE(jit->call_packed(args.data()) == 0);
    for (int k = 0; k < n; ++k) REQUIRE(b.data_as<float>()[k] == a.data_as<float>()[k] + float(k));
  }
  tessel::runtime::set_num_threads(0);
}

TEST_CASE("codegen: parallel loop with captured lets, nonzero min, nested parallel and allocations",
          "[codegen][parallel]") {
  const int rows = 37, cols = 50;
  auto A = buf1("A", DataType::float32(), rows * cols), B = buf1("B", DataType::float32(), rows * cols);
  auto T = make_buffer("T", DataType::float32(), {i32(cols)}, {}, MemScope::kLocal, 64);
  Var i("i"), j("j"), k("k"), scale("scale"), off("off");
  // for i in parallel [1, rows - 1): allocate T[cols]; for j parallel: T[j] = A[i*cols+j]*scale;
  //                                   for k: B[i*cols+k] = T[cols-1-k] + off
  Stmt fill = For::make(j, i32(0), i32(cols), ForKind::kParallel,
                        Store::make(T, Load::make(A, i * cols + j) * cast(DataType::float32(), scale), j));
  Stmt use =
      loop(k, cols, Store::make(B, Load::make(T, i32(cols - 1) - k) + cast(DataType::float32(), off), i * cols + k));
  Stmt par = For::make(i, i32(1), i32(rows - 2), ForKind::kParallel, Allocate::make(T, Seq::make({fill, use})));
  Stmt body = LetStmt::make(scale, i32(3), LetStmt::make(off, i32(-2), par));
  auto jit = JitModule::compile({"par_nested", {A, B}, body});
  for (int threads : {1, 2, 4}) {
    tessel::runtime::set_num_threads(threads);
    NDArray a = random_array(rows * cols, "float32", -1, 1, 30 + threads), b = poison_array(rows * cols, "float32");
    std::vector<void*> args{a.data(), b.data()};
    REQUIRE(jit->call_packed(args.data()) == 0);
    const uint32_t* braw = b.data_as<uint32_t>();
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        if (r == 0 || r == rows - 1) {
          REQUIRE(braw[r * cols + c] == 0xABABABABu);
        } else {
          REQUIRE(b.data_as<float>()[r * cols + c] == a.data_as<float>()[r * cols + cols - 1 - c] * 3.0f - 2.0f);
        }
      }
  }
  tessel::runtime::set_num_threads(0);
}

TEST_CASE("codegen: parallel outer loop over a vectorized inner loop with int64 indices", "[codegen][parallel]") {
  const int64_t n = 4096 + 5;
  auto A = buf1("A", DataType::float64(), n), B = buf1("B", DataType::float64(), n);
  Var io("io", DataType::int64());
  Expr idx = Ramp::make(io * i64(4), i64(1), 4);
  Expr pred = idx < Broadcast::make(i64(n), 4);
  Stmt body =
      loop(io, (n + 3) / 4,
           Store::make(B, Load::make(A, idx, pred) * Broadcast::make(FloatImm::make(DataType::float64(), 0.5), 4), idx,
                       pred),
           ForKind::kParallel);
  tessel::runtime::set_num_threads(4);
  NDArray a = random_array(n, "float64", -1, 1, 40), b = poison_array(n, "float64");
  REQUIRE(run({"par_vec", {A, B}, body}, {&a, &b}) == 0);
  for (int64_t k = 0; k < n; ++k) REQUIRE(b.data_as<double>()[k] == a.data_as<double>()[k] * 0.5);
  tessel::runtime::set_num_threads(0);
}
