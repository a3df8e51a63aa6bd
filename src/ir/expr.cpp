// Construction of expression nodes: every make() checks its inputs so malformed IR fails here.
#include "tessel/ir/expr.h"

#include <cmath>
#include <limits>

#include "tessel/ir/buffer.h"
#include "tessel/support/error.h"

namespace tessel::ir {

const char* kind_name(ExprKind k) {
  switch (k) {
#define TESSEL_X(n, T) \
  case ExprKind::n: return #n;
    TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

Expr::Expr(int v) : Expr(IntImm::make(DataType::int32(), v)) {}
Expr::Expr(int64_t v) : Expr(IntImm::make(DataType::int64(), v)) {}
Expr::Expr(float v) : Expr(FloatImm::make(DataType::float32(), v)) {}
Expr::Expr(double v) : Expr(FloatImm::make(DataType::float32(), v)) {}

Expr IntImm::make(DataType t, int64_t v) {
  TESSEL_ICHECK(t.is_integer() || t.is_bool()) << "IntImm of non-integer type " << t;
  TESSEL_ICHECK(t.is_scalar()) << "IntImm must be scalar, got " << t;
  if (t.is_bool()) v = v != 0;
  if (t.bits < 64) {  // wrap to the type's width (two's complement)
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1)) & 1) u |= ~mask;
    v = int64_t(u);
  }
  return Expr(std::make_shared<IntImm>(t, v));
}

Expr FloatImm::make(DataType t, double v) {
  TESSEL_ICHECK(t.is_float() && t.is_scalar()) << "FloatImm of type " << t;
  if (t.bits == 32) v = double(float(v));
  return Expr(std::make_shared<FloatImm>(t, v));
}

Var::Var(std::string name, DataType t) : Expr(std::make_shared<VarNode>(t, std::move(name))) {}
Var::Var(const Expr& e) : Expr(e) { TESSEL_ICHECK(e.as<VarNode>()) << "not a Var: " << kind_name(e.kind()); }

template <ExprKind K>
Expr BinaryNode<K>::make(Expr a, Expr b) {
  TESSEL_ICHECK(a.defined() && b.defined()) << kind_name(K) << " with an undefined operand";
  TESSEL_CHECK(a.dtype() == b.dtype()) << kind_name(K) << ": operand types differ (" << a.dtype() << " vs "
                                       << b.dtype() << ")";
  DataType t = a.dtype();
  if constexpr (K == ExprKind::EQ || K == ExprKind::NE || K == ExprKind::LT || K == ExprKind::LE) {
    t = DataType::boolean(a.dtype().lanes);
  } else if constexpr (K == ExprKind::And || K == ExprKind::Or) {
    TESSEL_CHECK(a.dtype().is_bool()) << kind_name(K) << " needs bool operands, got " << a.dtype();
  } else if constexpr (K == ExprKind::Mod) {
    TESSEL_CHECK(!a.dtype().is_bool()) << "Mod of bool operands";
  } else {
    TESSEL_CHECK(!a.dtype().is_bool() && !a.dtype().is_handle())
        << kind_name(K) << " of " << a.dtype() << " operands";
  }
  return Expr(std::make_shared<BinaryNode<K>>(t, std::move(a), std::move(b)));
}
template struct BinaryNode<ExprKind::Add>;
template struct BinaryNode<ExprKind::Sub>;
template struct BinaryNode<ExprKind::Mul>;
template struct BinaryNode<ExprKind::Div>;
template struct BinaryNode<ExprKind::Mod>;
template struct BinaryNode<ExprKind::Min>;
template struct BinaryNode<ExprKind::Max>;
template struct BinaryNode<ExprKind::EQ>;
template struct BinaryNode<ExprKind::NE>;
template struct BinaryNode<ExprKind::LT>;
template struct BinaryNode<ExprKind::LE>;
template struct BinaryNode<ExprKind::And>;
template struct BinaryNode<ExprKind::Or>;

Expr Not::make(Expr a) {
  TESSEL_CHECK(a.defined() && a.dtype().is_bool()) << "Not needs a bool operand";
  DataType t = a.dtype();
  return Expr(std::make_shared<Not>(t, std::move(a)));
}

Expr Select::make(Expr c, Expr t, Expr f) {
  TESSEL_ICHECK(c.defined() && t.defined() && f.defined()) << "Select with undefined operand";
  TESSEL_CHECK(c.dtype().is_bool()) << "select condition must be bool, got " << c.dtype();
  TESSEL_CHECK(t.dtype() == f.dtype()) << "select branches differ in type (" << t.dtype() << " vs " << f.dtype() << ")";
  TESSEL_CHECK(c.dtype().lanes == 1 || c.dtype().lanes == t.dtype().lanes) << "select condition lanes mismatch";
  DataType dt = t.dtype();
  return Expr(std::make_shared<Select>(dt, std::move(c), std::move(t), std::move(f)));
}

Expr Cast::make(DataType t, Expr v) {
  TESSEL_ICHECK(v.defined()) << "Cast of undefined";
  TESSEL_CHECK(t.lanes == v.dtype().lanes) << "cast changes lanes (" << v.dtype() << " to " << t << ")";
  return Expr(std::make_shared<Cast>(t, std::move(v)));
}

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
    case Intrinsic::kExp: return "exp";
    case Intrinsic::kLog: return "log";
    case Intrinsic::kSqrt: return "sqrt";
    case Intrinsic::kTanh: return "tanh";
    case Intrinsic::kErf: return "erf";
    case Intrinsic::kSigmoid: return "sigmoid";
    case Intrinsic::kPow: return "pow";
    case Intrinsic::kAbs: return "abs";
    case Intrinsic::kFloor: return "floor";
    case Intrinsic::kCeil: return "ceil";
    case Intrinsic::kFma: return "fma";
    case Intrinsic::kIfThenElse: return "if_then_else";
    case Intrinsic::kPrefetch: return "prefetch";
    case Intrinsic::kSyncThreads: return "sync_threads";
  }
  return "?";
}

Expr Call::make(Intrinsic op, std::vector<Expr> args) {
  for (auto& a : args) TESSEL_ICHECK(a.defined()) << intrinsic_name(op) << " with undefined argument";
  size_t arity = 1;
  if (op == Intrinsic::kPow) arity = 2;
  if (op == Intrinsic::kFma || op == Intrinsic::kIfThenElse) arity = 3;
  if (op == Intrinsic::kPrefetch) arity = args.size();
  if (op == Intrinsic::kSyncThreads) arity = 0;
  TESSEL_CHECK(args.size() == arity) << intrinsic_name(op) << " takes " << arity << " arguments, got " << args.size();
  DataType t = args.empty() ? DataType::int32() : args.back().dtype();
  switch (op) {
    case Intrinsic::kIfThenElse:
      TESSEL_CHECK(args[0].dtype().is_bool()) << "if_then_else condition must be bool, got " << args[0].dtype();
      TESSEL_CHECK(args[1].dtype() == args[2].dtype())
          << "if_then_else branches differ in type (" << args[1].dtype() << " vs " << args[2].dtype() << ")";
      break;
    case Intrinsic::kAbs: break;
    case Intrinsic::kPrefetch:
    case Intrinsic::kSyncThreads: t = DataType::int32(); break;
    default:
      for (auto& a : args) {
        TESSEL_CHECK(a.dtype().is_float()) << intrinsic_name(op) << " needs float arguments, got " << a.dtype();
        TESSEL_CHECK(a.dtype() == t) << intrinsic_name(op) << ": argument types differ";
      }
  }
  return Expr(std::make_shared<Call>(t, op, std::move(args)));
}

Expr TensorRead::make(ProducerPtr p, std::vector<Expr> indices) {
  TESSEL_ICHECK(p) << "TensorRead of null producer";
  TESSEL_CHECK(indices.size() == p->shape().size())
      << "tensor " << p->name() << " has " << p->shape().size() << " dimensions but is indexed with "
      << indices.size();
  for (size_t i = 0; i < indices.size(); ++i) {
    TESSEL_CHECK(indices[i].defined() && indices[i].dtype().is_integer() && indices[i].dtype().is_scalar())
        << "tensor " << p->name() << ", index " << i << ": must be a scalar integer expression";
  }
  DataType t = p->dtype();
  return Expr(std::make_shared<TensorRead>(t, std::move(p), std::move(indices)));
}

IterVar make_iter_var(Var v, Expr min, Expr extent, IterKind kind) {
  TESSEL_ICHECK(v.defined() && min.defined() && extent.defined()) << "IterVar with undefined field";
  return std::make_shared<IterVarNode>(IterVarNode{std::move(v), std::move(min), std::move(extent), kind});
}

const char* reduce_kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kProd: return "prod";
  }
  return "?";
}

Expr reduce_identity(ReduceKind k, DataType t) {
  switch (k) {
    case ReduceKind::kSum: return make_const(t, 0);
    case ReduceKind::kProd: return make_const(t, 1);
    case ReduceKind::kMax:
      if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
      if (t.is_uint()) return make_const(t, 0);
      return make_const(t, t.bits >= 64 ? double(std::numeric_limits<int64_t>::min()) : -std::ldexp(1.0, t.bits - 1));
    case ReduceKind::kMin:
      if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
      if (t.is_uint()) return IntImm::make(t, t.bits >= 64 ? -1 : (int64_t(1) << t.bits) - 1);
      return IntImm::make(t, t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1);
  }
  return Expr();
}

Expr reduce_combine(ReduceKind k, Expr acc, Expr v) {
  switch (k) {
    case ReduceKind::kSum: return Add::make(acc, v);
    case ReduceKind::kProd: return Mul::make(acc, v);
    case ReduceKind::kMax: return Max::make(acc, v);
    case ReduceKind::kMin: return Min::make(acc, v);
  }
  return Expr();
}

Expr Reduce::make(ReduceKind op, Expr source, std::vector<IterVar> axes, Expr condition) {
  TESSEL_CHECK(source.defined()) << reduce_kind_name(op) << " of an undefined expression";
  TESSEL_CHECK(!axes.empty()) << reduce_kind_name(op) << " needs at least one reduction axis";
  for (auto& a : axes) {
    TESSEL_CHECK(a && a->kind == IterKind::kReduce)
        << reduce_kind_name(op) << ": axis " << (a ? a->var.name() : "?") << " is not a reduce_axis";
  }
  if (condition.defined()) TESSEL_CHECK(condition.dtype().is_bool()) << "reduction condition must be bool";
  DataType t = source.dtype();
  return Expr(std::make_shared<Reduce>(t, op, std::move(source), std::move(axes), std::move(condition)));
}

BufferLoad::BufferLoad(DataType t, Buffer b, std::vector<Expr> i)
    : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)) {}

Expr BufferLoad::make(Buffer b, std::vector<Expr> indices) {
  TESSEL_ICHECK(b) << "BufferLoad of null buffer";
  TESSEL_ICHECK(indices.size() == b->shape.size()) << "buffer " << b->name << " indexed with " << indices.size()
                                                   << " indices, rank " << b->shape.size();
  int lanes = 1;
  for (auto& i : indices) lanes = std::max<int>(lanes, i.dtype().lanes);
  DataType t = b->dtype.with_lanes(lanes);
  return Expr(std::make_shared<BufferLoad>(t, std::move(b), std::move(indices)));
}

Load::Load(DataType t, Buffer b, Expr i, Expr p)
    : ExprNode(kKind, t), buffer(std::move(b)), index(std::move(i)), predicate(std::move(p)) {}

Expr Load::make(Buffer b, Expr index, Expr predicate) {
  TESSEL_ICHECK(b && index.defined()) << "Load with null buffer or index";
  TESSEL_ICHECK(index.dtype().is_integer()) << "Load index of type " << index.dtype();
  if (predicate.defined())
    TESSEL_ICHECK(predicate.dtype().is_bool() && predicate.dtype().lanes == index.dtype().lanes)
        << "Load predicate must be bool with the index's lanes";
  DataType t = b->dtype.with_lanes(index.dtype().lanes);
  return Expr(std::make_shared<Load>(t, std::move(b), std::move(index), std::move(predicate)));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  TESSEL_ICHECK(base.defined() && stride.defined() && lanes > 1) << "Ramp needs base, stride and lanes > 1";
  TESSEL_ICHECK(base.dtype().is_scalar() && base.dtype() == stride.dtype()) << "Ramp base/stride types";
  DataType t = base.dtype().with_lanes(lanes);
  return Expr(std::make_shared<Ramp>(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
  TESSEL_ICHECK(value.defined() && value.dtype().is_scalar() && lanes > 1) << "Broadcast of vector or lanes <= 1";
  DataType t = value.dtype().with_lanes(lanes);
  return Expr(std::make_shared<Broadcast>(t, std::move(value), lanes));
}

Expr Let::make(Var var, Expr value, Expr body) {
  TESSEL_ICHECK(var.defined() && value.defined() && body.defined()) << "Let with undefined field";
  TESSEL_ICHECK(var.dtype() == value.dtype()) << "Let " << var.name() << ": type mismatch";
  DataType t = body.dtype();
  return Expr(std::make_shared<Let>(t, std::move(var), std::move(value), std::move(body)));
}

const int64_t* as_const_int(const Expr& e) {
  if (!e.defined()) return nullptr;
  if (auto* i = e.as<IntImm>()) return &i->value;
  if (auto* b = e.as<Broadcast>()) return as_const_int(b->value);
  return nullptr;
}

Expr make_const(DataType t, double v) {
  if (t.is_vector()) return Broadcast::make(make_const(t.element_of(), v), t.lanes);
  if (t.is_float()) return FloatImm::make(t, v);
  return IntImm::make(t, int64_t(v));
}

}  // namespace tessel::ir
