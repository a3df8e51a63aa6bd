// Private helpers shared by the local builder and runner (and later the RPC runner).
#pragma once
#include <string>
#include <vector>

#include "tessel/tuner/measure.h"
#include "tessel/tuner/worker_protocol.h"

namespace tessel::tuner::detail {

/** The function name every built candidate and reference exports (NAME_packed is called). */
inline const char* kCandidateFunction = "kernel";
inline const char* kReferenceFunction = "reference";

/** The measured function's arguments (inputs then outputs) as the worker protocol describes them. */
std::vector<WorkerArg> worker_args(const workload::Workload& w);

/** A file-name-safe short form of a workload key (alphanumerics, at most 40 characters). */
std::string safe_key(const std::string& key);

}  // namespace tessel::tuner::detail
