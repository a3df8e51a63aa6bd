// The messages between a tuner and a measurement worker (one JSON object per line over a pipe for a
// local worker; the same objects inside RPC messages for remote workers). Versioned. See
// docs/measurement.md.
//
// Request  {"version":1, "id":N, "op":"measure", "artifact": PATH, "function": NAME,
//           "reference": {"artifact": PATH, "function": NAME, "key": WORKLOAD_KEY},
//           "args": [{"name":"A", "shape":[...], "dtype":"float32", "output": false}, ...],
//           "options": MeasureOptions JSON, "best_so_far_s": X}
//          Optional (GPU candidates, docs/gpu.md): "artifact_kind": "ptx" (default "shared_library"),
//          "launch": the kernel description (else read from the .json beside the .ptx), "device": N
//          (CUDA device index, default 0), and "artifact_kind"/"launch" inside "reference" likewise.
//          Requests without them read exactly as before, so version 1 is kept.
//          {"version":1, "id":N, "op":"ping"}      -> message "pong"
//          {"version":1, "id":N, "op":"exit"}      -> the worker answers, then exits
// Response {"version":1, "id":N, "error_kind":"none"|..., "message":"...", "times":[...]}
//          plus "fatal": true when the worker is about to die (it crashed while running a candidate),
//          and "protocol_error": true when the request itself was malformed (error_kind "worker_lost").
//
// The worker draws inputs from options.seed (the same for every candidate of a workload), runs the
// reference once per workload key (cached), poisons outputs (NaN / 0xAB bytes) before each candidate
// run, and compares every output element with the reference (relative tolerance 1e-3 for floats, exact
// for integers): a mismatch is kWrongAnswer and such a candidate can never become the best.
//
// This header depends on nlohmann_json only: it is compiled into tessel-worker, which links neither
// LLVM nor the records database. Error kinds travel as records::error_kind_name() strings.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessel::tuner {

/** Protocol version of worker_protocol.h; a worker refuses requests with a newer version. */
constexpr int kWorkerProtocolVersion = 1;

/** One argument of the measured function (inputs and outputs, in call order). */
struct WorkerArg {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype = "float32";  // runtime::DType names
  bool output = false;
};

/** The part of MeasureOptions the worker uses (parsed from the same JSON; other fields ignored). */
struct WorkerTiming {
  int warmup = 1, min_repeats = 3, max_repeats = 100, threads = 0;
  double min_time_s = 0.05, early_abort_ratio = 5, run_timeout_s = 10;
  bool flush_cache = false;
  uint64_t seed = 1;
  /** Reads the fields above from MeasureOptions::to_json() (missing ones keep their defaults). */
  static WorkerTiming from_json(const nlohmann::json& j);
};

/** A request line, parsed. from_json throws std::invalid_argument naming the bad field. */
struct WorkerRequest {
  int version = kWorkerProtocolVersion;
  int64_t id = 0;
  std::string op;  // "measure", "ping", "exit"
  std::string artifact, function;
  std::string ref_artifact, ref_function, ref_key;
  /** "shared_library" (a .so exporting FUNCTION, run on the CPU) or "ptx" (PTX text run through the CUDA
   *  driver; function is then the first kernel's entry when launch names none). */
  std::string artifact_kind = "shared_library", ref_artifact_kind = "shared_library";
  /** The GPU kernel description (gpu_kernel_desc.h); null: read PATH.json beside PATH.ptx. */
  nlohmann::json launch, ref_launch;
  int device = 0;  // CUDA device index for "ptx" artifacts
  std::vector<WorkerArg> args;
  nlohmann::json options = nlohmann::json::object();
  double best_so_far_s = 0;
  nlohmann::json to_json() const;
  static WorkerRequest from_json(const nlohmann::json& j);
};

/** A response line. error_kind is a records::error_kind_name() ("none", "wrong_answer", ...). */
struct WorkerResponse {
  int64_t id = -1;  // -1 when the request's id could not be read
  std::string error_kind = "none";
  std::string message;
  std::vector<double> times;
  bool fatal = false;           // the worker dies after this response (a crash, or a GPU context that
                                // a kernel broke: illegal address, launch failure, a kernel that never ends)
  bool protocol_error = false;  // the request was malformed or of an unsupported version
  nlohmann::json to_json() const;
  /** Throws std::invalid_argument on a malformed response. */
  static WorkerResponse from_json(const nlohmann::json& j);
};

}  // namespace tessel::tuner
