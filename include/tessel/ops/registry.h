// The operator registry: every operator a workload spec can name ("matmul:M=1024,N=1024,K=1024"),
// its parameters with defaults, and the function that builds its tensor expression.
// Registration: each src/ops/*.cpp defines register_<file>_ops() that calls register_op() for its
// operators, and src/ops/builtin_ops.cpp calls it (one line per file). Static registrars are not used:
// a static library drops object files nothing references.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessel/te/tensor.h"

namespace tessel::ops {

/** One parameter of an operator: an integer, or a word from a fixed list of choices. */
struct OpParam {
  std::string name;
  std::string default_value;         // empty = required
  std::string help;
  std::vector<std::string> choices;  // non-empty: a word parameter (e.g. dtype, activation, layout)
  int64_t min = 0, max = int64_t(1) << 40;  // range of an integer parameter
};

/** Parameter values after parsing: every declared parameter present (defaults filled in). */
class OpArgs {
 public:
  OpArgs() = default;
  explicit OpArgs(std::map<std::string, std::string> v) : values_(std::move(v)) {}
  int64_t i(const std::string& name) const;       // integer parameter
  int ii(const std::string& name) const { return int(i(name)); }
  const std::string& s(const std::string& name) const;  // word parameter
  ir::DataType dtype(const std::string& name = "dtype") const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/** The tensors of one built operator: inputs first (in argument order), then outputs. */
struct OpTensors {
  std::vector<te::Tensor> inputs, outputs;
  std::vector<te::Tensor> args() const;
};

struct OpDef {
  std::string name;
  std::string summary;
  std::vector<OpParam> params;
  std::function<OpTensors(const OpArgs&)> build;
};

/** Adds an operator (names are unique; a duplicate is an InternalError). */
void register_op(OpDef def);
/** All operators, sorted by name. */
std::vector<const OpDef*> all_ops();
/** The operator of this name, or null. */
const OpDef* find_op(const std::string& name);

/** Parses "NAME:P=V,P=V" against the registry; fills defaults; checks ranges and choices. Errors list
 *  what is accepted (unknown operator: all names; unknown parameter: that operator's parameters). */
std::pair<const OpDef*, OpArgs> parse_op_spec(const std::string& spec);
/** The canonical spec string "NAME:P=V,..." with every parameter, in declaration order. */
std::string format_op_spec(const OpDef& def, const OpArgs& args);

}  // namespace tessel::ops

