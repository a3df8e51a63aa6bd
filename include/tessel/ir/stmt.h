// Statement IR: loops, stores, allocations, conditionals, sequences, attributes.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tessel/ir/buffer.h"
#include "tessel/ir/expr.h"

namespace tessel::ir {

#define TESSEL_STMT_NODES(X)                                                                     \
  X(For, For) X(BufferStore, BufferStore) X(Store, Store) X(Allocate, Allocate) X(Seq, Seq)        \
  X(IfThenElse, IfThenElse) X(Evaluate, Evaluate) X(LetStmt, LetStmt) X(AttrStmt, AttrStmt)

enum class StmtKind : uint8_t {
#define TESSEL_X(n, T) n,
  TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
};
const char* kind_name(StmtKind k);

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

/** A reference to an immutable statement node. */
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : p_(std::move(n)) {}
  bool defined() const { return p_ != nullptr; }
  const StmtNode* get() const { return p_.get(); }
  const StmtNode* operator->() const { return p_.get(); }
  StmtKind kind() const { return p_->kind; }
  bool same_as(const Stmt& o) const { return p_ == o.p_; }
  template <class T>
  const T* as() const {
    return p_ && p_->kind == T::kKind ? static_cast<const T*>(p_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> p_;
};

/** How a loop runs: in order, across threads, as vector lanes, copied out (unrolled), or bound to a GPU
 *  block/thread index (on a CPU such a loop runs as a serial loop; see docs/gpu-codegen.md). */
enum class ForKind : uint8_t {
  kSerial, kParallel, kVectorized, kUnrolled,
  kBlockIdxX, kBlockIdxY, kBlockIdxZ, kThreadIdxX, kThreadIdxY, kThreadIdxZ
};
/** "for", "parallel", ..., or the thread tag ("blockIdx.x", "threadIdx.y", ...) of a bound loop. */
const char* for_kind_name(ForKind k);
/** True for loops bound to blockIdx.* or threadIdx.*. */
inline bool is_gpu_bound(ForKind k) { return k >= ForKind::kBlockIdxX; }
inline bool is_block_bound(ForKind k) { return k >= ForKind::kBlockIdxX && k <= ForKind::kBlockIdxZ; }
inline bool is_thread_bound(ForKind k) { return k >= ForKind::kThreadIdxX; }
/** Dimension 0..2 (x, y, z) of a bound loop's kind. */
inline int gpu_dim(ForKind k) { return (int(k) - int(ForKind::kBlockIdxX)) % 3; }
/** The ForKind of a thread tag ("blockIdx.x" ... "threadIdx.z"); false when tag is not one. */
bool for_kind_of_thread_tag(const std::string& tag, ForKind* out);

struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  For(Var v, Expr mn, Expr ex, ForKind k, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)), extent(std::move(ex)), for_kind(k), body(std::move(b)) {}
  static Stmt make(Var var, Expr min, Expr extent, ForKind kind, Stmt body);
  auto fields() const { return std::tie(var, min, extent, for_kind, body); }
};

/** Multi-dimensional store (before storage flattening). */
struct BufferStore : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BufferStore;
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  BufferStore(Buffer b, Expr v, std::vector<Expr> i) : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices);
  auto fields() const { return std::tie(buffer, value, indices); }
};

/** Flat store buffer[index] = value; vector index = vector store; predicate masks lanes. */
struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  Expr value, index, predicate;
  Store(Buffer b, Expr v, Expr i, Expr p) : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), index(std::move(i)), predicate(std::move(p)) {}
  static Stmt make(Buffer buffer, Expr value, Expr index, Expr predicate = Expr());
  auto fields() const { return std::tie(buffer, value, index, predicate); }
};

/** Allocates `buffer` (its shape gives the size) for the duration of body. */
struct Allocate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  Allocate(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  static Stmt make(Buffer buffer, Stmt body);
  auto fields() const { return std::tie(buffer, body); }
};

struct Seq : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> seq;
  explicit Seq(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
  /** Flattens nested Seqs; a single statement is returned as is. */
  static Stmt make(std::vector<Stmt> seq);
  auto fields() const { return std::tie(seq); }
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr cond;
  Stmt then_case, else_case;  // else_case may be undefined
  IfThenElse(Expr c, Stmt t, Stmt e) : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  static Stmt make(Expr cond, Stmt then_case, Stmt else_case = Stmt());
  auto fields() const { return std::tie(cond, then_case, else_case); }
};

struct Evaluate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;
  explicit Evaluate(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  static Stmt make(Expr value);
  auto fields() const { return std::tie(value); }
};

struct LetStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  Var var;
  Expr value;
  Stmt body;
  LetStmt(Var v, Expr val, Stmt b) : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Stmt make(Var var, Expr value, Stmt body);
  auto fields() const { return std::tie(var, value, body); }
};

/** Keyed annotation on a region, e.g. pragma "auto_unroll_max_step" = 64. */
struct AttrStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AttrStmt;
  std::string key;
  Expr value;
  Stmt body;
  AttrStmt(std::string k, Expr v, Stmt b) : StmtNode(kKind), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
  static Stmt make(std::string key, Expr value, Stmt body);
  auto fields() const { return std::tie(key, value, body); }
};

/** A lowered function: parameters (one buffer per tensor argument, in order) and a body. */
struct LoweredFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

}  // namespace tessel::ir
