// NDArray: an owning, 64-byte-aligned, compact row-major tensor buffer for running compiled functions.
// The element type is a runtime::DType whose codes match ir::DataType (the runtime does not depend on
// the IR library); DType::parse/to_string use the same names ("float32", "bfloat16", "bool", ...).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

/** Element type of an NDArray (scalar; same codes and bit widths as ir::DataType). */
struct DType {
  enum Code : uint8_t { kInt, kUInt, kFloat, kBFloat, kBool };
  Code code = kFloat;
  uint8_t bits = 32;
  /** Storage bytes of one element (bool takes one byte). */
  int bytes() const { return bits <= 8 ? 1 : bits / 8; }
  std::string to_string() const;
  /** Parses "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"
   *  (throws UserError otherwise). */
  static DType parse(const std::string& s);
  bool operator==(const DType& o) const { return code == o.code && bits == o.bits; }
};

class NDArray {
 public:
  static constexpr size_t kAlignment = 64;

  NDArray() = default;
  /** Allocates an uninitialized array (64-byte aligned, at least one byte). */
  NDArray(std::vector<int64_t> shape, DType dtype);
  NDArray(std::vector<int64_t> shape, const std::string& dtype) : NDArray(std::move(shape), DType::parse(dtype)) {}
  NDArray(const NDArray&) = delete;
  NDArray& operator=(const NDArray&) = delete;
  NDArray(NDArray&& o) noexcept;
  NDArray& operator=(NDArray&& o) noexcept;
  ~NDArray();

  const std::vector<int64_t>& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t num_elements() const;
  size_t nbytes() const { return size_t(num_elements()) * dtype_.bytes(); }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T>
  T* data_as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data_as() const {
    return static_cast<const T*>(data_);
  }

  /** Sets every byte to b (e.g. 0xAB to poison outputs; 0xFF gives NaN for floats). */
  void fill_bytes(uint8_t b);
  /** Fills with uniform random values in [lo, hi) from a seeded generator (ints are truncated; bool
   *  is 0/1; float16/bfloat16 are rounded to nearest even). */
  void fill_random(uint64_t seed, double lo = -1.0, double hi = 1.0);
  /** Element i converted to double (any dtype). */
  double get(int64_t i) const;
  /** Sets element i from a double (converted to the dtype as a C cast / round-to-nearest-even). */
  void set(int64_t i, double v);
  /** A deep copy. */
  NDArray copy() const;

 private:
  std::vector<int64_t> shape_;
  DType dtype_;
  void* data_ = nullptr;
};

/** IEEE half <-> float and bfloat16 <-> float (round to nearest even; NaN stays NaN). */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

}  // namespace tessel::runtime
