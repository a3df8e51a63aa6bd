// A workload: a computation with concrete shapes and dtypes, built from a spec ("matmul:M=...") or a
// .te file, with its structural key and a canonical JSON form from which it can be rebuilt.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "tessel/te/tensor.h"

namespace tessel::workload {

struct Workload {
  std::string name;  // operator name, or the .te file's stem
  std::string spec;  // canonical spec ("matmul:M=8,N=8,K=8,...") or "te:PATH"
  std::string te_text;  // the program text for .te workloads (canonical, printed), else empty
  std::vector<te::Tensor> inputs, outputs;
  std::string key;  // workload_key(inputs, outputs)

  /** inputs then outputs: the function's arguments. */
  std::vector<te::Tensor> args() const;
  /** Floating-point (or integer) operations of one run: 2 per multiply-add of every reduction plus one
   *  per element of every other stage (an estimate used for GFLOP/s). */
  double flop_count() const;
};

/** Canonical JSON version; readers refuse newer ones. */
constexpr int kWorkloadJsonVersion = 1;

/** Builds a workload from "NAME:P=V,..." (see tessel workloads). Throws UserError listing what is accepted. */
Workload from_spec(const std::string& spec);
/** Builds a workload from a .te file (errors carry file:line:column). */
Workload from_te_file(const std::string& path);
/** Builds from .te text (name used for messages). */
Workload from_te_text(const std::string& text, const std::string& name);

/** {"version","key","name","spec" | "te", "inputs":[{"name","shape","dtype"}], "outputs":[...]} */
nlohmann::json to_json(const Workload& w);
/** Rebuilds from to_json's output; checks the stored key matches what it builds (refuses otherwise). */
Workload from_json(const nlohmann::json& j);

}  // namespace tessel::workload
