// Expression-building operators with constant adoption and scalar broadcast.
#include "tessel/ir/op.h"

#include <limits>

#include "tessel/support/error.h"

namespace tessel::ir {

namespace {
bool is_imm(const Expr& e) { return e.as<IntImm>() || e.as<FloatImm>(); }
double imm_value(const Expr& e) {
  if (auto* i = e.as<IntImm>()) return double(i->value);
  return e.as<FloatImm>()->value;
}
}  // namespace

void match_types(const char* op, Expr& a, Expr& b) {
  TESSEL_CHECK(a.defined() && b.defined()) << op << " with an undefined operand";
  if (a.dtype() == b.dtype()) return;
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta.element_of() != tb.element_of()) {
    if (is_imm(b) && !ta.is_bool()) {
      b = make_const(ta.element_of(), imm_value(b));
    } else if (is_imm(a) && !tb.is_bool()) {
      a = make_const(tb.element_of(), imm_value(a));
    } else {
      TESSEL_CHECK(false) << op << ": operand types differ (" << ta << " vs " << tb << "); insert a cast";
    }
  }
  if (a.dtype().lanes != b.dtype().lanes) {
    if (a.dtype().is_scalar()) {
      a = Broadcast::make(a, b.dtype().lanes);
    } else if (b.dtype().is_scalar()) {
      b = Broadcast::make(b, a.dtype().lanes);
    } else {
      TESSEL_CHECK(false) << op << ": lane counts differ (" << a.dtype() << " vs " << b.dtype() << ")";
    }
  }
}

#define TESSEL_BINOP(fn, Node, name)      \
  Expr fn(Expr a, Expr b) {               \
    match_types(name, a, b);              \
    return Node::make(std::move(a), std::move(b)); \
  }
TESSEL_BINOP(operator+, Add, "add")
TESSEL_BINOP(operator-, Sub, "sub")
TESSEL_BINOP(operator*, Mul, "mul")
TESSEL_BINOP(operator/, Div, "div")
TESSEL_BINOP(operator%, Mod, "mod")
TESSEL_BINOP(operator<, LT, "lt")
TESSEL_BINOP(operator<=, LE, "le")
TESSEL_BINOP(eq, EQ, "eq")
TESSEL_BINOP(ne, NE, "ne")
TESSEL_BINOP(min, Min, "min")
TESSEL_BINOP(max, Max, "max")
TESSEL_BINOP(operator&&, And, "and")
TESSEL_BINOP(operator||, Or, "or")
#undef TESSEL_BINOP

Expr operator>(Expr a, Expr b) { return b < a; }
Expr operator>=(Expr a, Expr b) { return b <= a; }
Expr operator-(Expr a) {
  if (auto* i = a.as<IntImm>()) return IntImm::make(a.dtype(), -i->value);
  if (auto* f = a.as<FloatImm>()) return FloatImm::make(a.dtype(), -f->value);
  return make_zero(a.dtype()) - a;
}
Expr operator!(Expr a) { return Not::make(std::move(a)); }

Expr select(Expr cond, Expr t, Expr f) {
  match_types("select", t, f);
  return Select::make(std::move(cond), std::move(t), std::move(f));
}
Expr if_then_else(Expr cond, Expr t, Expr f) {
  match_types("if_then_else", t, f);
  return Call::make(Intrinsic::kIfThenElse, {std::move(cond), std::move(t), std::move(f)});
}
Expr cast(DataType t, Expr v) {
  if (v.dtype() == t) return v;
  return Cast::make(t, std::move(v));
}

Expr exp(Expr x) { return Call::make(Intrinsic::kExp, {std::move(x)}); }
Expr log(Expr x) { return Call::make(Intrinsic::kLog, {std::move(x)}); }
Expr sqrt(Expr x) { return Call::make(Intrinsic::kSqrt, {std::move(x)}); }
Expr tanh(Expr x) { return Call::make(Intrinsic::kTanh, {std::move(x)}); }
Expr erf(Expr x) { return Call::make(Intrinsic::kErf, {std::move(x)}); }
Expr sigmoid(Expr x) { return Call::make(Intrinsic::kSigmoid, {std::move(x)}); }
Expr pow(Expr x, Expr y) {
  match_types("pow", x, y);
  return Call::make(Intrinsic::kPow, {std::move(x), std::move(y)});
}
Expr abs(Expr x) { return Call::make(Intrinsic::kAbs, {std::move(x)}); }
Expr floor(Expr x) { return Call::make(Intrinsic::kFloor, {std::move(x)}); }
Expr ceil(Expr x) { return Call::make(Intrinsic::kCeil, {std::move(x)}); }
Expr fma(Expr a, Expr b, Expr c) {
  match_types("fma", a, b);
  match_types("fma", b, c);
  match_types("fma", a, b);
  return Call::make(Intrinsic::kFma, {std::move(a), std::move(b), std::move(c)});
}

Expr min_value(DataType t) {
  if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
  return reduce_identity(ReduceKind::kMax, t);
}
Expr max_value(DataType t) {
  if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
  return reduce_identity(ReduceKind::kMin, t);
}

}  // namespace tessel::ir
