// SHA-256 (FIPS 180-4), for stable content keys (workload keys, artifact names).
#pragma once
#include <string>

namespace tessel {

/** Lower-case hex digest (64 characters) of the bytes of s. */
std::string sha256_hex(const std::string& s);

}  // namespace tessel
