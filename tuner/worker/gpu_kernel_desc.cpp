// Parsing the launch description of a PTX candidate (gpu_kernel_desc.h).
#include "gpu_kernel_desc.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::tuner::gpu {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("GPU kernel description: " + what); }

std::array<uint32_t, 3> dims(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) bad(where + ": missing field '" + key + "'");
  if (!it->is_array() || it->empty() || it->size() > 3)
    bad(where + ": '" + key + "' must be an array of 1 to 3 positive integers");
  std::array<uint32_t, 3> d{1, 1, 1};
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > int64_t(UINT32_MAX))
      bad(where + ": '" + key + "' must hold positive integers, got " + it->dump());
    d[i] = uint32_t(v.get<int64_t>());
  }
  return d;
}

KernelLaunch launch(const json& j, const std::string& where, const std::string& default_entry) {
  if (!j.is_object()) bad(where + " must be an object");
  KernelLaunch k;
  if (auto it = j.find("entry"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>().empty()) bad(where + ": 'entry' must be a non-empty string");
    k.entry = it->get<std::string>();
  } else if (default_entry.empty()) {
    bad(where + ": missing field 'entry'");
  } else {
    k.entry = default_entry;
  }
  k.grid = dims(j, "grid", where);
  k.block = dims(j, "block", where);
  if (auto it = j.find("shared_bytes"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > int64_t(UINT32_MAX))
      bad(where + ": 'shared_bytes' must be a non-negative integer");
    k.shared_bytes = uint32_t(it->get<int64_t>());
  }
  return k;
}

}  // namespace

GpuKernelDesc GpuKernelDesc::from_json(const json& j, const std::string& default_entry) {
  if (!j.is_object()) bad("must be a JSON object");
  if (auto it = j.find("kind"); it != j.end() && (!it->is_string() || *it != "ptx"))
    bad("'kind' must be \"ptx\", got " + it->dump());
  GpuKernelDesc d;
  if (auto it = j.find("kernels"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->empty()) bad("'kernels' must be a non-empty array");
    for (size_t i = 0; i < it->size(); ++i)
      d.kernels.push_back(launch((*it)[i], "kernels[" + std::to_string(i) + "]", i == 0 ? default_entry : ""));
  } else {
    d.kernels.push_back(launch(j, "the kernel", default_entry));
  }
  if (auto it = j.find("args"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) bad("'args' must be an array of buffer names");
    for (auto& a : *it) {
      if (!a.is_string() || a.get<std::string>().empty()) bad("'args' must hold non-empty strings");
      d.args.push_back(a.get<std::string>());
    }
  }
  return d;
}

json GpuKernelDesc::to_json() const {
  auto one = [](const KernelLaunch& k) {
    return json{{"entry", k.entry}, {"grid", k.grid}, {"block", k.block}, {"shared_bytes", k.shared_bytes}};
  };
  json j = one(kernels.at(0));
  j["kind"] = "ptx";
  j["args"] = args;
  if (kernels.size() > 1) {
    j["kernels"] = json::array();
    for (auto& k : kernels) j["kernels"].push_back(one(k));
  }
  return j;
}

std::string GpuKernelDesc::sidecar_path(const std::string& ptx_path) {
  const std::string ext = ".ptx";
  if (ptx_path.size() > ext.size() && ptx_path.compare(ptx_path.size() - ext.size(), ext.size(), ext) == 0)
    return ptx_path.substr(0, ptx_path.size() - ext.size()) + ".json";
  return ptx_path + ".json";
}

GpuKernelDesc GpuKernelDesc::load_sidecar(const std::string& ptx_path, const std::string& default_entry) {
  std::string path = sidecar_path(ptx_path);
  std::ifstream in(path);
  if (!in) bad("cannot read '" + path + "' (the description beside '" + ptx_path + "')");
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const std::exception& e) {
    bad("'" + path + "' is not valid JSON: " + e.what());
  }
  return from_json(j, default_entry);
}

}  // namespace tessel::tuner::gpu
