// Building expressions: C++ operators and named helpers.
// A constant operand takes the other operand's dtype (x + 1, y * 0.5f); a scalar operand of a
// vector operation is broadcast; any other dtype mismatch is a UserError naming both types.
// Comparison and logic use named helpers (eq, ne, lt, ...) because Expr's operator== is not
// overloaded; <, <=, >, >= are overloaded and build comparison nodes.
#pragma once
#include "tessel/ir/expr.h"

namespace tessel::ir {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
/** Floor division on integers, IEEE division on floats. */
Expr operator/(Expr a, Expr b);
/** Floor modulo on integers. */
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

/** Both operands evaluated. */
Expr select(Expr cond, Expr t, Expr f);
/** Only the chosen operand is evaluated (use for guarded/padded reads). */
Expr if_then_else(Expr cond, Expr t, Expr f);
Expr cast(DataType t, Expr v);

Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sigmoid(Expr x);
Expr pow(Expr x, Expr y);
Expr abs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
/** a * b + c, fused (one rounding). */
Expr fma(Expr a, Expr b, Expr c);

/** Smallest / largest finite value of a dtype (as a constant of that dtype). */
Expr min_value(DataType t);
Expr max_value(DataType t);

/** Brings a and b to one dtype (constants adopt the other's type, scalars broadcast); throws on mismatch. */
void match_types(const char* op, Expr& a, Expr& b);

}  // namespace tessel::ir
