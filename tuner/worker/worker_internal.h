// Private to the worker: what the CPU and GPU measurement paths share (measure_worker.cpp defines them).
#pragma once
#include <cstdint>
#include <string>

#include "tessel/runtime/ndarray.h"

namespace tessel::tuner {

/** A failed measurement: becomes a response with this kind and message. fatal: the process must not
 *  serve another request (a GPU context a kernel broke); the response says so and the worker exits. */
struct Fail {
  std::string kind, message;
  bool fatal = false;
};

/** True for float and bfloat dtypes. */
bool is_float_dtype(runtime::DType t);
/** The byte outputs are poisoned with before a checked run: 0xFF (NaN) for floats, 0xAB otherwise. */
uint8_t poison_byte(runtime::DType t);
/** Empty when got matches want (float: |a-b| <= rtol (1 + |b|); integers exact); otherwise names the
 *  first mismatching element and the count. */
std::string compare_outputs(const runtime::NDArray& got, const runtime::NDArray& want, const std::string& name);
/** A number with 9 significant digits. */
std::string fmt(double v);

}  // namespace tessel::tuner
