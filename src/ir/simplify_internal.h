// Private to the simplifier (simplify*.cpp, interval.cpp): constant bounds, the linear form of
// integer expressions, and the Simplifier mutator.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessel/ir/functor.h"
#include "tessel/ir/interval.h"

namespace tessel::ir::detail {

/** Inclusive constant bounds of a signed integer expression. lo == kNegInf / hi == kPosInf mean
 *  unbounded on that side (an unranged variable, treated as a mathematical integer). A finite bound
 *  never leaves the dtype's range: where the arithmetic might wrap, both sides become unbounded. */
struct Bounds {
  static constexpr int64_t kNegInf = INT64_MIN, kPosInf = INT64_MAX;
  int64_t lo = kNegInf, hi = kPosInf;
  static Bounds unbounded() { return {}; }
  bool has_lo() const { return lo != kNegInf; }
  bool has_hi() const { return hi != kPosInf; }
  bool is_finite() const { return has_lo() && has_hi(); }
};

/** Smallest / largest value of a signed integer dtype (per lane). */
int64_t type_min(DataType t);
int64_t type_max(DataType t);
/** Wraps v to t's width (two's complement), as IntImm::make does. */
int64_t wrap_to(DataType t, int64_t v);
int64_t floor_div(int64_t a, int64_t b);
/** Builds the binary node of kind k (arithmetic, comparison or logic) without simplifying. */
Expr make_binary(ExprKind k, const Expr& a, const Expr& b);
int64_t floor_mod(int64_t a, int64_t b);
/** True for the scalar and vector signed integer types the range-based rules handle. */
inline bool is_signed_int(DataType t) { return t.is_int(); }

inline const int64_t* const_int(const Expr& e) { return as_const_int(e); }
inline bool is_zero_int(const Expr& e) {
  auto* c = as_const_int(e);
  return c && *c == 0;
}
inline bool is_int_scalar(const Expr& e) { return e.dtype().is_int() && e.dtype().is_scalar(); }
/** Float types whose constants fold exactly through double arithmetic. */
inline bool foldable_float(DataType t) {
  return t.is_float() && t.code == DataType::kFloat && (t.bits == 32 || t.bits == 64);
}
/** Returns e when r is e's kind rebuilt from the same operands, else r. */
template <class T>
Expr same_or(const T* op, const Expr& e, const Expr& r) {
  if (auto* n = r.as<T>()) {
    if (n->a.same_as(op->a) && n->b.same_as(op->b)) return e;
  }
  return r;
}

/** sum(coeff * atom) + constant over a scalar signed integer dtype; coefficients are wrapped to the
 *  dtype's width, atoms are simplified non-linear expressions (vars, Div, Mod, Min, x*y, loads...). */
struct LinearForm {
  struct Term {
    Expr atom;
    int64_t coeff;
  };
  DataType dtype;
  std::vector<Term> terms;  // in order of first appearance, no zero coefficients, no repeated atom
  int64_t constant = 0;

  bool is_const() const { return terms.empty(); }
  /** Adds coeff * atom, merging with an equal atom. */
  void add_term(const Expr& atom, int64_t coeff);
  void add(const LinearForm& o, int64_t scale = 1);
  void scale(int64_t c);
  void add_const(int64_t c) { constant = wrap_to(dtype, constant + c); }
};

/** Reads an (already simplified) expression as a linear form without simplifying its atoms. */
LinearForm parse_linear(const Expr& e);
/** Builds a clean expression: positive terms first, then `- atom*c`, then the constant. */
Expr rebuild(const LinearForm& f);
/** Replaces x/c*c*m + x%c*m pairs by x*m (the index of a fused loop, rebuilt). */
void merge_div_mod(LinearForm* f);

/** The simplifier: a mutator with variable ranges, bound queries and rewrite rules. */
class Simplifier : public IRMutator {
 public:
  explicit Simplifier(const VarRanges& ranges) : ranges_(ranges) {}
  using IRMutator::mutate;

  /** Constant bounds of a simplified signed integer expression (memoized per scope). */
  Bounds bound_of(const Expr& e);
  Bounds bound_of(const LinearForm& f);
  /** bound_of(f), tightened by replacing each variable term once by its symbolic range end
   *  (i - n with i in [0, n - 1] is at most -1). */
  Bounds bound_of_symbolic(const LinearForm& f);
  /** Simplifies e and reads it as a linear form (atoms simplified). */
  LinearForm linearize(const Expr& e);

  // Rules on simplified operands (a, b already simplified); used by the mutator and by each other.
  Expr simplify_div(const Expr& a, const Expr& b);
  Expr simplify_mod(const Expr& a, const Expr& b);
  Expr simplify_min_max(bool is_min, const Expr& a, const Expr& b);
  Expr simplify_compare(ExprKind k, const Expr& a, const Expr& b);
  Expr simplify_not(const Expr& a);
  Expr simplify_and_or(bool is_and, const Expr& a, const Expr& b);
  Expr simplify_arith(ExprKind k, const Expr& a, const Expr& b);  // Add/Sub/Mul of non-linear dtypes

 protected:
#define TESSEL_X(n, T) Expr mutate_(const T* op, const Expr& e) override;
  TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
#define TESSEL_X(n, T) Stmt mutate_(const T* op, const Stmt& s) override;
  TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X

  /** Binds v to range r (or replaces it by value when value is defined) until pop_scope. */
  void push_range(const VarNode* v, Interval r);
  void pop_range(const VarNode* v);
  Expr linear_node(const Expr& e);  // simplifies an int Add/Sub/Mul tree through the linear form
  void linearize_into(const Expr& e, int64_t scale, LinearForm* out);
  Bounds bound_uncached(const Expr& e);

  VarRanges ranges_;
  std::unordered_map<const VarNode*, std::vector<std::pair<bool, Interval>>> shadowed_;
  VarMap subst_;  // lets of constants/vars and extent-1 loops being inlined
  std::unordered_map<const ExprNode*, std::pair<Expr, Bounds>> bound_memo_;
  int bound_depth_ = 0;
};

}  // namespace tessel::ir::detail
