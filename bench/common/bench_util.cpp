#include "bench_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace tessel::bench {

namespace {

#define FMA12(reg, a, b)                                                                              \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "0\n vfmadd231ps %%" a ", %%" b ", %%" reg "1\n"             \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "2\n vfmadd231ps %%" a ", %%" b ", %%" reg "3\n"             \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "4\n vfmadd231ps %%" a ", %%" b ", %%" reg "5\n"             \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "6\n vfmadd231ps %%" a ", %%" b ", %%" reg "7\n"             \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "8\n vfmadd231ps %%" a ", %%" b ", %%" reg "9\n"             \
  "vfmadd231ps %%" a ", %%" b ", %%" reg "10\n vfmadd231ps %%" a ", %%" b ", %%" reg "11\n"

// Registers start at zero: uninitialized ones may hold denormals, which make FMAs take microcode assists.
#define ZERO(r)                                                                                      \
  "vxorps %%" r "0, %%" r "0, %%" r "0\n vxorps %%" r "1, %%" r "1, %%" r "1\n"                       \
  "vxorps %%" r "2, %%" r "2, %%" r "2\n vxorps %%" r "3, %%" r "3, %%" r "3\n"                       \
  "vxorps %%" r "4, %%" r "4, %%" r "4\n vxorps %%" r "5, %%" r "5, %%" r "5\n"                       \
  "vxorps %%" r "6, %%" r "6, %%" r "6\n vxorps %%" r "7, %%" r "7, %%" r "7\n"                       \
  "vxorps %%" r "8, %%" r "8, %%" r "8\n vxorps %%" r "9, %%" r "9, %%" r "9\n"                       \
  "vxorps %%" r "10, %%" r "10, %%" r "10\n vxorps %%" r "11, %%" r "11, %%" r "11\n"                 \
  "vxorps %%" r "14, %%" r "14, %%" r "14\n vxorps %%" r "15, %%" r "15, %%" r "15\n"

__attribute__((target("avx512f"))) void fma_zmm(long iters) {
  asm volatile(ZERO("zmm")::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
               "xmm10", "xmm11", "xmm14", "xmm15");
  for (long i = 0; i < iters; ++i)
    asm volatile(FMA12("zmm", "zmm14", "zmm15")::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                 "xmm8", "xmm9", "xmm10", "xmm11");
}
__attribute__((target("avx2,fma"))) void fma_ymm(long iters) {
  asm volatile(ZERO("ymm")::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
               "xmm10", "xmm11", "xmm14", "xmm15");
  for (long i = 0; i < iters; ++i)
    asm volatile(FMA12("ymm", "ymm14", "ymm15")::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                 "xmm8", "xmm9", "xmm10", "xmm11");
}
#undef FMA12
#undef ZERO

}  // namespace

double measure_fma_peak_gflops(int vector_bytes) {
  bool zmm = vector_bytes >= 64;
  const long iters = 20000000;
  std::vector<double> g;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    zmm ? fma_zmm(iters) : fma_ymm(iters);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    g.push_back(iters * 12.0 * (zmm ? 16 : 8) * 2 / t / 1e9);
  }
  std::sort(g.begin(), g.end());
  return g[2];
}

runtime::TimingResult time_it(const std::function<void()>& f, int min_repeats, double min_total_s) {
  return runtime::time_function(f, {1, min_repeats, min_total_s, 1000});
}

double max_rel_error(const float* a, const float* b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i])));
    if (std::isnan(e)) return INFINITY;
    m = std::max(m, e);
  }
  return m;
}

void Table::print() const {
  std::vector<size_t> w(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    w[c] = columns_[c].size();
    for (auto& r : rows_) w[c] = std::max(w[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) std::printf("%-*s  ", int(w[c]), r[c].c_str());
    std::printf("\n");
  };
  line(columns_);
  for (auto& r : rows_) line(r);
}

bool Table::write_csv(const std::string& path) const {
  if (path.empty()) return true;
  std::ofstream os(path);
  if (!os) {
    std::cerr << "cannot write " << path << "\n";
    return false;
  }
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) {
      os << (c ? "," : "");
      if (r[c].find_first_of(",\"\n") == std::string::npos) {
        os << r[c];
        continue;
      }
      os << '"';  // RFC 4180: quote fields with commas (workload specs), double inner quotes
      for (char ch : r[c]) os << (ch == '"' ? "\"\"" : std::string(1, ch));
      os << '"';
    }
    os << "\n";
  };
  line(columns_);
  for (auto& r : rows_) line(r);
  return bool(os);
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace tessel::bench
