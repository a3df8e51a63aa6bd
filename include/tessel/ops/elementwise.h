// Elementwise operators (float32) over [M, N] tensors: add, mul, relu, sigmoid, tanh, exp, and a small
// chain of them whose intermediate stages a schedule can inline.
#pragma once
#include <string>

#include "tessel/ops/registry.h"

namespace tessel::ops {

/** The unary functions (none = identity, used as the end of a chain). */
enum class UnaryOp { kNone, kRelu, kSigmoid, kTanh, kExp };
/** The binary functions. */
enum class BinaryOp { kAdd, kMul };

/** Parses none|relu|sigmoid|tanh|exp (UserError listing them otherwise). */
UnaryOp parse_unary(const std::string& s);
/** f(x) for a unary operator (none: x itself). */
ir::Expr apply_unary(UnaryOp op, const ir::Expr& x);

/** Out[M, N] = f(A[M, N]). Returns {{A}, {Out}}. */
OpTensors unary(UnaryOp op, int M, int N);

/** Out[M, N] = A[M, N] (+ or *) B[M, N]. Returns {{A, B}, {Out}}. */
OpTensors binary(BinaryOp op, int M, int N);

/** Out = f(A + B) (inputs {A, B}) or, with mul, f((A + B) * C) (inputs {A, B, C}) over [M, N], in stages
 *  "Sum" = A + B, "Prod" = Sum * C (with mul), "Out". f(A + B) is a residual add + activation. */
OpTensors elementwise_chain(int M, int N, bool mul, UnaryOp f);

}  // namespace tessel::ops
