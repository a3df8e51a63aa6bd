#include "tessel/support/error.h"

namespace tessel::detail {
std::string icheck_prefix(const char* file, int line, const char* cond) {
  return std::string("internal error at ") + file + ":" + std::to_string(line) + ": check '" + cond +
         "' failed: ";
}
}  // namespace tessel::detail
