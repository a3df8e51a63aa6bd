// Private to the worker: what the CPU and GPU measurement paths share (measure_worker.cpp defines them).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "tessel/runtime/ndarray.h"
#include "tessel/tuner/worker_protocol.h"

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
/** The timed repeats of both paths: at least min_repeats and min_time_s of timed time, at most
 *  max_repeats, none started after half of run_timeout_s (elapsed_s: seconds since the candidate
 *  started); early_aborted when the first repeat is early_abort_ratio x slower than best_so_far_s.
 *  run_once runs one repeat and returns its seconds. */
WorkerResponse timed_repeats(const WorkerRequest& r, const WorkerTiming& opt, const std::function<double()>& run_once,
                             const std::function<double()>& elapsed_s);

}  // namespace tessel::tuner
