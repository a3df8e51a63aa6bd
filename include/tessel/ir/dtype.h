// Scalar and vector data types: a code (int, uint, float, bfloat, bool, handle), a bit width and a
// lane count (1 for scalars). Printed as "float32", "int8", "float32x8", "bool".
#pragma once
#include <cstdint>
#include <string>

namespace tessel::ir {

struct DataType {
  enum Code : uint8_t { kInt, kUInt, kFloat, kBFloat, kBool, kHandle };
  Code code = kInt;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

  static constexpr DataType float32(int l = 1) { return {kFloat, 32, l}; }
  static constexpr DataType float64(int l = 1) { return {kFloat, 64, l}; }
  static constexpr DataType float16(int l = 1) { return {kFloat, 16, l}; }
  static constexpr DataType bfloat16(int l = 1) { return {kBFloat, 16, l}; }
  static constexpr DataType int8(int l = 1) { return {kInt, 8, l}; }
  static constexpr DataType uint8(int l = 1) { return {kUInt, 8, l}; }
  static constexpr DataType int32(int l = 1) { return {kInt, 32, l}; }
  static constexpr DataType int64(int l = 1) { return {kInt, 64, l}; }
  static constexpr DataType boolean(int l = 1) { return {kBool, 1, l}; }
  static constexpr DataType handle() { return {kHandle, 64, 1}; }

  bool is_int() const { return code == kInt; }
  bool is_uint() const { return code == kUInt; }
  bool is_integer() const { return code == kInt || code == kUInt; }  // int or uint (not bool)
  bool is_float() const { return code == kFloat || code == kBFloat; }
  bool is_bool() const { return code == kBool; }
  bool is_handle() const { return code == kHandle; }
  bool is_scalar() const { return lanes == 1; }
  bool is_vector() const { return lanes > 1; }

  DataType with_lanes(int l) const { return {code, bits, l}; }
  DataType element_of() const { return with_lanes(1); }
  /** Storage bytes of one lane (bool takes one byte). */
  int bytes_per_lane() const { return bits <= 8 ? 1 : bits / 8; }

  bool operator==(const DataType& o) const { return code == o.code && bits == o.bits && lanes == o.lanes; }
  bool operator!=(const DataType& o) const { return !(*this == o); }

  std::string to_string() const;
  /** Parses the printed form; throws UserError naming the text on failure. */
  static DataType parse(const std::string& s);
};

std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace tessel::ir
