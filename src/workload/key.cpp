// Canonical DAG serialization for workload keys, derived from the IR nodes' fields() declarations.
#include "tessel/workload/key.h"

#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "tessel/ir/functor.h"
#include "tessel/support/sha256.h"

namespace tessel::workload {

namespace {

class Canon {
 public:
  std::ostringstream os;
  std::unordered_map<const ir::Producer*, int> tensor_index;
  std::unordered_map<const ir::VarNode*, std::string> var_name;

  void operator()(const ir::Expr& e) {
    if (!e.defined()) {
      os << "_";
      return;
    }
    os << "(" << ir::kind_name(e.kind()) << ":" << e.dtype().to_string();
    if (auto* v = e.as<ir::VarNode>()) {
      auto it = var_name.find(v);
      if (it == var_name.end()) it = var_name.emplace(v, "v" + std::to_string(var_name.size())).first;
      os << " " << it->second << ")";
      return;
    }
    switch (e.kind()) {
#define TESSEL_X(n, T)                                                          \
  case ir::ExprKind::n:                                                         \
    std::apply([this](const auto&... f) { ((os << " ", (*this)(f)), ...); },    \
               static_cast<const ir::T*>(e.get())->fields());                   \
    break;
      TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
    }
    os << ")";
  }
  void operator()(const ir::Var& v) { (*this)(ir::Expr(v)); }
  void operator()(const ir::IterVar& iv) {
    os << "[iv ";
    (*this)(iv->var);
    os << " ";
    (*this)(iv->min);
    os << " ";
    (*this)(iv->extent);
    os << " " << int(iv->kind) << "]";
  }
  void operator()(const ir::ProducerPtr& p) {
    auto it = tensor_index.find(p.get());
    os << "T" << (it == tensor_index.end() ? -1 : it->second);
  }
  void operator()(const ir::Buffer& b) { os << "buffer:" << (b ? b->name : "_"); }
  void operator()(double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", d);
    os << buf;
  }
  void operator()(const std::string& s) { os << '"' << s << '"'; }
  template <class T>
  void operator()(const std::vector<T>& v) {
    os << "[";
    for (auto& x : v) (*this)(x), os << " ";
    os << "]";
  }
  template <class T>
  void operator()(const T& v) {
    os << int64_t(v);
  }
};

}  // namespace

std::string canonical_dag(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs) {
  Canon c;
  std::vector<te::Operation> order;
  for (auto& t : inputs) order.push_back(t.op());
  for (auto& op : te::topo_order(outputs)) {
    bool seen = false;
    for (auto& o : order) seen |= o.get() == op.get();
    if (!seen) order.push_back(op);
  }
  for (size_t i = 0; i < order.size(); ++i) c.tensor_index[order[i].get()] = int(i);
  c.os << "tessel-dag-v1 inputs=" << inputs.size() << " outputs=";
  for (auto& t : outputs) c.os << c.tensor_index.at(t.op().get()) << ",";
  c.os << "\n";
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& op = order[i];
    c.os << "T" << i << " " << op->dtype().to_string() << "[";
    for (auto& e : op->shape()) c(e), c.os << ",";
    c.os << "] ";
    if (auto* comp = te::as_compute(op)) {
      for (size_t d = 0; d < comp->axis.size(); ++d) c.var_name[comp->axis[d]->var.get()] = "a" + std::to_string(d);
      for (size_t d = 0; d < comp->reduce_axis.size(); ++d)
        c.var_name[comp->reduce_axis[d]->var.get()] = "r" + std::to_string(d);
      c.os << "compute ";
      c(comp->body);
    } else {
      c.os << "input";
    }
    c.os << "\n";
  }
  return c.os.str();
}

std::string workload_key(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs) {
  return sha256_hex(canonical_dag(inputs, outputs)).substr(0, 32);
}

}  // namespace tessel::workload
