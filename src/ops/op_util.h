// Small helpers shared by the operator definitions (private to src/ops).
#pragma once
#include <string>
#include <vector>

#include "tessel/ir/op.h"
#include "tessel/support/error.h"
#include "tessel/te/tensor.h"

namespace tessel::ops::detail {

/** The accumulation type of a product of two dtype values: int32 for integers, else dtype itself. */
inline ir::DataType accum_type(ir::DataType t) { return t.is_integer() ? ir::DataType::int32() : t; }

/** e converted to t (no cast node when it already has that type). */
inline ir::Expr to(ir::DataType t, const ir::Expr& e) { return e.dtype() == t ? e : ir::cast(t, e); }

/** The constant extents of a tensor's shape. */
inline std::vector<int> extents(const te::Tensor& t) {
  std::vector<int> s;
  for (auto& e : t.shape()) s.push_back(int(*ir::as_const_int(e)));
  return s;
}

/** Output extent of a sliding window: (in + 2 pad - dilation (k - 1) - 1) / stride + 1 (may be <= 0). */
inline int window_out(int in, int k, int stride, int pad, int dilation = 1) {
  int span = in + 2 * pad - dilation * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

/** Reads t at idx, zero (of t's type) where the condition is false (only the chosen side is read). */
inline ir::Expr read_or_zero(const ir::Expr& cond, const te::Tensor& t, std::vector<ir::Expr> idx) {
  return ir::if_then_else(cond, t(std::move(idx)), ir::make_zero(t.dtype()));
}

}  // namespace tessel::ops::detail
