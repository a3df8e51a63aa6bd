#include "tessel/support/log.h"

#include <cstdlib>
#include <sstream>

#include "tessel/support/version.h"

namespace tessel {

int log_level() {
  static const int level = [] {
    const char* v = std::getenv("TESSEL_LOG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

bool dump_ir_after(const std::string& pass) {
  const char* v = std::getenv("TESSEL_DUMP_IR");
  if (!v) return false;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == pass || item == "all") return true;
  }
  return false;
}

bool pass_timing_enabled() {
  const char* v = std::getenv("TESSEL_PASS_TIMING");
  return v && std::atoi(v) != 0;
}

const char* version() { return TESSEL_VERSION; }

}  // namespace tessel
