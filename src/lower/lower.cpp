// The lowering pipeline, as a list of passes. Each pass is one function in its own file pair.
#include "tessel/lower/lower.h"

#include <chrono>
#include <iomanip>
#include <iostream>

#include "tessel/ir/printer.h"
#include "tessel/ir/simplify.h"
#include "tessel/lower/build_loop_nest.h"
#include "tessel/lower/inject_virtual_thread.h"
#include "tessel/lower/software_pipeline.h"
#include "tessel/lower/storage_flatten.h"
#include "tessel/lower/unroll_loops.h"
#include "tessel/lower/vectorize_loops.h"
#include "tessel/support/log.h"

namespace tessel::lower {

namespace {
// Runs one pass, dumping its output and timing it when asked (TESSEL_DUMP_IR / TESSEL_PASS_TIMING).
class PassRunner {
 public:
  ~PassRunner() {
    if (!pass_timing_enabled()) return;
    std::cerr << "[tessel] pass timing (us):\n";
    for (auto& [n, us] : times_) std::cerr << "  " << std::left << std::setw(20) << n << us << "\n";
  }
  template <class F>
  ir::Stmt run(const char* name, F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    ir::Stmt s = f();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    times_.emplace_back(name, us);
    if (dump_ir_after(name)) std::cerr << "// ---- IR after " << name << " ----\n" << ir::to_string(s);
    return s;
  }

 private:
  std::vector<std::pair<std::string, long>> times_;
};
}  // namespace

ir::LoweredFunc lower(const schedule::Schedule& sch, const std::vector<te::Tensor>& args, const std::string& name,
                      const LowerOptions& opt) {
  TESSEL_CHECK(!name.empty()) << "the lowered function needs a name";
  TESSEL_CHECK(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')
      << "function name '" << name << "' must start with a letter or underscore";
  for (char c : name)
    TESSEL_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '_')
        << "function name '" << name << "' may contain only letters, digits and underscores";
  auto simp = [&](const ir::Stmt& s) { return opt.simplify ? ir::simplify(s) : s; };
  PassRunner p;
  ir::LoweredFunc f;
  f.name = name;
  ir::Stmt s = p.run("build_loop_nest", [&] { return build_loop_nest(sch, args, &f.params); });
  s = p.run("simplify", [&] { return simp(s); });
  s = p.run("storage_flatten", [&] { return storage_flatten(s); });
  s = p.run("simplify_flat", [&] { return simp(s); });
  s = p.run("inject_virtual_thread", [&] { return inject_virtual_thread(s); });
  s = p.run("software_pipeline", [&] { return software_pipeline(s); });
  s = p.run("vectorize_loops", [&] { return vectorize_loops(s); });
  s = p.run("unroll_loops", [&] { return unroll_loops(s); });
  s = p.run("simplify_final", [&] { return simp(s); });
  f.body = s;
  return f;
}

}  // namespace tessel::lower
