// Workloads from specs, .te files and JSON.
#include "tessel/workload/workload.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tessel/ir/functor.h"
#include "tessel/ops/registry.h"
#include "tessel/support/error.h"
#include "tessel/te/parser.h"
#include "tessel/workload/key.h"

namespace tessel::workload {

std::vector<te::Tensor> Workload::args() const {
  std::vector<te::Tensor> a = inputs;
  a.insert(a.end(), outputs.begin(), outputs.end());
  return a;
}

double Workload::flop_count() const {
  double total = 0;
  for (auto& op : te::topo_order(outputs)) {
    auto* c = te::as_compute(op);
    if (!c) continue;
    double n = 1;
    for (auto& e : op->shape()) n *= double(*ir::as_const_int(e));
    if (auto* r = c->reduce()) {
      double red = 1;
      for (auto& a : r->axes) red *= double(*ir::as_const_int(a->extent));
      total += 2 * n * red;
    } else {
      total += n;
    }
  }
  return total;
}

namespace {
void finish(Workload& w) { w.key = workload_key(w.inputs, w.outputs); }
}  // namespace

Workload from_spec(const std::string& spec) {
  auto [def, args] = ops::parse_op_spec(spec);
  ops::OpTensors t = def->build(args);
  Workload w;
  w.name = def->name;
  w.spec = ops::format_op_spec(*def, args);
  w.inputs = t.inputs;
  w.outputs = t.outputs;
  finish(w);
  return w;
}

namespace {
Workload from_program(const te::TeProgram& p, const std::string& name) {
  Workload w;
  w.name = std::filesystem::path(name).stem().string();
  w.spec = "te:" + name;
  w.te_text = te::print_te(p);
  w.inputs = p.inputs;
  w.outputs = p.outputs;
  finish(w);
  return w;
}
}  // namespace

Workload from_te_text(const std::string& text, const std::string& name) { return from_program(te::parse_te(text, name), name); }

Workload from_te_file(const std::string& path) { return from_program(te::parse_te_file(path), path); }

namespace {
nlohmann::json tensor_json(const te::Tensor& t) {
  nlohmann::json shape = nlohmann::json::array();
  for (auto& e : t.shape()) shape.push_back(*ir::as_const_int(e));
  return {{"name", t.name()}, {"shape", shape}, {"dtype", t.dtype().to_string()}};
}
}  // namespace

nlohmann::json to_json(const Workload& w) {
  nlohmann::json j = {{"version", kWorkloadJsonVersion}, {"key", w.key}, {"name", w.name}};
  if (w.te_text.empty())
    j["spec"] = w.spec;
  else
    j["te"] = w.te_text;
  j["inputs"] = nlohmann::json::array();
  for (auto& t : w.inputs) j["inputs"].push_back(tensor_json(t));
  j["outputs"] = nlohmann::json::array();
  for (auto& t : w.outputs) j["outputs"].push_back(tensor_json(t));
  return j;
}

Workload from_json(const nlohmann::json& j) {
  TESSEL_CHECK(j.is_object() && j.contains("version") && j["version"].is_number_integer())
      << "a workload must be a JSON object with an integer 'version'";
  int v = j["version"].get<int>();
  TESSEL_CHECK(v <= kWorkloadJsonVersion) << "workload JSON version " << v << " is newer than this tessel ("
                                          << kWorkloadJsonVersion << "); upgrade tessel to read it";
  Workload w;
  if (j.contains("spec") && j["spec"].is_string()) {
    w = from_spec(j["spec"].get<std::string>());
  } else if (j.contains("te") && j["te"].is_string()) {
    w = from_te_text(j["te"].get<std::string>(), j.value("name", std::string("workload")) + ".te");
  } else {
    TESSEL_CHECK(false) << "a workload JSON needs a string 'spec' or 'te'";
  }
  if (j.contains("key")) {
    TESSEL_CHECK(j["key"].is_string() && j["key"].get<std::string>() == w.key)
        << "workload JSON key " << j["key"].dump() << " does not match the computation it describes (" << w.key
        << "); the file was edited or written by an incompatible tessel";
  }
  return w;
}

}  // namespace tessel::workload
