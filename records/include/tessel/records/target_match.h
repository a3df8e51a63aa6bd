// Which records may be used for a target: the hardware fingerprint stored with each record, and the
// compatibility rule of the best-record lookup (docs/records.md, "Target matching").
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace tessel::records {

/** This machine: {"cpu_model" (/proc/cpuinfo "model name"), "cpu" (LLVM CPU name), "features"
 *  (codegen::Target::host().features), "cores" (std::thread::hardware_concurrency), "os",
 *  "transparent_hugepages" (the kernel's THP policy: always | madvise | never | unknown)}.
 *  GPU fields ("gpu_name", "compute_capability") are added by GPU targets later. */
nlohmann::json host_fingerprint();

/** The selected word of a sysfs choice line such as /sys/kernel/mm/transparent_hugepage/enabled
 *  ("always [madvise] never" -> "madvise"); "unknown" when none is bracketed (no file, another format).
 *  Page backing changes which schedule is fastest (docs/performance.md, "4 KiB and 2 MiB pages"), so the
 *  fingerprint carries the policy. */
std::string thp_policy_of(const std::string& line);

enum class TargetMatchKind {
  kExact,         // the same target string
  kCompatible,    // same triple and CPU, the record's enabled features a subset of the requested ones
  kIncompatible,  // anything else (or a target string that does not parse)
};

struct TargetMatch {
  TargetMatchKind kind = TargetMatchKind::kIncompatible;
  std::string reason;  // why not exact: "cpu skylake-avx512 != znver3", "needs +avx512f", ...
};

/** Compares the target a record was measured for with the requested one (both Target::to_string()
 *  forms, or "host"). */
TargetMatch match_target(const std::string& record_target, const std::string& requested_target);

/** A short label for messages and tables: "CPU (TRIPLE, features #1a2b3c4d)" (the hash of the feature
 *  string tells targets of the same CPU apart); the string itself when it does not parse. */
std::string target_label(const std::string& target);

}  // namespace tessel::records
