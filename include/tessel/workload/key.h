// The structural key of a computation: a SHA-256 over a canonical serialization of its tensor-expression
// DAG, where tensors are named by their position (inputs in argument order, then the rest in topological
// order) and variables by their role (axis d, reduction axis d). Two computations that do the same
// thing get the same key however they were built (C++, a spec, a .te file, any names); different
// computations (any shape, dtype, expression or argument-order difference) get different keys.
#pragma once
#include <string>
#include <vector>

#include "tessel/te/tensor.h"

namespace tessel::workload {

/** The canonical text the key hashes (useful for debugging why two keys differ). */
std::string canonical_dag(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs);

/** First 32 hex digits (128 bits) of SHA-256(canonical_dag(...)). */
std::string workload_key(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs);

}  // namespace tessel::workload
