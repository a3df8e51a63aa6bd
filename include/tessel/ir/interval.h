// Interval (bound) analysis of integer expressions: which values can an expression take when some
// variables range over known intervals? Used by bound inference, guard removal and vectorization.
// Variables without a range stay symbolic, so bounds may be expressions: for `x*32 + y` with y in
// [0, 31] and x free the interval is [x*32, x*32 + 31].
// Like the simplifier, the analysis assumes index arithmetic on symbolic (unranged) variables does
// not overflow; with fully known ranges a bound that leaves the dtype's range is dropped instead.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "tessel/ir/expr.h"

namespace tessel::ir {

/** Inclusive bounds [min, max]; an undefined min (max) means unbounded below (above). */
struct Interval {
  Expr min, max;

  /** The interval holding exactly e. */
  static Interval single_point(const Expr& e) { return {e, e}; }
  /** The unbounded interval. */
  static Interval everything() { return {}; }
  bool has_lower_bound() const { return min.defined(); }
  bool has_upper_bound() const { return max.defined(); }
  bool is_everything() const { return !min.defined() && !max.defined(); }
  /** True when min and max are the same node (or structurally equal). */
  bool is_single_point() const;
  /** True when both bounds are integer constants. */
  bool is_const() const;
};

/** The inclusive range of each variable; a loop For(v, min, extent) gives v in [min, min+extent-1]. */
using VarRanges = std::unordered_map<const VarNode*, Interval>;

/** Symbolic interval of e over the ranges (variables not in `ranges` stay symbolic); bounds are
 *  simplified. An unknown side is left undefined. */
Interval eval_interval(const Expr& e, const VarRanges& ranges);

/** Largest / smallest value an integer expression can take over the ranges, when constant. */
std::optional<int64_t> const_upper_bound(const Expr& e, const VarRanges& ranges = {});
std::optional<int64_t> const_lower_bound(const Expr& e, const VarRanges& ranges = {});

/** True only when cond (bool) is provably true for every value of the ranged variables (and any
 *  value of the others). False means "not proven", not "false". */
bool can_prove(const Expr& cond, const VarRanges& ranges = {});

}  // namespace tessel::ir
