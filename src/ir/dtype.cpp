#include "tessel/ir/dtype.h"

#include <ostream>

#include "tessel/support/error.h"

namespace tessel::ir {

std::string DataType::to_string() const {
  std::string s;
  switch (code) {
    case kInt: s = "int" + std::to_string(bits); break;
    case kUInt: s = "uint" + std::to_string(bits); break;
    case kFloat: s = "float" + std::to_string(bits); break;
    case kBFloat: s = "bfloat" + std::to_string(bits); break;
    case kBool: s = "bool"; break;
    case kHandle: s = "handle"; break;
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

DataType DataType::parse(const std::string& text) {
  std::string s = text;
  int lanes = 1;
  auto x = s.find('x');
  if (x != std::string::npos) {
    std::string l = s.substr(x + 1);
    TESSEL_CHECK(!l.empty() && l.find_first_not_of("0123456789") == std::string::npos && l.size() < 6)
        << "bad data type '" << text << "': lanes after 'x' must be a number";
    lanes = std::stoi(l);
    TESSEL_CHECK(lanes >= 1) << "bad data type '" << text << "': lanes must be >= 1";
    s = s.substr(0, x);
  }
  struct Entry { const char* name; DataType t; };
  static const Entry table[] = {
      {"float32", float32()}, {"float64", float64()}, {"float16", float16()}, {"bfloat16", bfloat16()},
      {"int8", int8()},       {"uint8", uint8()},     {"int32", int32()},     {"int64", int64()},
      {"bool", boolean()},    {"int16", DataType(kInt, 16)}, {"uint16", DataType(kUInt, 16)},
      {"uint32", DataType(kUInt, 32)}, {"uint64", DataType(kUInt, 64)}, {"handle", handle()}};
  for (const auto& e : table) {
    if (s == e.name) return e.t.with_lanes(lanes);
  }
  TESSEL_CHECK(false) << "unknown data type '" << text
                      << "' (expected float32, float64, float16, bfloat16, int8, uint8, int32, int64, bool, "
                         "optionally with xLANES)";
  return {};
}

std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.to_string(); }

}  // namespace tessel::ir
