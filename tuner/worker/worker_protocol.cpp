// JSON forms of the worker protocol's messages (tessel/tuner/worker_protocol.h). Malformed input throws
// std::invalid_argument naming the field; the worker turns that into a protocol-error response.
#include "tessel/tuner/worker_protocol.h"

#include <stdexcept>

namespace tessel::tuner {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

const json& field(const json& j, const char* key, const char* where) {
  auto it = j.find(key);
  if (it == j.end()) bad(std::string(where) + ": missing field '" + key + "'");
  return *it;
}

std::string str_field(const json& j, const char* key, const char* where) {
  const json& v = field(j, key, where);
  if (!v.is_string()) bad(std::string(where) + ": field '" + key + "' must be a string");
  return v.get<std::string>();
}

int64_t int_field(const json& j, const char* key, const char* where) {
  const json& v = field(j, key, where);
  if (!v.is_number_integer()) bad(std::string(where) + ": field '" + key + "' must be an integer");
  return v.get<int64_t>();
}

template <class T>
void opt_number(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number()) bad(std::string("options: field '") + key + "' must be a number");
  if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_integer()) bad(std::string("options: field '") + key + "' must be an integer");
  }
  *out = it->get<T>();
}

}  // namespace

WorkerTiming WorkerTiming::from_json(const json& j) {
  WorkerTiming t;
  if (j.is_null()) return t;
  if (!j.is_object()) bad("options must be an object");
  opt_number(j, "warmup", &t.warmup);
  opt_number(j, "min_repeats", &t.min_repeats);
  opt_number(j, "max_repeats", &t.max_repeats);
  opt_number(j, "threads", &t.threads);
  opt_number(j, "min_time_s", &t.min_time_s);
  opt_number(j, "early_abort_ratio", &t.early_abort_ratio);
  opt_number(j, "run_timeout_s", &t.run_timeout_s);
  opt_number(j, "seed", &t.seed);
  if (auto it = j.find("flush_cache"); it != j.end()) {
    if (!it->is_boolean()) bad("options: field 'flush_cache' must be a boolean");
    t.flush_cache = it->get<bool>();
  }
  if (t.warmup < 0 || t.min_repeats < 1 || t.max_repeats < 1)
    bad("options: warmup must be >= 0, min_repeats and max_repeats >= 1");
  return t;
}

json WorkerRequest::to_json() const {
  json j = {{"version", version}, {"id", id}, {"op", op}};
  if (op != "measure") return j;
  j["artifact"] = artifact;
  j["function"] = function;
  j["reference"] = {{"artifact", ref_artifact}, {"function", ref_function}, {"key", ref_key}};
  if (artifact_kind != "shared_library") j["artifact_kind"] = artifact_kind;
  if (!launch.is_null()) j["launch"] = launch;
  if (ref_artifact_kind != "shared_library") j["reference"]["artifact_kind"] = ref_artifact_kind;
  if (!ref_launch.is_null()) j["reference"]["launch"] = ref_launch;
  if (device != 0) j["device"] = device;
  json a = json::array();
  for (auto& arg : args)
    a.push_back({{"name", arg.name}, {"shape", arg.shape}, {"dtype", arg.dtype}, {"output", arg.output}});
  j["args"] = a;
  j["options"] = options;
  j["best_so_far_s"] = best_so_far_s;
  return j;
}

WorkerRequest WorkerRequest::from_json(const json& j) {
  if (!j.is_object()) bad("a request must be a JSON object");
  WorkerRequest r;
  r.version = int(int_field(j, "version", "request"));
  r.id = int_field(j, "id", "request");
  r.op = str_field(j, "op", "request");
  if (r.op != "measure") return r;
  r.artifact = str_field(j, "artifact", "measure request");
  r.function = str_field(j, "function", "measure request");
  const json& ref = field(j, "reference", "measure request");
  if (!ref.is_object()) bad("measure request: 'reference' must be an object");
  r.ref_artifact = str_field(ref, "artifact", "reference");
  r.ref_function = str_field(ref, "function", "reference");
  r.ref_key = str_field(ref, "key", "reference");
  auto kind_field = [](const json& o, const char* where) -> std::string {
    auto it = o.find("artifact_kind");
    if (it == o.end() || it->is_null()) return "shared_library";
    if (!it->is_string() || (*it != "shared_library" && *it != "ptx"))
      bad(std::string(where) + ": 'artifact_kind' must be \"shared_library\" or \"ptx\"");
    return it->get<std::string>();
  };
  auto launch_field = [](const json& o, const char* where) -> json {
    auto it = o.find("launch");
    if (it == o.end() || it->is_null()) return nullptr;
    if (!it->is_object()) bad(std::string(where) + ": 'launch' must be an object");
    return *it;
  };
  r.artifact_kind = kind_field(j, "measure request");
  r.launch = launch_field(j, "measure request");
  r.ref_artifact_kind = kind_field(ref, "reference");
  r.ref_launch = launch_field(ref, "reference");
  if (auto it = j.find("device"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0) bad("measure request: 'device' must be a non-negative integer");
    r.device = it->get<int>();
  }
  const json& args = field(j, "args", "measure request");
  if (!args.is_array() || args.empty()) bad("measure request: 'args' must be a non-empty array");
  for (size_t i = 0; i < args.size(); ++i) {
    const json& a = args[i];
    std::string where = "args[" + std::to_string(i) + "]";
    if (!a.is_object()) bad(where + " must be an object");
    WorkerArg arg;
    if (auto it = a.find("name"); it != a.end() && it->is_string()) arg.name = it->get<std::string>();
    arg.dtype = str_field(a, "dtype", where.c_str());
    const json& shape = field(a, "shape", where.c_str());
    if (!shape.is_array()) bad(where + ": 'shape' must be an array");
    for (auto& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad(where + ": 'shape' must hold non-negative integers");
      arg.shape.push_back(d.get<int64_t>());
    }
    if (auto it = a.find("output"); it != a.end()) {
      if (!it->is_boolean()) bad(where + ": 'output' must be a boolean");
      arg.output = it->get<bool>();
    }
    r.args.push_back(std::move(arg));
  }
  if (auto it = j.find("options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) bad("measure request: 'options' must be an object");
    r.options = *it;
  }
  if (auto it = j.find("best_so_far_s"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) bad("measure request: 'best_so_far_s' must be a number");
    r.best_so_far_s = it->get<double>();
  }
  return r;
}

json WorkerResponse::to_json() const {
  json j = {{"version", kWorkerProtocolVersion},
            {"id", id},
            {"error_kind", error_kind},
            {"message", message},
            {"times", times}};
  if (fatal) j["fatal"] = true;
  if (protocol_error) j["protocol_error"] = true;
  return j;
}

WorkerResponse WorkerResponse::from_json(const json& j) {
  if (!j.is_object()) bad("a response must be a JSON object");
  WorkerResponse r;
  r.id = int_field(j, "id", "response");
  r.error_kind = str_field(j, "error_kind", "response");
  if (auto it = j.find("message"); it != j.end() && it->is_string()) r.message = it->get<std::string>();
  if (auto it = j.find("times"); it != j.end()) {
    if (!it->is_array()) bad("response: 'times' must be an array");
    for (auto& t : *it) {
      if (!t.is_number()) bad("response: 'times' must hold numbers");
      r.times.push_back(t.get<double>());
    }
  }
  if (auto it = j.find("fatal"); it != j.end() && it->is_boolean()) r.fatal = it->get<bool>();
  if (auto it = j.find("protocol_error"); it != j.end() && it->is_boolean()) r.protocol_error = it->get<bool>();
  return r;
}

}  // namespace tessel::tuner
