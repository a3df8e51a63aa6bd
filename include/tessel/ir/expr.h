// Expression IR.
//
// Semantics (shared by the simplifier, the interpreter-free codegen and every test):
//  - Integers are two's complement of their width; overflow wraps. Index arithmetic is int32 unless a
//    tensor is large enough to need int64 (lowering picks int64 for buffers over 2^31 elements).
//  - Div and Mod on integers are *floor* division and *floor* modulo (Python style): -7 / 2 == -4,
//    -7 % 2 == 1. Division by zero is undefined behaviour, as in C. On floats Div is IEEE division.
//  - Floats follow IEEE-754; the code generator may contract a*b+c into a fused multiply-add
//    (documented in docs/codegen.md); no other fast-math reassociation is allowed.
//  - Select(c, t, f) evaluates both operands; the intrinsic if_then_else evaluates only the chosen one
//    (safe for out-of-bounds guarded loads, used for padding).
//  - Vector nodes: Ramp(base, stride, lanes), Broadcast(value, lanes); every operand of an arithmetic
//    node has the same lane count.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tessel/ir/dtype.h"

namespace tessel::ir {

// The list of expression kinds, written once. Kind enum, visitor and mutator come from it.
#define TESSEL_EXPR_NODES(X)                                                                        \
  X(IntImm, IntImm) X(FloatImm, FloatImm) X(Var, VarNode) X(Add, Add) X(Sub, Sub) X(Mul, Mul)       \
  X(Div, Div) X(Mod, Mod) X(Min, Min) X(Max, Max) X(EQ, EQ) X(NE, NE) X(LT, LT) X(LE, LE)          \
  X(And, And) X(Or, Or) X(Not, Not) X(Select, Select) X(Cast, Cast) X(Call, Call)                   \
  X(TensorRead, TensorRead) X(Reduce, Reduce) X(BufferLoad, BufferLoad) X(Load, Load)               \
  X(Ramp, Ramp) X(Broadcast, Broadcast) X(Let, Let)

enum class ExprKind : uint8_t {
#define TESSEL_X(n, T) n,
  TESSEL_EXPR_NODES(TESSEL_X)
#undef TESSEL_X
};
const char* kind_name(ExprKind k);

struct ExprNode {
  ExprKind kind;
  DataType dtype;
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
};

/** A reference to an immutable expression node (null when default-constructed). */
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : p_(std::move(n)) {}
  Expr(int v);     // NOLINT: int32 constant
  Expr(int64_t v); // NOLINT: int64 constant
  Expr(float v);   // NOLINT: float32 constant
  Expr(double v);  // NOLINT: float32 constant (tessel's default float type)

  bool defined() const { return p_ != nullptr; }
  const ExprNode* get() const { return p_.get(); }
  const ExprNode* operator->() const { return p_.get(); }
  DataType dtype() const { return p_->dtype; }
  ExprKind kind() const { return p_->kind; }
  bool same_as(const Expr& o) const { return p_ == o.p_; }
  /** Downcast by kind tag; null when this is another kind. */
  template <class T>
  const T* as() const {
    return p_ && p_->kind == T::kKind ? static_cast<const T*>(p_.get()) : nullptr;
  }
  const std::shared_ptr<const ExprNode>& node() const { return p_; }

 private:
  std::shared_ptr<const ExprNode> p_;
};

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  static Expr make(DataType t, int64_t v);
  auto fields() const { return std::tie(value); }
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  static Expr make(DataType t, double v);
  auto fields() const { return std::tie(value); }
};

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  VarNode(DataType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
  auto fields() const { return std::tie(name); }
};

/** A variable; identity is the node (two Vars with one name are different variables). */
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::int32());
  explicit Var(const Expr& e);  // e must be a Var node
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

/** Binary arithmetic/comparison/logic nodes share one shape. */
template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = K;
  Expr a, b;
  BinaryNode(DataType t, Expr a_, Expr b_) : ExprNode(K, t), a(std::move(a_)), b(std::move(b_)) {}
  /** Checks both operands are defined and of one dtype. */
  static Expr make(Expr a, Expr b);
  auto fields() const { return std::tie(a, b); }
};
using Add = BinaryNode<ExprKind::Add>;
using Sub = BinaryNode<ExprKind::Sub>;
using Mul = BinaryNode<ExprKind::Mul>;
using Div = BinaryNode<ExprKind::Div>;
using Mod = BinaryNode<ExprKind::Mod>;
using Min = BinaryNode<ExprKind::Min>;
using Max = BinaryNode<ExprKind::Max>;
using EQ = BinaryNode<ExprKind::EQ>;
using NE = BinaryNode<ExprKind::NE>;
using LT = BinaryNode<ExprKind::LT>;
using LE = BinaryNode<ExprKind::LE>;
using And = BinaryNode<ExprKind::And>;
using Or = BinaryNode<ExprKind::Or>;

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  Not(DataType t, Expr a_) : ExprNode(kKind, t), a(std::move(a_)) {}
  static Expr make(Expr a);
  auto fields() const { return std::tie(a); }
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, true_value, false_value;
  Select(DataType t, Expr c, Expr tv, Expr fv)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
  static Expr make(Expr cond, Expr t, Expr f);
  auto fields() const { return std::tie(cond, true_value, false_value); }
};

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  static Expr make(DataType t, Expr v);
  auto fields() const { return std::tie(value); }
};

/** Math intrinsics. if_then_else(c, t, f) evaluates only the chosen operand. sync_threads() (no
 *  arguments, int32) is a GPU block-wide barrier (__syncthreads); it does nothing on a CPU. */
enum class Intrinsic : uint8_t {
  kExp, kLog, kSqrt, kTanh, kErf, kSigmoid, kPow, kAbs, kFloor, kCeil, kFma, kIfThenElse, kPrefetch, kSyncThreads
};
const char* intrinsic_name(Intrinsic op);

struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic op;
  std::vector<Expr> args;
  Call(DataType t, Intrinsic o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  /** Checks arity and operand types of the intrinsic. */
  static Expr make(Intrinsic op, std::vector<Expr> args);
  auto fields() const { return std::tie(op, args); }
};

/** Something whose elements a TensorRead reads: a tensor-expression operation (te::Operation). */
class Producer {
 public:
  virtual ~Producer() = default;
  virtual const std::string& name() const = 0;
  virtual DataType dtype() const = 0;
  virtual const std::vector<Expr>& shape() const = 0;
};
using ProducerPtr = std::shared_ptr<const Producer>;

/** Element of a tensor-expression tensor, before lowering: A[i, j]. */
struct TensorRead : ExprNode {
  static constexpr ExprKind kKind = ExprKind::TensorRead;
  ProducerPtr producer;
  std::vector<Expr> indices;
  TensorRead(DataType t, ProducerPtr p, std::vector<Expr> i)
      : ExprNode(kKind, t), producer(std::move(p)), indices(std::move(i)) {}
  /** Checks the index count matches the producer's rank and indices are integers. */
  static Expr make(ProducerPtr p, std::vector<Expr> indices);
  auto fields() const { return std::tie(producer, indices); }
};

/** Data-parallel or reduction loop variable with its domain [min, min + extent). */
enum class IterKind : uint8_t { kDataPar, kReduce };
struct IterVarNode {
  Var var;
  Expr min, extent;
  IterKind kind;
  auto fields() const { return std::tie(var, min, extent, kind); }
};
using IterVar = std::shared_ptr<const IterVarNode>;
IterVar make_iter_var(Var v, Expr min, Expr extent, IterKind kind);

enum class ReduceKind : uint8_t { kSum, kMax, kMin, kProd };
const char* reduce_kind_name(ReduceKind k);
/** Identity element of the reduction for dtype t (0, -inf/lowest, +inf/max, 1). */
Expr reduce_identity(ReduceKind k, DataType t);
/** Combines accumulator and value: acc + v, max(acc, v), ... */
Expr reduce_combine(ReduceKind k, Expr acc, Expr v);

/** A reduction over axes; allowed only at the top of a compute body. */
struct Reduce : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  ReduceKind op;
  Expr source;
  std::vector<IterVar> axes;
  Expr condition;  // may be undefined (= true)
  Reduce(DataType t, ReduceKind o, Expr s, std::vector<IterVar> ax, Expr c)
      : ExprNode(kKind, t), op(o), source(std::move(s)), axes(std::move(ax)), condition(std::move(c)) {}
  static Expr make(ReduceKind op, Expr source, std::vector<IterVar> axes, Expr condition = Expr());
  auto fields() const { return std::tie(op, source, axes, condition); }
};

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;

/** Multi-dimensional element read of a buffer (before storage flattening). */
struct BufferLoad : ExprNode {
  static constexpr ExprKind kKind = ExprKind::BufferLoad;
  Buffer buffer;
  std::vector<Expr> indices;
  BufferLoad(DataType t, Buffer b, std::vector<Expr> i);
  static Expr make(Buffer b, std::vector<Expr> indices);
  auto fields() const { return std::tie(buffer, indices); }
};

/** Flat read buffer[index]; a vector index (Ramp) gives a vector load; predicate masks lanes. */
struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  Expr index;
  Expr predicate;  // undefined = all lanes
  Load(DataType t, Buffer b, Expr i, Expr p);
  static Expr make(Buffer b, Expr index, Expr predicate = Expr());
  auto fields() const { return std::tie(buffer, index, predicate); }
};

struct Ramp : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  int lanes;
  Ramp(DataType t, Expr b, Expr s, int l) : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static Expr make(Expr base, Expr stride, int lanes);
  auto fields() const { return std::tie(base, stride, lanes); }
};

struct Broadcast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes;
  Broadcast(DataType t, Expr v, int l) : ExprNode(kKind, t), value(std::move(v)), lanes(l) {}
  static Expr make(Expr value, int lanes);
  auto fields() const { return std::tie(value, lanes); }
};

struct Let : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;
  Var var;
  Expr value, body;
  Let(DataType t, Var v, Expr val, Expr b) : ExprNode(kKind, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Expr make(Var var, Expr value, Expr body);
  auto fields() const { return std::tie(var, value, body); }
};

/** Integer constant value when e is an IntImm (or a Broadcast of one). */
const int64_t* as_const_int(const Expr& e);
/** Makes a constant of dtype t (int or float) with value v. */
Expr make_const(DataType t, double v);
inline Expr make_zero(DataType t) { return make_const(t, 0); }

}  // namespace tessel::ir
