// What a GPU build hands to the runtime: a PTX file and this description of its kernels (a JSON sidecar).
// Header-only, depends only on nlohmann_json, so a measurement worker that links no LLVM can read it.
//
//   {"version":1, "kind":"ptx", "arch":"sm_90", "entry":"matmul", "grid":[32,32,1], "block":[16,16,1],
//    "shared_bytes":0, "static_shared_bytes":8192, "registers":-1, "args":["A","B","C"],
//    "params":[{"name":"A","dtype":"float32","shape":[512,512]}, ...],
//    "kernels":[{"entry":"matmul","grid":[32,32,1],"block":[16,16,1],"shared_bytes":0,"static_shared_bytes":8192,
//                "registers":-1}]}
//
// The kernel takes one global pointer (.param .u64) per entry of "args", in that order (inputs, then
// outputs, as the CPU NAME_packed takes them), and no scalars; buffers are dense row-major. Kernels in
// "kernels" are launched in order; the top-level entry/grid/block/shared_bytes repeat the first.
// shared_bytes is the *dynamic* shared memory to pass at launch (0 when the kernel uses only static
// shared memory); above 48 KB the launcher must first raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessel::codegen {

/** One kernel launch: entry name, launch shape and shared memory. */
struct GpuKernelInfo {
  std::string entry;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t shared_bytes = 0;         // dynamic shared memory per block, passed at launch
  int64_t static_shared_bytes = 0;  // declared in the PTX (informational)
  int registers = -1;               // per thread when ptxas was run at build time, else -1 (informational)
};

/** A kernel argument: tensor name, dtype ("float32", ...) and shape. */
struct GpuParamInfo {
  std::string name, dtype;
  std::vector<int64_t> shape;
};

/** The sidecar of a built GPU candidate. */
struct GpuArtifact {
  static constexpr int kVersion = 1;
  std::string kind = "ptx";
  std::string arch = "sm_90";
  std::vector<GpuKernelInfo> kernels;  // launched in order; at least one
  std::vector<std::string> args;       // buffer names in call order
  std::vector<GpuParamInfo> params;    // the same buffers with dtype and shape
  const GpuKernelInfo& first() const {
    if (kernels.empty()) throw std::invalid_argument("GPU artifact has no kernel");
    return kernels.front();
  }
};

inline nlohmann::json gpu_kernel_to_json(const GpuKernelInfo& k) {
  return {{"entry", k.entry},
          {"grid", k.grid},
          {"block", k.block},
          {"shared_bytes", k.shared_bytes},
          {"static_shared_bytes", k.static_shared_bytes},
          {"registers", k.registers}};
}

/** The sidecar JSON (see the top of this file). */
inline nlohmann::json to_json(const GpuArtifact& a) {
  nlohmann::json j = gpu_kernel_to_json(a.first());
  j["version"] = GpuArtifact::kVersion;
  j["kind"] = a.kind;
  j["arch"] = a.arch;
  j["args"] = a.args;
  nlohmann::json ps = nlohmann::json::array(), ks = nlohmann::json::array();
  for (auto& p : a.params) ps.push_back({{"name", p.name}, {"dtype", p.dtype}, {"shape", p.shape}});
  for (auto& k : a.kernels) ks.push_back(gpu_kernel_to_json(k));
  j["params"] = ps;
  j["kernels"] = ks;
  return j;
}

/** Parses a sidecar; throws std::invalid_argument naming the missing or malformed field. Without
 *  "kernels", the top-level entry/grid/block/shared_bytes describe the only kernel. */
inline GpuArtifact gpu_artifact_from_json(const nlohmann::json& j) {
  auto need = [&](const nlohmann::json& o, const char* key) -> const nlohmann::json& {
    if (!o.is_object() || !o.contains(key))
      throw std::invalid_argument(std::string("GPU artifact: missing field '") + key + "'");
    return o.at(key);
  };
  try {
    GpuArtifact a;
    if (j.contains("version") && j.at("version").get<int>() > GpuArtifact::kVersion)
      throw std::invalid_argument("GPU artifact version " + j.at("version").dump() + " is newer than this reader (" +
                                  std::to_string(GpuArtifact::kVersion) + ")");
    a.kind = need(j, "kind").get<std::string>();
    if (a.kind != "ptx") throw std::invalid_argument("GPU artifact: unknown kind '" + a.kind + "' (expected ptx)");
    if (j.contains("arch")) a.arch = j.at("arch").get<std::string>();
    a.args = need(j, "args").get<std::vector<std::string>>();
    auto kernel = [&](const nlohmann::json& k) {
      GpuKernelInfo info;
      info.entry = need(k, "entry").get<std::string>();
      info.grid = need(k, "grid").get<std::array<int64_t, 3>>();
      info.block = need(k, "block").get<std::array<int64_t, 3>>();
      info.shared_bytes = k.value("shared_bytes", int64_t(0));
      info.static_shared_bytes = k.value("static_shared_bytes", int64_t(0));
      info.registers = k.value("registers", -1);
      return info;
    };
    if (j.contains("kernels")) {
      for (auto& k : j.at("kernels")) a.kernels.push_back(kernel(k));
    } else {
      a.kernels.push_back(kernel(j));
    }
    if (a.kernels.empty()) throw std::invalid_argument("GPU artifact: 'kernels' is empty");
    if (j.contains("params"))
      for (auto& p : j.at("params"))
        a.params.push_back({need(p, "name").get<std::string>(), need(p, "dtype").get<std::string>(),
                            need(p, "shape").get<std::vector<int64_t>>()});
    return a;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("GPU artifact: malformed JSON field: ") + e.what());
  }
}

}  // namespace tessel::codegen
