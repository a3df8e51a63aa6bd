// Private to the worker: running PTX candidates and references on a CUDA device (docs/gpu.md).
// Inputs are uploaded, outputs poisoned on the device (0xFF bytes = NaN), the kernels launched on one
// stream, the checked run compared with the reference, then warm-up and timed repeats between CUDA
// events, each after an L2 flush when asked. CUDA errors become Fail kinds: illegal address / launch
// failure -> runtime_error (fatal: the context is unusable), a kernel past the time limit ->
// run_timeout (fatal), a launch the device refuses -> launch_error, a PTX the driver rejects ->
// compile_error, no driver -> worker_lost "no CUDA driver (libcuda.so.1) on this machine".
#pragma once
#include <vector>

#include "tessel/runtime/ndarray.h"
#include "tessel/tuner/worker_protocol.h"

namespace tessel::tuner {

/** Runs the "ptx" reference of r once: args in request order (inputs filled, outputs receive the
 *  result). Throws Fail. */
void gpu_run_reference(const WorkerRequest& r, const std::vector<runtime::NDArray*>& args, double timeout_s);

/** Checks and times the "ptx" candidate of r. inputs: the pristine inputs in request order of the
 *  inputs; ref_outputs: the reference outputs in request order of the outputs. Throws Fail. */
WorkerResponse gpu_measure(const WorkerRequest& r, const WorkerTiming& opt,
                           const std::vector<const runtime::NDArray*>& inputs,
                           const std::vector<const runtime::NDArray*>& ref_outputs);

}  // namespace tessel::tuner
