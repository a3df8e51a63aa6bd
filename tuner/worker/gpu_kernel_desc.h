// How to launch a built GPU candidate: the JSON the GPU code generator writes beside its PTX
//   {"kind":"ptx", "entry":NAME, "grid":[gx,gy,gz], "block":[bx,by,bz], "shared_bytes":N,
//    "args":[buffer names in parameter order], "kernels":[{entry,grid,block,shared_bytes}, ...]}
// "kernels" (optional) lists several kernels launched in order on one stream; without it the single-
// kernel fields describe the only kernel. Every kernel takes one 64-bit global pointer per buffer, in
// the order of "args" (or of the request's arguments when "args" is absent), and no scalars.
// Parsed here without LLVM so the worker can read it (docs/gpu.md).
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessel::tuner::gpu {

/** One kernel launch. shared_bytes is the dynamic shared memory (0 when the kernel uses only static). */
struct KernelLaunch {
  std::string entry;
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t shared_bytes = 0;
};

/** A PTX candidate's launch description. */
struct GpuKernelDesc {
  std::vector<KernelLaunch> kernels;  // launched in this order; at least one
  std::vector<std::string> args;      // buffer names in parameter order; empty: the request's order
  /** Parses the JSON above; throws std::invalid_argument naming the bad field. default_entry is used
   *  when neither "entry" nor "kernels" names one (the request's function). */
  static GpuKernelDesc from_json(const nlohmann::json& j, const std::string& default_entry = "");
  nlohmann::json to_json() const;
  /** The description file of a PTX artifact: PATH with ".ptx" replaced by ".json" (or PATH + ".json"). */
  static std::string sidecar_path(const std::string& ptx_path);
  /** Reads and parses sidecar_path(ptx_path); throws std::invalid_argument when missing or malformed. */
  static GpuKernelDesc load_sidecar(const std::string& ptx_path, const std::string& default_entry = "");
};

}  // namespace tessel::tuner::gpu
