// The operator registry and workload-spec parsing.
#include "tessel/ops/registry.h"

#include "builtin_ops.h"

#include <algorithm>
#include <sstream>

#include "tessel/support/error.h"

namespace tessel::ops {

namespace {
std::map<std::string, OpDef>& raw_table() {
  static std::map<std::string, OpDef> t;
  return t;
}
// The table with the built-in operators registered (once, on first use).
std::map<std::string, OpDef>& table() {
  static bool once = (register_builtin_ops(), true);
  (void)once;
  return raw_table();
}
std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}
std::string param_list(const OpDef& d) {
  std::vector<std::string> out;
  for (auto& p : d.params) {
    std::string x = p.name;
    if (!p.choices.empty()) x.append("=").append(join(p.choices, "|"));
    if (!p.default_value.empty()) x += " (default " + p.default_value + ")";
    else x += " (required)";
    out.push_back(x);
  }
  return join(out);
}
bool parse_int(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  *v = std::stoll(s);
  return true;
}
}  // namespace

int64_t OpArgs::i(const std::string& name) const {
  auto it = values_.find(name);
  TESSEL_ICHECK(it != values_.end()) << "operator parameter " << name << " was not declared";
  int64_t v = 0;
  TESSEL_ICHECK(parse_int(it->second, &v)) << "parameter " << name << " is not an integer";
  return v;
}

const std::string& OpArgs::s(const std::string& name) const {
  auto it = values_.find(name);
  TESSEL_ICHECK(it != values_.end()) << "operator parameter " << name << " was not declared";
  return it->second;
}

ir::DataType OpArgs::dtype(const std::string& name) const { return ir::DataType::parse(s(name)); }

std::vector<te::Tensor> OpTensors::args() const {
  std::vector<te::Tensor> a = inputs;
  a.insert(a.end(), outputs.begin(), outputs.end());
  return a;
}

void register_op(OpDef def) {
  TESSEL_ICHECK(!def.name.empty() && def.build) << "operator without a name or builder";
  auto [it, fresh] = raw_table().emplace(def.name, std::move(def));
  TESSEL_ICHECK(fresh) << "operator " << it->first << " registered twice";
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> out;
  for (auto& [n, d] : table()) out.push_back(&d);
  return out;
}

const OpDef* find_op(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::pair<const OpDef*, OpArgs> parse_op_spec(const std::string& spec) {
  auto colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  const OpDef* def = find_op(name);
  if (!def) {
    std::vector<std::string> names;
    for (auto* d : all_ops()) names.push_back(d->name);
    TESSEL_CHECK(false) << "unknown operator '" << name << "' in workload spec '" << spec
                        << "'; operators: " << join(names) << " (tessel workloads lists their parameters)";
  }
  std::map<std::string, std::string> given;
  if (colon != std::string::npos) {
    std::stringstream ss(spec.substr(colon + 1));
    for (std::string item; std::getline(ss, item, ',');) {
      if (item.empty()) continue;
      auto eq = item.find('=');
      TESSEL_CHECK(eq != std::string::npos && eq > 0)
          << "workload spec '" << spec << "': expected PARAM=VALUE, got '" << item << "'";
      std::string k = item.substr(0, eq), v = item.substr(eq + 1);
      auto p = std::find_if(def->params.begin(), def->params.end(), [&](const OpParam& x) { return x.name == k; });
      TESSEL_CHECK(p != def->params.end()) << "operator " << name << " has no parameter '" << k
                                           << "'; parameters: " << param_list(*def);
      TESSEL_CHECK(!given.count(k)) << "workload spec '" << spec << "': parameter " << k << " given twice";
      given[k] = v;
    }
  }
  std::map<std::string, std::string> values;
  for (auto& p : def->params) {
    auto it = given.find(p.name);
    std::string v = it != given.end() ? it->second : p.default_value;
    TESSEL_CHECK(!v.empty()) << "operator " << name << ": parameter " << p.name << " is required ("
                             << p.help << "); parameters: " << param_list(*def);
    if (!p.choices.empty()) {
      TESSEL_CHECK(std::find(p.choices.begin(), p.choices.end(), v) != p.choices.end())
          << "operator " << name << ": " << p.name << "=" << v << " is not one of " << join(p.choices, "|");
    } else {
      int64_t x = 0;
      TESSEL_CHECK(parse_int(v, &x)) << "operator " << name << ": " << p.name << "=" << v << " is not an integer";
      TESSEL_CHECK(x >= p.min && x <= p.max) << "operator " << name << ": " << p.name << "=" << v
                                             << " is out of range [" << p.min << ", " << p.max << "]";
    }
    values[p.name] = v;
  }
  return {def, OpArgs(values)};
}

std::string format_op_spec(const OpDef& def, const OpArgs& args) {
  std::string s = def.name + ":";
  bool first = true;
  for (auto& p : def.params) {
    s += (first ? "" : ",") + p.name + "=" + args.values().at(p.name);
    first = false;
  }
  return s;
}

}  // namespace tessel::ops
