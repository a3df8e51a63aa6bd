// Build-time generator for the AOT tests: emits tessel_aot_saxpy.{o,h} and libtessel_aot_saxpy.so into
// the directory given as argv[1]. The function: C[i] = A[i] * 2.5 + B[i] for i < 1000, as a parallel loop
// over 8-lane vectors with a predicated tail. Also emits tessel_aot_matmul.{o,h}: a 37x45x19 fp32 matmul
// lowered through the whole pipeline with the hand-written register-blocked schedule (plain C test).
#include <cstdio>
#include <exception>
#include <string>

#include "tessel/codegen/aot.h"
#include "tessel/ir/op.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/matmul.h"

using namespace tessel::ir;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    const int n = 1000;
    auto sh = std::vector<Expr>{IntImm::make(DataType::int32(), n)};
    auto A = make_buffer("A", DataType::float32(), sh), B = make_buffer("B", DataType::float32(), sh),
         C = make_buffer("C", DataType::float32(), sh);
    Var io("io");
    Expr idx = Ramp::make(io * 8, IntImm::make(DataType::int32(), 1), 8);
    Expr pred = idx < Broadcast::make(IntImm::make(DataType::int32(), n), 8);
    Expr val = Load::make(A, idx, pred) * Broadcast::make(FloatImm::make(DataType::float32(), 2.5), 8) +
               Load::make(B, idx, pred);
    Stmt body = For::make(io, IntImm::make(DataType::int32(), 0), IntImm::make(DataType::int32(), (n + 7) / 8),
                          ForKind::kParallel, Store::make(C, val, idx, pred));
    LoweredFunc f{"tessel_aot_saxpy", {A, B, C}, body};
    auto target = tessel::codegen::Target::host();
    std::string dir = argv[1];
    tessel::codegen::emit_object(f, target, dir + "/tessel_aot_saxpy.o");
    tessel::codegen::emit_header(f, dir + "/tessel_aot_saxpy.h");
    tessel::codegen::emit_shared_library(f, target, dir + "/libtessel_aot_saxpy.so");
    auto mm = tessel::ops::matmul(37, 45, 19);
    LoweredFunc g = tessel::lower::lower(tessel::ops::schedule_matmul_cpu(mm[2]), mm, "tessel_aot_matmul");
    tessel::codegen::emit_object(g, target, dir + "/tessel_aot_matmul.o");
    tessel::codegen::emit_header(g, dir + "/tessel_aot_matmul.h");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aot_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
