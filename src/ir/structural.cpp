// Structural equality and hashing, derived from each node's fields() declaration.
// A field of type Var is a binding site (For, Let, LetStmt, IterVar): it maps the left variable
// to the right one (equality) or to its binding index (hash). Expr uses of variables go through it.
#include "tessel/ir/structural.h"

#include <functional>
#include <unordered_map>

namespace tessel::ir {

namespace {

class Equal {
 public:
  bool operator()(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    if (auto* va = a.as<VarNode>()) {
      auto it = map_.find(va);
      return it != map_.end() && it->second == b.get();
    }
    switch (a.kind()) {
#define TESSEL_X(n, T) \
  case ExprKind::n: return fields(static_cast<const T*>(a.get())->fields(), static_cast<const T*>(b.get())->fields());
      TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
    }
    return false;
  }
  bool operator()(const Stmt& a, const Stmt& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
#define TESSEL_X(n, T) \
  case StmtKind::n: return fields(static_cast<const T*>(a.get())->fields(), static_cast<const T*>(b.get())->fields());
      TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
    }
    return false;
  }
  bool operator()(const Var& a, const Var& b) {  // binding site
    if (a.dtype() != b.dtype()) return false;
    map_[a.get()] = b.get();
    return true;
  }
  bool operator()(const IterVar& a, const IterVar& b) {
    return (*this)(a->var, b->var) && (*this)(a->min, b->min) && (*this)(a->extent, b->extent) && a->kind == b->kind;
  }
  bool operator()(const Buffer& a, const Buffer& b) {
    if (a == b) return true;
    if (!a || !b) return false;
    return fields(a->fields(), b->fields());
  }
  template <class T>
  bool operator()(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(*this)(a[i], b[i])) return false;
    return true;
  }
  template <class T>
  bool operator()(const T& a, const T& b) { return a == b; }

  template <class... A>
  bool fields(const std::tuple<A...>& a, const std::tuple<A...>& b) {
    return fields_impl(a, b, std::index_sequence_for<A...>{});
  }

 private:
  template <class TA, size_t... I>
  bool fields_impl(const TA& a, const TA& b, std::index_sequence<I...>) {
    return ((*this)(std::get<I>(a), std::get<I>(b)) && ...);
  }
  std::unordered_map<const VarNode*, const ExprNode*> map_;
};

class Hasher {
 public:
  size_t h = 0x9e3779b97f4a7c15ull;
  void mix(size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }

  void operator()(const Expr& e) {
    if (!e.defined()) return mix(1);
    mix(size_t(e.kind()) * 131 + std::hash<std::string>()(e.dtype().to_string()));
    if (auto* v = e.as<VarNode>()) {
      auto it = bound_.find(v);
      if (it != bound_.end()) return mix(it->second);
      return mix(std::hash<std::string>()(v->name));
    }
    switch (e.kind()) {
#define TESSEL_X(n, T) \
  case ExprKind::n: return fields(static_cast<const T*>(e.get())->fields());
      TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
    }
  }
  void operator()(const Stmt& s) {
    if (!s.defined()) return mix(2);
    mix(size_t(s.kind()) * 7919);
    switch (s.kind()) {
#define TESSEL_X(n, T) \
  case StmtKind::n: return fields(static_cast<const T*>(s.get())->fields());
      TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
    }
  }
  void operator()(const Var& v) {
    bound_[v.get()] = next_++;
    mix(std::hash<std::string>()(v.dtype().to_string()));
  }
  void operator()(const IterVar& iv) {
    (*this)(iv->var);
    (*this)(iv->min);
    (*this)(iv->extent);
    mix(size_t(iv->kind));
  }
  void operator()(const Buffer& b) {
    if (!b) return mix(3);
    fields(b->fields());
  }
  void operator()(const ProducerPtr& p) { mix(std::hash<const void*>()(p.get())); }
  void operator()(const std::string& s) { mix(std::hash<std::string>()(s)); }
  void operator()(const DataType& t) { mix(std::hash<std::string>()(t.to_string())); }
  void operator()(double d) { mix(std::hash<double>()(d)); }
  template <class T>
  void operator()(const std::vector<T>& v) {
    mix(v.size());
    for (auto& x : v) (*this)(x);
  }
  template <class T>
  void operator()(const T& v) { mix(std::hash<int64_t>()(int64_t(v))); }

  template <class... A>
  void fields(const std::tuple<A...>& t) {
    std::apply([this](const auto&... f) { ((*this)(f), ...); }, t);
  }

 private:
  std::unordered_map<const VarNode*, size_t> bound_;
  size_t next_ = 1000;
};

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) { return Equal()(a, b); }
bool structural_equal(const Stmt& a, const Stmt& b) { return Equal()(a, b); }
size_t structural_hash(const Expr& e) {
  Hasher h;
  h(e);
  return h.h;
}
size_t structural_hash(const Stmt& s) {
  Hasher h;
  h(s);
  return h.h;
}

}  // namespace tessel::ir
