// Matmul with either operand transposed, and batched matmul, in float32 or int8 (int8 x int8 -> int32:
// operands cast to int32 before the multiply). Registered as matmul and batch_matmul.
#pragma once
#include "tessel/ops/registry.h"

namespace tessel::ops {

/** C[M, N] = sum_k A[i, k] B[k, j]; A stored [K, M] when transpose_a, B stored [N, K] when transpose_b.
 *  Returns {{A, B}, {C}}. */
OpTensors matmul_general(int M, int N, int K, bool transpose_a, bool transpose_b,
                         ir::DataType dtype = ir::DataType::float32());

/** C[b, M, N] = sum_k A[b, i, k] B[b, k, j] with the same transposes (of the last two axes) per batch.
 *  Returns {{A, B}, {C}}. */
OpTensors batch_matmul(int batch, int M, int N, int K, bool transpose_a, bool transpose_b,
                       ir::DataType dtype = ir::DataType::float32());

}  // namespace tessel::ops
