// Trace serialization: JSON form of each step (fields declared once with nlohmann's macros),
// and the one-line text form used by printers and `tessel explain`.
#include "tessel/schedule/step.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "tessel/support/error.h"

namespace tessel::schedule {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SplitStep, stage, axis, factor, nparts)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TileStep, stage, x, y, fx, fy)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FuseStep, stage, axes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ReorderStep, stage, order)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ComputeAtStep, stage, target, axis)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ComputeInlineStep, stage)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ComputeRootStep, stage)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CacheReadStep, tensor, scope, readers)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CacheWriteStep, stage, scope)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AnnotateStep, stage, axis, annotation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RfactorStep, stage, axis)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StorageAlignStep, stage, dim, factor, offset)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PragmaStep, stage, axis, key, value)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TransformLayoutStep, stage, dim, factor)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BindStep, stage, axis, thread_tag)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SetScopeStep, stage, scope)

namespace {
// JSON "kind" of each alternative, in variant order.
const char* const kKinds[] = {"split", "tile", "fuse", "reorder", "compute_at", "compute_inline", "compute_root",
                              "cache_read", "cache_write", "annotate", "rfactor", "storage_align", "pragma", "transform_layout",
                              "bind", "set_scope"};
static_assert(std::size(kKinds) == std::variant_size_v<Step>);

template <size_t I = 0>
Step parse_alternative(const std::string& kind, const nlohmann::json& j) {
  if constexpr (I == std::variant_size_v<Step>) {
    std::string all;
    for (auto* k : kKinds) all += std::string(all.empty() ? "" : ", ") + k;
    TESSEL_CHECK(false) << "unknown step kind '" << kind << "' (expected one of: " << all << ")";
    return Step{};
  } else {
    if (kind == kKinds[I]) return j.get<std::variant_alternative_t<I, Step>>();
    return parse_alternative<I + 1>(kind, j);
  }
}
}  // namespace

nlohmann::json trace_to_json(const std::vector<Step>& steps) {
  nlohmann::json arr = nlohmann::json::array();
  for (auto& s : steps) {
    nlohmann::json j = std::visit([](const auto& x) { return nlohmann::json(x); }, s);
    j["kind"] = kKinds[s.index()];
    arr.push_back(std::move(j));
  }
  return {{"version", kTraceVersion}, {"steps", arr}};
}

std::vector<Step> trace_from_json(const nlohmann::json& j) {
  TESSEL_CHECK(j.is_object() && j.contains("version") && j.contains("steps"))
      << "a trace must be a JSON object with 'version' and 'steps'";
  TESSEL_CHECK(j["version"].is_number_integer()) << "trace 'version' must be an integer";
  int v = j["version"].get<int>();
  TESSEL_CHECK(v <= kTraceVersion) << "trace version " << v << " is newer than this tessel supports ("
                                   << kTraceVersion << "); upgrade tessel to read it";
  TESSEL_CHECK(j["steps"].is_array()) << "trace 'steps' must be an array";
  std::vector<Step> out;
  size_t i = 0;
  for (auto& s : j["steps"]) {
    TESSEL_CHECK(s.is_object() && s.contains("kind") && s["kind"].is_string())
        << "trace step " << i << ": expected an object with a string 'kind'";
    try {
      out.push_back(parse_alternative(s["kind"].get<std::string>(), s));
    } catch (const nlohmann::json::exception& e) {
      TESSEL_CHECK(false) << "trace step " << i << " (" << s["kind"].get<std::string>() << "): " << e.what();
    }
    ++i;
  }
  return out;
}

std::string step_to_string(const Step& step) {
  nlohmann::json j = std::visit([](const auto& x) { return nlohmann::json(x); }, step);
  std::ostringstream os;
  os << kKinds[step.index()] << "(";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_boolean() && !it.value().get<bool>()) continue;
    os << (first ? "" : ", ") << it.key() << "=" << it.value().dump();
    first = false;
  }
  os << ")";
  return os.str();
}

}  // namespace tessel::schedule
