#include "gpu_schedules.h"

#include "tessel/ir/op.h"

namespace tessel::testing {

schedule::Schedule softmax_row_per_thread_gpu(const Workload& w, int threads) {
  schedule::Schedule s({w.args.back()});
  s.compute_inline("E");
  auto [bx, tx] = s.split("Y", "i", threads);
  s.bind("Y", bx, "blockIdx.x");
  s.bind("Y", tx, "threadIdx.x");
  s.compute_at("S", "Y", tx);
  s.compute_at("Mx", "Y", tx);
  return s;
}

schedule::Schedule conv2d_nhwc_shared_filter_gpu(const Workload& w, int pixels_per_block, int filters_per_thread,
                                                 int rc_slice) {
  schedule::Schedule s({w.args.back()});
  s.compute_inline("Pad");
  std::string ol = s.cache_write("O", "local");
  std::string ws = s.cache_read("Wt", "shared", {ol});
  auto o = s.leaf_names("O");  // n, y, x, f
  std::string p = s.fuse("O", {o[0], o[1], o[2]});
  auto [po, py] = s.split("O", p, pixels_per_block);
  auto [fx, fi] = s.split("O", o[3], filters_per_thread);
  s.reorder("O", {po, py, fx, fi});
  s.bind("O", po, "blockIdx.x");
  s.bind("O", py, "threadIdx.y");
  s.bind("O", fx, "threadIdx.x");
  s.vectorize("O", fi);
  s.compute_at(ol, "O", fx);
  auto [rco, rci] = s.split(ol, "rc", rc_slice);
  auto l = s.leaf_names(ol);  // 4 data axes, ry, rx, rc.o, rc.i
  s.reorder(ol, {"ry", "rx", rco, rci, l[0], l[1], l[2], l[3]});
  s.unroll(ol, rci);
  s.compute_at(ws, ol, rco);
  // Cooperative fetch of the filter slice by the block's threads (threadIdx.x over filters, y over pixels).
  int64_t filters = s.stage("O").find_axis(fx)->extent;
  std::string f = s.fuse(ws, s.leaf_names(ws));
  auto [fo, ftx] = s.split(ws, f, filters);
  auto [rest, fty] = s.split(ws, fo, pixels_per_block);
  s.bind(ws, fty, "threadIdx.y");
  s.bind(ws, ftx, "threadIdx.x");
  return s;
}

}  // namespace tessel::testing
