// The operator-library test harness: every registered operator, built from spec strings through the
// registry, scheduled with ops::default_schedule, JIT-compiled, run on seeded random inputs with
// poisoned outputs, and compared with a plain C++ reference written in the test.
// Each test file registers its operators' cases (op name, reference, specs) with add_cases; the
// registry test checks that every registered operator has a case.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessel/ops/registry.h"
#include "tessel/runtime/ndarray.h"

namespace oplib {

using tessel::runtime::NDArray;
using Inputs = std::vector<const NDArray*>;
/** The expected output (row-major) for the parsed spec and its inputs, computed in double. */
using RefFn = std::function<std::vector<double>(const tessel::ops::OpArgs&, const Inputs&)>;

/** The test specs of one operator and its reference. */
struct OpCase {
  std::string op;
  RefFn ref;
  std::vector<std::string> specs;
};

/** Registers cases (at static initialization of a test file); returns true. */
bool add_cases(std::vector<OpCase> cases);
/** Every registered case. */
const std::vector<OpCase>& all_cases();
/** Runs every spec of the case named op (REQUIREs that it exists). */
void check_op(const std::string& op);
/** Builds, runs (1 and 2 threads) and checks one spec against ref. */
void check_spec(const std::string& spec, const RefFn& ref);

/** Row-major element (as double) of an array, by multi-index. */
double at(const NDArray& a, std::initializer_list<int64_t> idx);
/** Extents of an array. */
inline int64_t dim(const NDArray& a, int d) { return a.shape().at(d); }

}  // namespace oplib
