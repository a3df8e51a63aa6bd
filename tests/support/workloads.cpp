#include "workloads.h"

#include <cmath>
#include <sstream>

#include "tessel/codegen/jit.h"
#include "tessel/ir/printer.h"
#include "tessel/lower/lower.h"

namespace tessel::testing {

using namespace te;
using ir::DataType;
using runtime::NDArray;

Workload matmul(int M, int N, int K) {
  Tensor A = placeholder({M, K}, DataType::float32(), "A");
  Tensor B = placeholder({K, N}, DataType::float32(), "B");
  IterVar k = reduce_axis(K, "k");
  Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
  Workload w{"matmul", {A, B, C}, 2, nullptr, 1e-4};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int kk = 0; kk < K; ++kk) acc += t[0]->get(i * K + kk) * t[1]->get(kk * N + j);
        t[2]->set(i * N + j, acc);
      }
  };
  return w;
}

Workload conv2d(int C, int H, int W, int F, int R, int pad, int stride) {
  Tensor A = placeholder({C, H, W}, DataType::float32(), "A");
  Tensor Wt = placeholder({F, C, R, R}, DataType::float32(), "W");
  int HP = H + 2 * pad, WP = W + 2 * pad;
  Tensor Apad = compute(
      {C, HP, WP},
      [&](Var c, Var y, Var x) {
        Expr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
        return ir::if_then_else(inside, A(c, y - pad, x - pad), Expr(0.0f));
      },
      "Apad");
  int HO = (HP - R) / stride + 1, WO = (WP - R) / stride + 1;
  IterVar rc = reduce_axis(C, "rc"), ry = reduce_axis(R, "ry"), rx = reduce_axis(R, "rx");
  Tensor O = compute(
      {F, HO, WO},
      [&](Var f, Var y, Var x) {
        return sum(Apad(rc->var, y * stride + ry->var, x * stride + rx->var) * Wt(f, rc->var, ry->var, rx->var),
                   {rc, ry, rx});
      },
      "O");
  Workload w{"conv2d", {A, Wt, O}, 2, nullptr, 1e-4};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int f = 0; f < F; ++f)
      for (int y = 0; y < HO; ++y)
        for (int x = 0; x < WO; ++x) {
          double acc = 0;
          for (int c = 0; c < C; ++c)
            for (int ry2 = 0; ry2 < R; ++ry2)
              for (int rx2 = 0; rx2 < R; ++rx2) {
                int yy = y * stride + ry2 - pad, xx = x * stride + rx2 - pad;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                acc += t[0]->get((c * H + yy) * W + xx) * t[1]->get(((f * C + c) * R + ry2) * R + rx2);
              }
          t[2]->set((f * HO + y) * WO + x, acc);
        }
  };
  return w;
}

Workload row_reduce(int M, int N) {
  Tensor X = placeholder({M, N}, DataType::float32(), "X");
  IterVar k1 = reduce_axis(N, "k1");
  Tensor Mx = compute({M}, [&](Var i) { return reduce_max(X(i, k1->var), {k1}); }, "Mx");
  IterVar k2 = reduce_axis(N, "k2");
  Tensor S = compute({M}, [&](Var i) { return sum(ir::exp(X(i, k2->var) - Mx(i)), {k2}); }, "S");
  Workload w{"row_reduce", {X, S}, 1, nullptr, 1e-4};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int i = 0; i < M; ++i) {
      double mx = -INFINITY;
      for (int j = 0; j < N; ++j) mx = std::max(mx, t[0]->get(i * N + j));
      double s = 0;
      for (int j = 0; j < N; ++j) s += std::exp(double(float(t[0]->get(i * N + j) - mx)));
      t[1]->set(i, s);
    }
  };
  return w;
}

Workload elementwise_chain(int M, int N) {
  Tensor A = placeholder({M, N}, DataType::float32(), "A");
  Tensor B = placeholder({M, N}, DataType::float32(), "B");
  Tensor T1 = compute({M, N}, [&](Var i, Var j) { return A(i, j) * B(i, j) + 1.0f; }, "T1");
  Tensor T2 = compute({M, N}, [&](Var i, Var j) { return ir::max(T1(i, j), Expr(0.0f)); }, "T2");
  Tensor D = compute({M, N}, [&](Var i, Var j) { return T2(i, j) * ir::sigmoid(A(i, j)); }, "D");
  Workload w{"elementwise_chain", {A, B, D}, 2, nullptr, 1e-5};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int i = 0; i < M * N; ++i) {
      double a = t[0]->get(i), b = t[1]->get(i);
      double t1 = a * b + 1.0;
      double t2 = std::max(t1, 0.0);
      t[2]->set(i, t2 * (1.0 / (1.0 + std::exp(-a))));
    }
  };
  return w;
}

Workload softmax(int M, int N) {
  Tensor X = placeholder({M, N}, DataType::float32(), "X");
  IterVar k1 = reduce_axis(N, "k1");
  Tensor Mx = compute({M}, [&](Var i) { return reduce_max(X(i, k1->var), {k1}); }, "Mx");
  Tensor E = compute({M, N}, [&](Var i, Var j) { return ir::exp(X(i, j) - Mx(i)); }, "E");
  IterVar k2 = reduce_axis(N, "k2");
  Tensor S = compute({M}, [&](Var i) { return sum(E(i, k2->var), {k2}); }, "S");
  Tensor Y = compute({M, N}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
  Workload w{"softmax", {X, Y}, 1, nullptr, 1e-5};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int i = 0; i < M; ++i) {
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < N; ++j) mx = std::max(mx, t[0]->get(i * N + j));
      for (int j = 0; j < N; ++j) s += std::exp(t[0]->get(i * N + j) - mx);
      for (int j = 0; j < N; ++j) t[1]->set(i * N + j, std::exp(t[0]->get(i * N + j) - mx) / s);
    }
  };
  return w;
}

Workload conv2d_nhwc(int N, int H, int W, int C, int F, int R, int pad) {
  Tensor In = placeholder({N, H, W, C}, DataType::float32(), "In");
  Tensor Wt = placeholder({R, R, C, F}, DataType::float32(), "Wt");
  Tensor Pad = compute(
      {N, H + 2 * pad, W + 2 * pad, C},
      [&](const std::vector<Var>& v) {
        Expr inside = v[1] >= pad && v[1] < H + pad && v[2] >= pad && v[2] < W + pad;
        return ir::if_then_else(inside, In(v[0], v[1] - pad, v[2] - pad, v[3]), Expr(0.0f));
      },
      "Pad");
  int HO = H + 2 * pad - R + 1, WO = W + 2 * pad - R + 1;
  IterVar ry = reduce_axis(R, "ry"), rx = reduce_axis(R, "rx"), rc = reduce_axis(C, "rc");
  Tensor O = compute(
      {N, HO, WO, F},
      [&](const std::vector<Var>& v) {
        return sum(Pad(v[0], v[1] + ry->var, v[2] + rx->var, rc->var) * Wt(ry->var, rx->var, rc->var, v[3]),
                   {ry, rx, rc});
      },
      "O");
  Workload w{"conv2d_nhwc", {In, Wt, O}, 2, nullptr, 1e-4};
  w.reference = [=](std::vector<NDArray*>& t) {
    for (int n = 0; n < N; ++n)
      for (int y = 0; y < HO; ++y)
        for (int x = 0; x < WO; ++x)
          for (int f = 0; f < F; ++f) {
            double acc = 0;
            for (int a = 0; a < R; ++a)
              for (int b = 0; b < R; ++b)
                for (int c = 0; c < C; ++c) {
                  int yy = y + a - pad, xx = x + b - pad;
                  if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                  acc += t[0]->get(((n * H + yy) * W + xx) * C + c) * t[1]->get(((a * R + b) * C + c) * F + f);
                }
            t[2]->set(((n * HO + y) * WO + x) * F + f, acc);
          }
  };
  return w;
}

std::vector<std::string> inlinable_stages(const Workload& w, const schedule::Schedule& s) {
  std::vector<std::string> out;
  for (auto& st : s.stages())
    if (!st->is_placeholder() && !st->is_output && !st->is_reduction()) out.push_back(st->name);
  return out;
}

std::string check_schedule(const Workload& w, const schedule::Schedule& sch, uint64_t seed) {
  std::ostringstream err;
  std::vector<NDArray> arrays;
  for (size_t i = 0; i < w.args.size(); ++i) {
    std::vector<int64_t> shape;
    for (auto& e : w.args[i].shape()) shape.push_back(*ir::as_const_int(e));
    arrays.emplace_back(shape, runtime::DType::parse(w.args[i].dtype().to_string()));
    if (i < w.num_inputs)
      arrays.back().fill_random(seed + i, -1.0, 1.0);
    else
      arrays.back().fill_bytes(0xFF);  // NaN poison
  }
  ir::LoweredFunc f;
  std::unique_ptr<codegen::JitModule> jit;
  try {
    f = lower::lower(sch, w.args, "kernel");
    jit = codegen::JitModule::compile(f);
  } catch (const std::exception& e) {
    err << w.name << " seed " << seed << ": build failed: " << e.what() << "\nschedule:\n" << sch.to_string();
    return err.str();
  }
  std::vector<void*> ptrs;
  for (auto& a : arrays) ptrs.push_back(a.data());
  jit->call_packed(ptrs.data());
  std::vector<NDArray> expect;
  std::vector<NDArray*> refs;
  for (size_t i = 0; i < arrays.size(); ++i) expect.push_back(arrays[i].copy());
  for (auto& e : expect) refs.push_back(&e);
  w.reference(refs);
  for (size_t i = w.num_inputs; i < arrays.size(); ++i) {
    for (int64_t k = 0; k < arrays[i].num_elements(); ++k) {
      double got = arrays[i].get(k), want = expect[i].get(k);
      double tol = w.tolerance * std::max(1.0, std::fabs(want));
      if (!(std::fabs(got - want) <= tol)) {
        err << w.name << " seed " << seed << ": output " << w.args[i].name() << "[" << k << "] = " << got
            << ", expected " << want << "\nschedule:\n"
            << sch.to_string() << "lowered:\n"
            << ir::to_string(f);
        return err.str();
      }
    }
  }
  return "";
}

}  // namespace tessel::testing
