// A code-generation target: LLVM triple, CPU name and feature string.
// Printed form (stored in tuning records): "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma,..."
// for CPUs, "cuda -arch=sm_90" for NVIDIA GPUs (triple nvptx64-nvidia-cuda, cpu sm_90, features +ptx80).
#pragma once
#include <string>

namespace tessel::codegen {

struct Target {
  std::string triple;    // e.g. "x86_64-pc-linux-gnu"
  std::string cpu;       // e.g. "znver3", "skylake-avx512", "generic"
  std::string features;  // comma-separated "+avx2,+fma,-avx512f"

  /** The machine this process runs on (LLVM's host CPU name and detected features). */
  static Target host();
  /** An NVIDIA GPU of compute capability `arch` (e.g. "sm_90"), code as PTX (ISA version from LLVM 19). */
  static Target cuda(const std::string& arch = "sm_90");
  /** Parses to_string()'s form; "host" (or "llvm" alone) gives host(). Missing -mtriple means the
   *  host triple, missing -mcpu "generic". "cuda" (or "cuda -arch=sm_XX") gives cuda(). Throws UserError on
   *  unknown options. */
  static Target parse(const std::string& s);
  std::string to_string() const;
  /** True for NVPTX (CUDA) targets. */
  bool is_cuda() const;

  /** Width of the widest native vector register in bytes: 64 with AVX-512, 32 with AVX, else 16. */
  int vector_bytes() const;
  /** True when features enable `name` (without the '+'), e.g. has_feature("avx2"). */
  bool has_feature(const std::string& name) const;
  bool operator==(const Target& o) const { return triple == o.triple && cpu == o.cpu && features == o.features; }
};

}  // namespace tessel::codegen
