// Shared by the benchmarks: the FMA-throughput peak of one core, timing with a correctness check,
// a results table printed to stdout and written as CSV.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tessel/runtime/timer.h"

namespace tessel::bench {

/** Measured fp32 FMA throughput of one core (GFLOP/s): independent vfmadd231ps chains on the widest
 *  vector registers the CPU has (zmm with AVX-512, ymm with AVX2/FMA); the median of 5 runs. */
double measure_fma_peak_gflops(int vector_bytes);

/** Median of f's run time over warm-up + repeats (see runtime::time_function). */
runtime::TimingResult time_it(const std::function<void()>& f, int min_repeats = 5, double min_total_s = 0.3);

/** max |a - b| / (1 + |b|) over n floats; NaN counts as infinite. */
double max_rel_error(const float* a, const float* b, int64_t n);

/** Rows with named columns; print() aligns them, write_csv() writes them (header first). */
class Table {
 public:
  explicit Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const;
  /** Writes the CSV; an empty path writes nothing. Returns false (with a message) on failure. */
  bool write_csv(const std::string& path) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/** Formats v with the given number of decimals. */
std::string fmt(double v, int decimals = 2);

}  // namespace tessel::bench
