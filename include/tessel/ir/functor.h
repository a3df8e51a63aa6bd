// Visitor and mutator over expressions and statements, generated from the node lists.
// IRVisitor::visit_ defaults walk every child; IRMutator::mutate_ defaults rebuild a node through its
// make() (so checks and dtypes are recomputed) and return the *same* node when no child changed.
#pragma once
#include <functional>
#include <unordered_map>

#include "tessel/ir/stmt.h"

namespace tessel::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
#define TESSEL_X(n, T) virtual void visit_(const T* op);
  TESSEL_EXPR_NODES(TESSEL_X)
  TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
#define TESSEL_X(n, T) virtual Expr mutate_(const T* op, const Expr& e);
  TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
#define TESSEL_X(n, T) virtual Stmt mutate_(const T* op, const Stmt& s);
  TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
  /** Mutates each element; returns true when any changed. */
  bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out);
};

/** Calls f on every expression node (pre-order), including those inside statements. */
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f);
void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& f);

/** Replaces variables by expressions (map keyed by VarNode pointer). */
using VarMap = std::unordered_map<const VarNode*, Expr>;
Expr substitute(const Expr& e, const VarMap& m);
Stmt substitute(const Stmt& s, const VarMap& m);

/** Rebuilds e with every TensorRead (after its indices were rewritten) replaced by f(read); f may return
 *  the read itself. Used to inline producers, rewire readers and turn reads into buffer loads. */
Expr rewrite_tensor_reads(const Expr& e, const std::function<Expr(const TensorRead*, const Expr&)>& f);

/** True when e mentions any variable for which pred returns true. */
bool uses_var(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool uses_var(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

}  // namespace tessel::ir
