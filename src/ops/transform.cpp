// transpose and pad, and their registration (4-D forms: transpose with any of the 24 permutations,
// pad of the H and W axes of an NCHW tensor).
#include "tessel/ops/transform.h"

#include <algorithm>

#include "builtin_ops.h"
#include "op_util.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {
void check_dtype(ir::DataType t, const char* op) {
  TESSEL_CHECK(t == ir::DataType::float32() || t == ir::DataType::int8())
      << op << ": dtype must be float32 or int8, got " << t.to_string();
}
std::vector<Expr> exprs(const std::vector<int>& v) { return std::vector<Expr>(v.begin(), v.end()); }
}  // namespace

OpTensors transpose(const std::vector<int>& shape, const std::vector<int>& perm, ir::DataType dtype) {
  check_dtype(dtype, "transpose");
  const int rank = int(shape.size());
  TESSEL_CHECK(rank > 0 && int(perm.size()) == rank)
      << "transpose: perm has " << perm.size() << " entries for a tensor of rank " << rank;
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int d = 0; d < rank; ++d)
    TESSEL_CHECK(sorted[d] == d) << "transpose: perm is not a permutation of 0.." << rank - 1;
  for (int e : shape) TESSEL_CHECK(e > 0) << "transpose: extents must be positive";
  Tensor in = te::placeholder(exprs(shape), dtype, "In");
  std::vector<int> out_shape(rank);
  for (int d = 0; d < rank; ++d) out_shape[d] = shape[perm[d]];
  Tensor out = te::compute(
      exprs(out_shape),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> u(rank);
        for (int d = 0; d < rank; ++d) u[perm[d]] = v[d];
        return in(u);
      },
      "Out");
  return {{in}, {out}};
}

PadMode parse_pad_mode(const std::string& s) {
  if (s == "constant") return PadMode::kConstant;
  if (s == "edge") return PadMode::kEdge;
  if (s == "reflect") return PadMode::kReflect;
  TESSEL_CHECK(false) << "unknown pad mode '" << s << "' (expected constant, edge or reflect)";
  return PadMode::kConstant;
}

OpTensors pad(const std::vector<int>& shape, const std::vector<int>& before, const std::vector<int>& after,
              PadMode mode, double value, ir::DataType dtype) {
  check_dtype(dtype, "pad");
  const int rank = int(shape.size());
  TESSEL_CHECK(rank > 0 && int(before.size()) == rank && int(after.size()) == rank)
      << "pad: give one before and one after amount per axis (rank " << rank << ")";
  std::vector<int> out_shape(rank);
  for (int d = 0; d < rank; ++d) {
    TESSEL_CHECK(shape[d] > 0 && before[d] >= 0 && after[d] >= 0)
        << "pad: axis " << d << ": extents must be positive and pad amounts non-negative";
    if (mode == PadMode::kReflect)
      TESSEL_CHECK(before[d] < shape[d] && after[d] < shape[d])
          << "pad: reflect padding of axis " << d << " (" << before[d] << ", " << after[d]
          << ") must be smaller than its extent " << shape[d];
    out_shape[d] = before[d] + shape[d] + after[d];
  }
  Tensor in = te::placeholder(exprs(shape), dtype, "In");
  Tensor out = te::compute(
      exprs(out_shape),
      [&](const std::vector<Var>& v) -> Expr {
        std::vector<Expr> idx;
        Expr inside;
        for (int d = 0; d < rank; ++d) {
          Expr t = before[d] == 0 ? Expr(v[d]) : v[d] - before[d];
          int n = shape[d];
          if (before[d] == 0 && after[d] == 0) {
            idx.push_back(t);
            continue;
          }
          switch (mode) {
            case PadMode::kConstant: {
              Expr ok = before[d] == 0 ? t < n : (after[d] == 0 ? t >= 0 : t >= 0 && t < n);
              inside = inside.defined() ? inside && ok : ok;
              idx.push_back(t);
              break;
            }
            case PadMode::kEdge:
              idx.push_back(ir::min(ir::max(t, 0), n - 1));
              break;
            case PadMode::kReflect:
              idx.push_back(ir::select(t < 0, -t, ir::select(t >= n, 2 * (n - 1) - t, t)));
              break;
          }
        }
        if (!inside.defined()) return in(idx);
        return ir::if_then_else(inside, in(idx), ir::make_const(dtype, value));
      },
      "Out");
  return {{in}, {out}};
}

namespace {
std::vector<std::string> permutations4() {
  std::string p = "0123";
  std::vector<std::string> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}
OpParam dtype_param() { return {"dtype", "float32", "element type", {"float32", "int8"}}; }
}  // namespace

void register_transform_ops() {
  register_op({"transpose",
               "Out = In[D0, D1, D2, D3] with its axes permuted (perm=0231: NCHW -> NHWC)",
               {{"D0", "", "extent of axis 0", {}, 1},
                {"D1", "", "extent of axis 1", {}, 1},
                {"D2", "1", "extent of axis 2", {}, 1},
                {"D3", "1", "extent of axis 3", {}, 1},
                {"perm", "1023", "output axis d is input axis perm[d]", permutations4()},
                dtype_param()},
               [](const OpArgs& a) {
                 std::vector<int> perm;
                 for (char c : a.s("perm")) perm.push_back(c - '0');
                 return transpose({a.ii("D0"), a.ii("D1"), a.ii("D2"), a.ii("D3")}, perm, a.dtype());
               }});
  register_op(
      {"pad",
       "Out[N, C, top + H + bottom, left + W + right] = In[N, C, H, W] padded (constant value, edge or reflect)",
       {{"N", "1", "batch", {}, 1},
        {"C", "1", "channels", {}, 1},
        {"H", "", "height", {}, 1},
        {"W", "", "width", {}, 1},
        {"top", "1", "rows added above", {}, 0, 1 << 20},
        {"bottom", "1", "rows added below", {}, 0, 1 << 20},
        {"left", "1", "columns added on the left", {}, 0, 1 << 20},
        {"right", "1", "columns added on the right", {}, 0, 1 << 20},
        {"mode", "constant", "what the added elements hold", {"constant", "edge", "reflect"}},
        {"value", "0", "the constant of mode=constant", {}, -128, 127},
        dtype_param()},
       [](const OpArgs& a) {
         return pad({a.ii("N"), a.ii("C"), a.ii("H"), a.ii("W")}, {0, 0, a.ii("top"), a.ii("left")},
                    {0, 0, a.ii("bottom"), a.ii("right")}, parse_pad_mode(a.s("mode")), double(a.i("value")),
                    a.dtype());
       }});
}

}  // namespace tessel::ops
