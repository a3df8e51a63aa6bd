// Arithmetic simplification: constant folding (floor Div/Mod, wrapping), a canonical linear form for
// integer expressions, Div/Mod/Min/Max/comparison rules that use variable ranges, Ramp/Broadcast
// merging, and statement cleanup (proven guards removed, trivial loops and lets inlined).
// Float expressions are only folded when all operands are constants (no reassociation, no x+0).
// Assumes integer index arithmetic on unranged variables does not overflow (as Halide and TVM do).
#pragma once
#include "tessel/ir/interval.h"
#include "tessel/ir/stmt.h"

namespace tessel::ir {

/** Simplifies e; `ranges` gives known inclusive ranges of free variables. The result has e's dtype
 *  and the same value for every assignment of the variables within their ranges. */
Expr simplify(const Expr& e, const VarRanges& ranges = {});

/** Simplifies every expression in s, adding each loop variable's range while inside its loop.
 *  Removes provably true/false IfThenElse guards, loops of extent 0 (extent 1 loops are replaced by
 *  their body with var = min) and lets of constants or variables. A statement that simplifies to
 *  nothing is returned as Evaluate(0). */
Stmt simplify(const Stmt& s, const VarRanges& ranges = {});

}  // namespace tessel::ir
