// Logging and debug switches read from the environment.
//   TESSEL_LOG=1..3          verbosity of tessel's log messages (stderr)
//   TESSEL_DUMP_IR=pass,...  print the IR after the named lowering passes ("all" for every pass)
//   TESSEL_PASS_TIMING=1     print a per-pass timing table after each lowering
#pragma once
#include <iostream>
#include <string>

namespace tessel {

/** Verbosity from TESSEL_LOG (0 when unset). */
int log_level();

/** True when TESSEL_DUMP_IR names this pass (or "all"). */
bool dump_ir_after(const std::string& pass);

/** True when TESSEL_PASS_TIMING is set to a non-zero value. */
bool pass_timing_enabled();

}  // namespace tessel

#define TESSEL_LOG(level) \
  if (::tessel::log_level() < (level)) {} else std::cerr << "[tessel] "
