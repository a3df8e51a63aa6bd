// Reductions over axes (sum, max, min, mean) and their registration as the operator "reduce".
#include "tessel/ops/reduce.h"

#include <algorithm>

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

ReduceOp parse_reduce_op(const std::string& s) {
  if (s == "sum") return ReduceOp::kSum;
  if (s == "max") return ReduceOp::kMax;
  if (s == "min") return ReduceOp::kMin;
  if (s == "mean") return ReduceOp::kMean;
  TESSEL_CHECK(false) << "unknown reduction '" << s << "' (expected sum, max, min or mean)";
  return ReduceOp::kSum;
}

OpTensors reduce(ReduceOp op, const std::vector<int>& shape, const std::vector<int>& axes, bool keepdims) {
  const int rank = int(shape.size());
  TESSEL_CHECK(rank > 0) << "reduce: the input needs at least one axis";
  for (int e : shape) TESSEL_CHECK(e > 0) << "reduce: extents must be positive";
  TESSEL_CHECK(!axes.empty()) << "reduce: name at least one axis";
  std::vector<bool> reduced(rank, false);
  int64_t count = 1;
  for (int a : axes) {
    TESSEL_CHECK(a >= 0 && a < rank) << "reduce: axis " << a << " is out of range for rank " << rank;
    TESSEL_CHECK(!reduced[a]) << "reduce: axis " << a << " named twice";
    reduced[a] = true;
    count *= shape[a];
  }
  const ir::DataType f32 = ir::DataType::float32();
  Tensor in = te::placeholder(std::vector<Expr>(shape.begin(), shape.end()), f32, "In");
  std::vector<ir::IterVar> raxes;
  std::vector<Expr> out_shape;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) raxes.push_back(te::reduce_axis(shape[d], std::string(1, 'r').append(std::to_string(d))));
    if (!reduced[d])
      out_shape.push_back(shape[d]);
    else if (keepdims)
      out_shape.push_back(1);
  }
  bool scalar = out_shape.empty();
  if (scalar) out_shape.push_back(1);
  auto body = [&](const std::vector<Var>& v) {
    std::vector<Expr> idx;
    size_t r = 0, o = 0;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) {
        idx.push_back(raxes[r++]->var);
        if (keepdims) ++o;
      } else {
        idx.push_back(v[o++]);
      }
    }
    Expr x = in(idx);
    switch (op) {
      case ReduceOp::kMax:
        return te::reduce_max(x, raxes);
      case ReduceOp::kMin:
        return te::reduce_min(x, raxes);
      default:
        return te::sum(x, raxes);
    }
  };
  if (op != ReduceOp::kMean) return {{in}, {te::compute(out_shape, body, "Out")}};
  Tensor s = te::compute(out_shape, body, "S");
  Tensor out = te::compute(
      out_shape, [&](const std::vector<Var>& v) { return s(std::vector<Expr>(v.begin(), v.end())) / float(count); },
      "Out");
  return {{in}, {out}};
}

void register_reduce_ops() {
  register_op(
      {"reduce",
       "Out = sum|max|min|mean of In[D0, D1, D2] over the axes listed as digits (axes=02: axes 0 and 2)",
       {{"D0", "", "extent of axis 0", {}, 1},
        {"D1", "1", "extent of axis 1", {}, 1},
        {"D2", "1", "extent of axis 2", {}, 1},
        {"op", "sum", "the reduction", {"sum", "max", "min", "mean"}},
        {"axes", "2", "the reduced axes", {"0", "1", "2", "01", "02", "12", "012"}},
        {"keepdims", "0", "keep reduced axes with extent 1", {}, 0, 1}},
       [](const OpArgs& a) {
         std::vector<int> axes;
         for (char c : a.s("axes")) axes.push_back(c - '0');
         return reduce(parse_reduce_op(a.s("op")), {a.ii("D0"), a.ii("D1"), a.ii("D2")}, axes, a.i("keepdims") != 0);
       }});
}

}  // namespace tessel::ops
