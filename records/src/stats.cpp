#include "tessel/records/stats.h"

#include <cstddef>

namespace tessel::records {

bool slower_beyond_noise(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  size_t n = a.size(), m = b.size();
  if (n < 3 || m < 3) return false;
  double u = 0;  // pairs (x of a, y of b) with x > y; a tie counts for b (the table below has no ties, and
                 // this keeps the test on the safe side of "slower")
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : 0.0;
  // count[k][j][v]: orderings of k a's and j b's with U = v. The largest of them is an a (after all j b's:
  // U rises by j) or a b (U unchanged).
  std::vector<std::vector<std::vector<double>>> count(n + 1, std::vector<std::vector<double>>(m + 1));
  for (size_t k = 0; k <= n; ++k)
    for (size_t j = 0; j <= m; ++j) {
      count[k][j].assign(k * j + 1, 0.0);
      if (k == 0 || j == 0) {
        count[k][j][0] = 1;
        continue;
      }
      for (size_t v = 0; v <= k * j; ++v)
        count[k][j][v] = (v >= j ? count[k - 1][j][v - j] : 0.0) +
                         (v < count[k][j - 1].size() ? count[k][j - 1][v] : 0.0);
    }
  double total = 0, tail = 0;
  for (size_t v = 0; v <= n * m; ++v) {
    total += count[n][m][v];
    if (double(v) >= u - 1e-9) tail += count[n][m][v];
  }
  return tail / total < alpha;
}

}  // namespace tessel::records
