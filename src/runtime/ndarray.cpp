// NDArray storage, element access for every dtype, and the float16/bfloat16 conversions tests use.
#include "tessel/runtime/ndarray.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "tessel/runtime/c_runtime.h"
#include "tessel/support/error.h"

namespace tessel::runtime {

std::string DType::to_string() const {
  switch (code) {
    case kInt:
      return "int" + std::to_string(bits);
    case kUInt:
      return "uint" + std::to_string(bits);
    case kFloat:
      return "float" + std::to_string(bits);
    case kBFloat:
      return "bfloat" + std::to_string(bits);
    case kBool:
      return "bool";
  }
  return "?";
}

DType DType::parse(const std::string& s) {
  static const std::pair<const char*, DType> table[] = {
      {"float32", {kFloat, 32}},   {"float64", {kFloat, 64}}, {"float16", {kFloat, 16}},
      {"bfloat16", {kBFloat, 16}}, {"int8", {kInt, 8}},       {"uint8", {kUInt, 8}},
      {"int32", {kInt, 32}},       {"int64", {kInt, 64}},     {"bool", {kBool, 1}}};
  for (auto& [name, t] : table)
    if (s == name) return t;
  TESSEL_CHECK(false) << "NDArray: unsupported dtype '" << s << "'";
  return {};
}

NDArray::NDArray(std::vector<int64_t> shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {
  for (size_t i = 0; i < shape_.size(); ++i)
    TESSEL_CHECK(shape_[i] >= 0) << "NDArray: dimension " << i << " has negative extent " << shape_[i];
  data_ = tessel_alloc_aligned(kAlignment, int64_t(std::max<size_t>(nbytes(), 1)));
  TESSEL_CHECK(data_ != nullptr) << "NDArray: cannot allocate " << nbytes() << " bytes";
}

NDArray::NDArray(NDArray&& o) noexcept
    : shape_(std::move(o.shape_)), dtype_(o.dtype_), data_(std::exchange(o.data_, nullptr)) {}

NDArray& NDArray::operator=(NDArray&& o) noexcept {
  if (this != &o) {
    tessel_free_aligned(data_);
    shape_ = std::move(o.shape_);
    dtype_ = o.dtype_;
    data_ = std::exchange(o.data_, nullptr);
  }
  return *this;
}

NDArray::~NDArray() { tessel_free_aligned(data_); }

int64_t NDArray::num_elements() const {
  int64_t n = 1;
  for (auto s : shape_) n *= s;
  return n;
}

void NDArray::fill_bytes(uint8_t b) { std::memset(data_, b, nbytes()); }

void NDArray::fill_random(uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  int64_t n = num_elements();
  for (int64_t i = 0; i < n; ++i) {
    double v = dist(rng);
    if (dtype_.code == DType::kBool) v = v < (lo + hi) / 2 ? 0 : 1;
    set(i, v);
  }
}

double NDArray::get(int64_t i) const {
  const char* p = static_cast<const char*>(data_) + i * dtype_.bytes();
  switch (dtype_.code) {
    case DType::kBool:
      return *reinterpret_cast<const uint8_t*>(p) != 0;
    case DType::kBFloat:
      return bfloat16_to_float(*reinterpret_cast<const uint16_t*>(p));
    case DType::kFloat:
      if (dtype_.bits == 16) return half_to_float(*reinterpret_cast<const uint16_t*>(p));
      if (dtype_.bits == 32) return *reinterpret_cast<const float*>(p);
      return *reinterpret_cast<const double*>(p);
    case DType::kInt:
      if (dtype_.bits == 8) return *reinterpret_cast<const int8_t*>(p);
      if (dtype_.bits == 16) return *reinterpret_cast<const int16_t*>(p);
      if (dtype_.bits == 32) return *reinterpret_cast<const int32_t*>(p);
      return double(*reinterpret_cast<const int64_t*>(p));
    case DType::kUInt:
      if (dtype_.bits == 8) return *reinterpret_cast<const uint8_t*>(p);
      if (dtype_.bits == 16) return *reinterpret_cast<const uint16_t*>(p);
      if (dtype_.bits == 32) return *reinterpret_cast<const uint32_t*>(p);
      return double(*reinterpret_cast<const uint64_t*>(p));
  }
  return 0;
}

void NDArray::set(int64_t i, double v) {
  char* p = static_cast<char*>(data_) + i * dtype_.bytes();
  switch (dtype_.code) {
    case DType::kBool:
      *reinterpret_cast<uint8_t*>(p) = v != 0;
      break;
    case DType::kBFloat:
      *reinterpret_cast<uint16_t*>(p) = float_to_bfloat16(float(v));
      break;
    case DType::kFloat:
      if (dtype_.bits == 16)
        *reinterpret_cast<uint16_t*>(p) = float_to_half(float(v));
      else if (dtype_.bits == 32)
        *reinterpret_cast<float*>(p) = float(v);
      else
        *reinterpret_cast<double*>(p) = v;
      break;
    case DType::kInt:
      if (dtype_.bits == 8)
        *reinterpret_cast<int8_t*>(p) = int8_t(v);
      else if (dtype_.bits == 16)
        *reinterpret_cast<int16_t*>(p) = int16_t(v);
      else if (dtype_.bits == 32)
        *reinterpret_cast<int32_t*>(p) = int32_t(v);
      else
        *reinterpret_cast<int64_t*>(p) = int64_t(v);
      break;
    case DType::kUInt:
      if (dtype_.bits == 8)
        *reinterpret_cast<uint8_t*>(p) = uint8_t(v);
      else if (dtype_.bits == 16)
        *reinterpret_cast<uint16_t*>(p) = uint16_t(v);
      else if (dtype_.bits == 32)
        *reinterpret_cast<uint32_t*>(p) = uint32_t(v);
      else
        *reinterpret_cast<uint64_t*>(p) = uint64_t(v);
      break;
  }
}

NDArray NDArray::copy() const {
  NDArray r(shape_, dtype_);
  std::memcpy(r.data_, data_, nbytes());
  return r;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float mag;
  if (exp == 0) {
    mag = std::ldexp(float(man), -24);
  } else if (exp == 31) {
    mag = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    mag = std::ldexp(float(man | 0x400), int(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &mag, 4);
  bits |= sign;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00;   // NaN
  if (ax >= 0x477ff000) return sign | 0x7c00;  // rounds to inf (>= 65520)
  if (ax < 0x38800000) {                       // subnormal half (or zero)
    float a;
    std::memcpy(&a, &ax, 4);
    return sign | uint16_t(std::nearbyint(a * 16777216.0f));  // a / 2^-24, ties to even
  }
  uint32_t r = ax + 0xfff + ((ax >> 13) & 1);  // round to nearest even at bit 13
  return sign | uint16_t((r - 0x38000000) >> 13);
}

float bfloat16_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

}  // namespace tessel::runtime
