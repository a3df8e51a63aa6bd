// The operator-library test harness (see oplib_harness.h).
#include "oplib_harness.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>

#include "tessel/codegen/jit.h"
#include "tessel/lower/lower.h"
#include "tessel/ops/default_schedule.h"
#include "tessel/runtime/thread_pool.h"

namespace oplib {

using namespace tessel;

namespace {
std::vector<OpCase>& cases() {
  static std::vector<OpCase> c;
  return c;
}

// TESSEL_TEST_SEED (if set) mixed with a hash of the spec: reproducible, different per spec.
uint64_t seed_for(const std::string& spec) {
  uint64_t base = 20240611;
  if (const char* e = std::getenv("TESSEL_TEST_SEED")) base = std::strtoull(e, nullptr, 10);
  return base ^ (std::hash<std::string>{}(spec)&0xffffffffu);
}

std::vector<int64_t> shape_of(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (auto& e : t.shape()) s.push_back(*ir::as_const_int(e));
  return s;
}
}  // namespace

bool add_cases(std::vector<OpCase> c) {
  for (auto& x : c) cases().push_back(std::move(x));
  return true;
}

const std::vector<OpCase>& all_cases() { return cases(); }

double at(const NDArray& a, std::initializer_list<int64_t> idx) {
  if (idx.size() != a.shape().size())
    FAIL("reference reads a rank-" << a.shape().size() << " array with " << idx.size() << " indices");
  int64_t off = 0, d = 0;
  for (int64_t i : idx) {
    int64_t n = a.shape()[d++];
    if (i < 0 || i >= n) FAIL("reference index " << i << " out of range [0, " << n << ") on axis " << d - 1);
    off = off * n + i;
  }
  return a.get(off);
}

void check_spec(const std::string& spec, const RefFn& ref) {
  uint64_t seed = seed_for(spec);
  INFO("spec " << spec << ", seed " << seed);
  auto [def, args] = ops::parse_op_spec(spec);
  ops::OpTensors t = def->build(args);
  REQUIRE(t.outputs.size() == 1);
  auto jit = codegen::JitModule::compile(lower::lower(ops::default_schedule(t), t.args(), "f"));

  std::vector<NDArray> in;
  for (size_t i = 0; i < t.inputs.size(); ++i) {
    in.emplace_back(shape_of(t.inputs[i]), t.inputs[i].dtype().to_string());
    bool integer = t.inputs[i].dtype().is_integer();
    in.back().fill_random(seed + 17 * i, integer ? -20 : -1, integer ? 20 : 1);
  }
  NDArray out(shape_of(t.outputs[0]), t.outputs[0].dtype().to_string());
  Inputs ins;
  std::vector<void*> ptrs;
  for (auto& a : in) {
    ins.push_back(&a);
    ptrs.push_back(a.data());
  }
  ptrs.push_back(out.data());
  std::vector<double> want = ref(args, ins);
  REQUIRE(int64_t(want.size()) == out.num_elements());

  bool exact = t.outputs[0].dtype().is_integer();
  int saved = runtime::num_threads();
  // Two runs, each with outputs poisoned first: 0xFF is NaN for floats (-1 for ints), 0xAB is an
  // unreachable int32 / int8 value (and a tiny float), so an element left unwritten fails one of them.
  for (auto [threads, poison] : {std::pair<int, uint8_t>{1, 0xFF}, {2, 0xAB}}) {
    runtime::set_num_threads(threads);
    out.fill_bytes(poison);
    jit->call_packed(ptrs.data());
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      double got = out.get(i);
      bool ok = exact ? got == want[i] : std::fabs(got - want[i]) <= 2e-4 * (1 + std::fabs(want[i]));
      if (!ok) {
        runtime::set_num_threads(saved);
        FAIL("threads " << threads << ", element " << i << " of " << out.num_elements() << ": got " << got
                        << ", expected " << want[i]);
      }
    }
  }
  runtime::set_num_threads(saved);
}

void check_op(const std::string& op) {
  const OpCase* c = nullptr;
  for (auto& x : all_cases())
    if (x.op == op) c = &x;
  REQUIRE(c != nullptr);
  REQUIRE(!c->specs.empty());
  for (auto& spec : c->specs) {
    REQUIRE(spec.substr(0, spec.find(':')) == op);
    check_spec(spec, c->ref);
  }
}

}  // namespace oplib
