// tessel's version string (from CMake's project version).
#pragma once
namespace tessel {
/** "MAJOR.MINOR.PATCH" of this build. */
const char* version();
}  // namespace tessel
