// Host fingerprint and the target compatibility rule used by the best-record lookup.
#include "tessel/records/target_match.h"

#include <sys/utsname.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tessel/codegen/target.h"
#include "tessel/support/error.h"
#include "tessel/support/sha256.h"

namespace tessel::records {

namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    size_t b = v.find_first_not_of(" \t");
    return b == std::string::npos ? "" : v.substr(b);
  }
  return "unknown";
}

std::set<std::string> enabled_features(const std::string& features) {
  std::set<std::string> on;
  std::stringstream ss(features);
  std::string f;
  while (std::getline(ss, f, ','))
    if (f.size() > 1 && f[0] == '+') on.insert(f.substr(1));
  return on;
}

}  // namespace

std::string thp_policy_of(const std::string& line) {
  size_t open = line.find('[');
  size_t close = open == std::string::npos ? open : line.find(']', open);
  if (close == std::string::npos || close == open + 1) return "unknown";
  return line.substr(open + 1, close - open - 1);
}

nlohmann::json host_fingerprint() {
  static const nlohmann::json fp = [] {
    codegen::Target host = codegen::Target::host();
    utsname u{};
    std::string os = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release + " " + u.machine : "unknown";
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string thp_line;
    std::getline(thp, thp_line);
    return nlohmann::json{{"cpu_model", cpu_model_name()},
                          {"cpu", host.cpu},
                          {"features", host.features},
                          {"cores", int(std::thread::hardware_concurrency())},
                          {"os", os},
                          {"transparent_hugepages", thp_policy_of(thp_line)}};
  }();
  return fp;
}

TargetMatch match_target(const std::string& record_target, const std::string& requested_target) {
  if (record_target == requested_target) return {TargetMatchKind::kExact, ""};
  codegen::Target rec, req;
  try {
    rec = codegen::Target::parse(record_target);
    req = codegen::Target::parse(requested_target);
  } catch (const UserError& e) {
    return {TargetMatchKind::kIncompatible, std::string("unparsable target: ") + e.what()};
  }
  if (rec == req) return {TargetMatchKind::kExact, ""};  // e.g. "host" vs its printed form
  if (rec.triple != req.triple) return {TargetMatchKind::kIncompatible, "triple " + rec.triple + " != " + req.triple};
  if (rec.cpu != req.cpu) return {TargetMatchKind::kIncompatible, "cpu " + rec.cpu + " != " + req.cpu};
  std::set<std::string> have = enabled_features(req.features);
  std::string missing;
  for (auto& f : enabled_features(rec.features))
    if (!have.count(f)) missing += (missing.empty() ? "+" : ",+") + f;
  if (!missing.empty()) return {TargetMatchKind::kIncompatible, "record needs " + missing};
  return {TargetMatchKind::kCompatible, "same triple and cpu; the record's features are a subset of the target's"};
}

std::string target_label(const std::string& target) {
  try {
    codegen::Target t = codegen::Target::parse(target);
    return t.cpu + " (" + t.triple + ", features #" + sha256_hex(t.features).substr(0, 8) + ")";
  } catch (const UserError&) {
    return target;
  }
}

}  // namespace tessel::records
