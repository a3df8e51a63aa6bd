// Lowered IR -> LLVM IR.
//
// Guide:
//  - CodeGen::emit_function   the exported NAME(T0* noalias align(A) a0, ...) and NAME_packed(void**).
//  - CodeGen::emit(Expr)      one switch over ExprKind; arithmetic in emit_binary, casts in cast_value,
//                             memory in emit_load/emit_store, intrinsics in emit_call.
//  - CodeGen::emit(Stmt)      loops (emit_for / emit_parallel_for), allocations, conditionals.
//  - emit_parallel_for        outlines a parallel loop body into an internal function taking its free
//                             variables as (noalias) parameters, a task wrapper unpacking a closure struct,
//                             and a call to tessel_parallel_for (see c_runtime.h).
//  - GPU (NVPTX) mode, when emit_module gets GpuEmitOptions: emit_kernel makes a void kernel taking
//                             ptr addrspace(1) per buffer; loops bound to blockIdx/threadIdx read the
//                             special registers (emit_gpu_bound_for); shared buffers are addrspace(3)
//                             globals (or slices of the dynamic shared array), local ones allocas;
//                             sync_threads() is llvm.nvvm.barrier0; exp/log/tanh/erf use ex2/lg2.approx.
//  - LaneProjector            scalarizes one lane of a vector expression (for a vector if_then_else whose
//                             branches must not be evaluated on the lanes not chosen).
// Register types: bool is i1, bfloat16 is its i16 bit pattern (arithmetic goes through float32),
// float16 is LLVM half. In memory bool takes one byte (i8).
// Floating-point: only the `contract` fast-math flag, on fadd/fsub/fmul (lets the backend form FMAs).
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "llvm_module.h"
#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"
#include "tessel/ir/printer.h"
#include "tessel/runtime/ndarray.h"
#include "tessel/support/error.h"

namespace tessel::codegen::detail {
namespace {

using namespace tessel::ir;
using llvm::Value;

constexpr int64_t kMaxStackAllocBytes = 64 * 1024;

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/** Largest power of two (capped at 2^20) known to divide the integer expression e. */
int64_t known_multiple(const Expr& e) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (const int64_t* c = as_const_int(e)) {
    if (*c == 0) return kCap;
    int64_t low = *c & -*c;
    return std::min(kCap, low < 0 ? kCap : low);
  }
  if (auto* a = e.as<Add>()) return std::min(known_multiple(a->a), known_multiple(a->b));
  if (auto* s = e.as<Sub>()) return std::min(known_multiple(s->a), known_multiple(s->b));
  if (auto* m = e.as<Mul>()) return std::min(kCap, known_multiple(m->a) * known_multiple(m->b));
  // Floor modulo: a - c * floor(a / c) is a multiple of whatever power of two divides both a and c.
  if (auto* m = e.as<Mod>()) return std::min(known_multiple(m->a), known_multiple(m->b));
  if (auto* c = e.as<Cast>()) return c->value.dtype().is_integer() ? known_multiple(c->value) : 1;
  return 1;
}

/** Replaces each vector sub-expression by its value on one lane. Vector variables bound outside the
 *  expression become fresh scalar variables listed in `extracts` (the caller binds them). */
class LaneProjector : public IRMutator {
 public:
  explicit LaneProjector(int lane) : lane_(lane) {}
  std::vector<std::pair<Var, const VarNode*>> extracts;  // fresh scalar var, vector var it reads

 protected:
  Expr mutate_(const Ramp* op, const Expr&) override {
    Expr base = mutate(op->base), stride = mutate(op->stride);
    return Add::make(base, Mul::make(stride, IntImm::make(stride.dtype(), lane_)));
  }
  Expr mutate_(const Broadcast* op, const Expr&) override { return mutate(op->value); }
  Expr mutate_(const VarNode* op, const Expr& e) override {
    auto it = renamed_.find(op);
    if (it != renamed_.end()) return it->second;
    if (op->dtype.is_scalar()) return e;
    Var fresh(op->name + ".lane" + std::to_string(lane_), op->dtype.element_of());
    extracts.emplace_back(fresh, op);
    renamed_[op] = fresh;
    return fresh;
  }
  Expr mutate_(const Let* op, const Expr& e) override {
    Expr value = mutate(op->value);
    if (value.dtype() == op->var.dtype()) {
      Expr body = mutate(op->body);
      return Let::make(op->var, value, body);
    }
    Var fresh(op->var.name() + ".lane" + std::to_string(lane_), value.dtype());
    renamed_[op->var.get()] = fresh;
    Expr body = mutate(op->body);
    return Let::make(fresh, value, body);
  }

 private:
  int lane_;
  std::unordered_map<const VarNode*, Expr> renamed_;
};

/** True when evaluating e may fault (a Load, or an integer division by a non-constant). */
bool may_fault(const Expr& e) {
  bool fault = false;
  post_order_visit(e, [&](const Expr& x) {
    if (x.as<Load>()) fault = true;
    if (auto* d = x.as<Div>()) fault |= d->a.dtype().is_integer() && !as_const_int(d->b);
    if (auto* m = x.as<Mod>()) fault |= m->a.dtype().is_integer() && !as_const_int(m->b);
  });
  return fault;
}

/** Variables and buffers a statement mentions (used to build a parallel loop's closure). */
class UseCollector : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;
  std::vector<const BufferNode*> buffers;

 protected:
  void visit_(const VarNode* op) override { add(vars, op); }
  void visit_(const Load* op) override {
    add(buffers, op->buffer.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Store* op) override {
    add(buffers, op->buffer.get());
    IRVisitor::visit_(op);
  }

 private:
  template <class T>
  void add(std::vector<const T*>& v, const T* p) {
    if (seen_.insert(p).second) v.push_back(p);
  }
  std::unordered_set<const void*> seen_;
};

class CodeGen {
 public:
  CodeGen(llvm::LLVMContext& ctx, llvm::Module& m, llvm::TargetMachine& tm, const GpuEmitOptions* gpu = nullptr)
      : ctx_(ctx), mod_(m), b_(ctx), cpu_(tm.getTargetCPU().str()), features_(tm.getTargetFeatureString().str()),
        gpu_(gpu) {}

  void emit_function(const LoweredFunc& f);
  /** GPU mode: the kernel NAME(ptr addrspace(1) a0, ...) with nvvm.annotations. */
  void emit_kernel(const LoweredFunc& f);

 private:
  // ---- types -------------------------------------------------------------------------------------
  llvm::Type* scalar_reg_type(DataType t) {
    switch (t.code) {
      case DataType::kBool:
        return b_.getInt1Ty();
      case DataType::kInt:
      case DataType::kUInt:
        return b_.getIntNTy(t.bits);
      case DataType::kBFloat:
        return b_.getInt16Ty();
      case DataType::kFloat:
        if (t.bits == 16) return b_.getHalfTy();
        if (t.bits == 32) return b_.getFloatTy();
        if (t.bits == 64) return b_.getDoubleTy();
        break;
      case DataType::kHandle:
        return b_.getPtrTy();
    }
    TESSEL_ICHECK(false) << "codegen: unsupported dtype " << t;
    return nullptr;
  }
  llvm::Type* vec(llvm::Type* elem, int lanes) {
    return lanes == 1 ? elem : llvm::FixedVectorType::get(elem, unsigned(lanes));
  }
  llvm::Type* reg_type(DataType t) { return vec(scalar_reg_type(t.element_of()), t.lanes); }
  llvm::Type* mem_elem_type(DataType t) { return t.is_bool() ? b_.getInt8Ty() : scalar_reg_type(t.element_of()); }
  llvm::Type* mem_type(DataType t) { return vec(mem_elem_type(t), t.lanes); }

  Value* splat(Value* v, int lanes) { return lanes == 1 ? v : b_.CreateVectorSplat(unsigned(lanes), v); }
  Value* const_int(DataType t, int64_t v) {
    return splat(llvm::ConstantInt::get(scalar_reg_type(t.element_of()), uint64_t(v), true), t.lanes);
  }
  Value* const_float(DataType t, double v) {
    DataType e = t.element_of();
    Value* c = e.code == DataType::kBFloat ? static_cast<Value*>(b_.getInt16(runtime::float_to_bfloat16(float(v))))
                                           : static_cast<Value*>(llvm::ConstantFP::get(scalar_reg_type(e), v));
    return splat(c, t.lanes);
  }
  static Value* contract(Value* v) {
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(v)) {
      llvm::FastMathFlags f;
      f.setAllowContract(true);
      i->setFastMathFlags(f);
    }
    return v;
  }

  // ---- expressions -------------------------------------------------------------------------------
  Value* emit(const Expr& e);
  Value* emit_binary(ExprKind k, DataType t, Value* a, Value* b, const Expr& rhs);
  Value* emit_int_div_mod(bool is_div, DataType t, Value* a, Value* b, const Expr& rhs);
  Value* cast_value(Value* v, DataType from, DataType to);
  Value* bf16_to_f32(Value* v, int lanes);
  Value* f32_to_bf16(Value* v, int lanes);
  Value* emit_load(const Load* op);
  Value* emit_call(const Call* op);
  Value* emit_math(Intrinsic op, std::vector<Value*> args, DataType t);
  Value* call_libm(const std::string& name, Value* x, DataType t);
  Value* emit_if_then_else(const Call* op);
  Value* emit_prefetch(const Call* op);
  Value* emit_lane(const Expr& e, int lane);
  Value* element_pointer(const BufferNode* buf, Value* index, DataType index_t);
  Value* buffer_pointer(const BufferNode* buf);
  llvm::Align access_align(const BufferNode* buf, const Expr& index_base);
  Value* to_register(Value* v, DataType t) {
    return t.is_bool() ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
  }
  Value* to_memory(Value* v, DataType t) { return t.is_bool() ? b_.CreateZExt(v, mem_type(t)) : v; }
  Value* mask_of(const Expr& predicate, int lanes);
  /** Emits `cond ? then_fn() : else_fn()` with branches; the result is a phi. */
  Value* emit_branches(Value* cond, const std::function<Value*()>& then_fn, const std::function<Value*()>& else_fn);

  // ---- statements --------------------------------------------------------------------------------
  void emit(const Stmt& s);
  void emit_for(const For* op);
  void emit_parallel_for(const For* op);
  void emit_loop(Value* begin, Value* end, const std::function<void(Value*)>& body, ForKind kind);
  void emit_store(const Store* op);
  void emit_allocate(const Allocate* op);
  llvm::AllocaInst* entry_alloca(llvm::Type* t, llvm::Align align, const std::string& name);
  llvm::FunctionCallee runtime_fn(const char* name);
  void set_function_attrs(llvm::Function* f);

  // ---- bindings ----------------------------------------------------------------------------------
  struct ScopedVar {
    CodeGen* cg;
    const VarNode* v;
    Value* saved;
    bool had;
    ScopedVar(CodeGen* c, const VarNode* var, Value* val) : cg(c), v(var) {
      auto it = cg->vars_.find(v);
      had = it != cg->vars_.end();
      saved = had ? it->second : nullptr;
      cg->vars_[v] = val;
    }
    ~ScopedVar() {
      if (had)
        cg->vars_[v] = saved;
      else
        cg->vars_.erase(v);
    }
  };

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  std::string cpu_, features_;
  std::string func_name_;
  llvm::Function* fn_ = nullptr;
  bool in_parallel_ = false;
  const GpuEmitOptions* gpu_ = nullptr;
  llvm::GlobalVariable* dyn_shared_ = nullptr;  // the extern dynamic shared array (GPU, large shared)
  int64_t dyn_shared_offset_ = 0;
  void emit_gpu_bound_for(const For* op);
  void emit_gpu_allocate(const Allocate* op);
  Value* emit_gpu_math(Intrinsic op, const std::vector<Value*>& a, DataType t);
  Value* nvvm_unary(llvm::Intrinsic::ID id, Value* x, DataType t);
  int num_parallel_ = 0;
  std::unordered_map<const VarNode*, Value*> vars_;
  std::unordered_map<const BufferNode*, Value*> bufs_;
};

// =================================================================================================
// Functions
// =================================================================================================

void CodeGen::set_function_attrs(llvm::Function* f) {
  if (!cpu_.empty()) f->addFnAttr("target-cpu", cpu_);
  if (!features_.empty()) f->addFnAttr("target-features", features_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
}

void CodeGen::emit_function(const LoweredFunc& f) {
  TESSEL_CHECK(!f.name.empty()) << "codegen: function needs a name";
  for (char c : f.name)
    TESSEL_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '_')
        << "codegen: function name '" << f.name << "' is not a C identifier";
  TESSEL_ICHECK(f.body.defined()) << "codegen: function " << f.name << " has no body";
  func_name_ = f.name;
  std::vector<llvm::Type*> params(f.params.size(), b_.getPtrTy());
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), params, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, f.name, mod_);
  set_function_attrs(fn);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const auto& buf = f.params[i];
    TESSEL_ICHECK(buf) << "codegen: function " << f.name << ", parameter " << i << " is null";
    auto* arg = fn->getArg(unsigned(i));
    arg->setName(buf->name);
    arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::NoUndef);
    if (is_power_of_two(buf->align_bytes))
      arg->addAttrs(llvm::AttrBuilder(ctx_).addAlignmentAttr(llvm::Align(uint64_t(buf->align_bytes))));
    bufs_[buf.get()] = arg;
    vars_[buf->data.get()] = arg;
  }
  fn_ = fn;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  emit(f.body);
  b_.CreateRet(b_.getInt32(0));

  // NAME_packed(void* const* args) unpacks args[i] and calls NAME.
  auto* pty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
  auto* packed = llvm::Function::Create(pty, llvm::Function::ExternalLinkage, f.name + "_packed", mod_);
  set_function_attrs(packed);
  packed->getArg(0)->setName("args");
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", packed));
  std::vector<Value*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), packed->getArg(0), i);
    args.push_back(b_.CreateLoad(b_.getPtrTy(), slot, f.params[i]->name));
  }
  b_.CreateRet(b_.CreateCall(fn, args));
  bufs_.clear();
  vars_.clear();
}

llvm::FunctionCallee CodeGen::runtime_fn(const char* name) {
  std::string n = name;
  auto* i32 = b_.getInt32Ty();
  auto* i64 = b_.getInt64Ty();
  auto* ptr = b_.getPtrTy();
  llvm::FunctionType* t = nullptr;
  if (n == "tessel_parallel_for")
    t = llvm::FunctionType::get(i32, {i64, i64, ptr, ptr}, false);
  else if (n == "tessel_alloc_aligned")
    t = llvm::FunctionType::get(ptr, {i64, i64}, false);
  else if (n == "tessel_free_aligned")
    t = llvm::FunctionType::get(b_.getVoidTy(), {ptr}, false);
  TESSEL_ICHECK(t) << "unknown runtime function " << n;
  auto callee = mod_.getOrInsertFunction(n, t);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) f->addFnAttr(llvm::Attribute::NoUnwind);
  return callee;
}

llvm::AllocaInst* CodeGen::entry_alloca(llvm::Type* t, llvm::Align align, const std::string& name) {
  llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  auto* a = eb.CreateAlloca(t, nullptr, name);
  a->setAlignment(align);
  return a;
}

// =================================================================================================
// Expressions
// =================================================================================================

Value* CodeGen::emit(const Expr& e) {
  TESSEL_ICHECK(e.defined()) << "codegen: undefined expression";
  DataType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::IntImm:
      return const_int(t, e.as<IntImm>()->value);
    case ExprKind::FloatImm:
      return const_float(t, e.as<FloatImm>()->value);
    case ExprKind::Var: {
      auto* v = e.as<VarNode>();
      auto it = vars_.find(v);
      TESSEL_ICHECK(it != vars_.end()) << "codegen: variable " << v->name << " is not bound in function " << func_name_;
      return it->second;
    }
#define TESSEL_BIN(K)                                                                \
  case ExprKind::K: {                                                                \
    auto* op = e.as<K>();                                                            \
    return emit_binary(ExprKind::K, op->a.dtype(), emit(op->a), emit(op->b), op->b); \
  }
      TESSEL_BIN(Add)
      TESSEL_BIN(Sub) TESSEL_BIN(Mul) TESSEL_BIN(Div) TESSEL_BIN(Mod) TESSEL_BIN(Min) TESSEL_BIN(Max) TESSEL_BIN(EQ)
          TESSEL_BIN(NE) TESSEL_BIN(LT) TESSEL_BIN(LE) TESSEL_BIN(And) TESSEL_BIN(Or)
#undef TESSEL_BIN
              case ExprKind::Not : return b_.CreateNot(emit(e.as<Not>()->a));
    case ExprKind::Select: {
      auto* op = e.as<Select>();
      Value* c = emit(op->cond);
      Value* tv = emit(op->true_value);
      Value* fv = emit(op->false_value);
      return b_.CreateSelect(c, tv, fv);
    }
    case ExprKind::Cast: {
      auto* op = e.as<Cast>();
      return cast_value(emit(op->value), op->value.dtype(), t);
    }
    case ExprKind::Call:
      return emit_call(e.as<Call>());
    case ExprKind::Load:
      return emit_load(e.as<Load>());
    case ExprKind::Ramp: {
      auto* op = e.as<Ramp>();
      Value* base = splat(emit(op->base), op->lanes);
      Value* stride = splat(emit(op->stride), op->lanes);
      std::vector<llvm::Constant*> iota;
      for (int i = 0; i < op->lanes; ++i) iota.push_back(llvm::ConstantInt::get(scalar_reg_type(t.element_of()), i));
      return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(iota)));
    }
    case ExprKind::Broadcast: {
      auto* op = e.as<Broadcast>();
      return splat(emit(op->value), op->lanes);
    }
    case ExprKind::Let: {
      auto* op = e.as<Let>();
      ScopedVar bind(this, op->var.get(), emit(op->value));
      return emit(op->body);
    }
    case ExprKind::TensorRead:
    case ExprKind::Reduce:
    case ExprKind::BufferLoad:
      break;
  }
  TESSEL_ICHECK(false) << "codegen: " << kind_name(e.kind())
                       << " must be removed by lowering before code generation (in " << func_name_
                       << "): " << to_string(e);
  return nullptr;
}

Value* CodeGen::bf16_to_f32(Value* v, int lanes) {
  Value* w = b_.CreateZExt(v, vec(b_.getInt32Ty(), lanes));
  w = b_.CreateShl(w, splat(b_.getInt32(16), lanes));
  return b_.CreateBitCast(w, vec(b_.getFloatTy(), lanes));
}

Value* CodeGen::f32_to_bf16(Value* v, int lanes) {
  // Round to nearest even; NaN keeps its sign and becomes quiet.
  auto* i32 = vec(b_.getInt32Ty(), lanes);
  auto* i16 = vec(b_.getInt16Ty(), lanes);
  Value* bits = b_.CreateBitCast(v, i32);
  Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, splat(b_.getInt32(16), lanes)), splat(b_.getInt32(1), lanes));
  Value* rounded = b_.CreateAdd(bits, b_.CreateAdd(lsb, splat(b_.getInt32(0x7fff), lanes)));
  Value* hi = b_.CreateTrunc(b_.CreateLShr(rounded, splat(b_.getInt32(16), lanes)), i16);
  Value* nan = b_.CreateOr(b_.CreateTrunc(b_.CreateLShr(bits, splat(b_.getInt32(16), lanes)), i16),
                           splat(b_.getInt16(0x40), lanes));
  return b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, hi);
}

Value* CodeGen::cast_value(Value* v, DataType from, DataType to) {
  TESSEL_ICHECK(from.lanes == to.lanes) << "cast changes lanes";
  if (from == to) return v;
  int lanes = to.lanes;
  DataType f32 = DataType::float32(lanes);
  // bfloat16 and float16 (other than to/from float32) go through float32.
  if (from.code == DataType::kBFloat) return cast_value(bf16_to_f32(v, lanes), f32, to);
  if (to.code == DataType::kBFloat) return f32_to_bf16(cast_value(v, from, f32), lanes);
  bool from_half = from.is_float() && from.bits == 16, to_half = to.is_float() && to.bits == 16;
  if (from_half && !(to.is_float() && to.bits == 32)) return cast_value(b_.CreateFPExt(v, reg_type(f32)), f32, to);
  if (to_half && !(from.is_float() && from.bits == 32))
    return b_.CreateFPTrunc(cast_value(v, from, f32), reg_type(to));  // float64 -> float16 rounds twice

  llvm::Type* dst = reg_type(to);
  if (to.is_bool()) {
    if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_bool()) {
    if (to.is_float()) return b_.CreateUIToFP(v, dst);
    return b_.CreateZExt(v, dst);
  }
  if (from.is_float() && to.is_float()) {
    return to.bits > from.bits ? b_.CreateFPExt(v, dst) : b_.CreateFPTrunc(v, dst);
  }
  if (from.is_float()) return to.is_uint() ? b_.CreateFPToUI(v, dst) : b_.CreateFPToSI(v, dst);
  if (to.is_float()) return from.is_uint() ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
  if (from.is_handle() || to.is_handle()) {
    TESSEL_ICHECK(false) << "codegen: cast between " << from << " and " << to;
  }
  return b_.CreateIntCast(v, dst, from.is_int());
}

Value* CodeGen::emit_int_div_mod(bool is_div, DataType t, Value* a, Value* b, const Expr& rhs) {
  const int64_t* c = as_const_int(rhs);
  if (c && is_power_of_two(*c)) {
    int shift = 0;
    while ((int64_t(1) << shift) != *c) ++shift;
    if (is_div) return t.is_int() ? b_.CreateAShr(a, const_int(t, shift)) : b_.CreateLShr(a, const_int(t, shift));
    return b_.CreateAnd(a, const_int(t, *c - 1));  // floor modulo by 2^k, also for negative a
  }
  if (t.is_uint()) return is_div ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
  // Floor semantics from C's truncating division: when the remainder is non-zero and its sign differs
  // from the divisor's, the quotient is one less and the modulo is r + b.
  Value* q = b_.CreateSDiv(a, b);
  Value* r = b_.CreateSRem(a, b);
  Value* zero = const_int(t, 0);
  Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  if (is_div) return b_.CreateAdd(q, b_.CreateSExt(adjust, q->getType()));
  return b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
}

Value* CodeGen::emit_binary(ExprKind k, DataType t, Value* a, Value* b, const Expr& rhs) {
  int lanes = t.lanes;
  if (t.code == DataType::kBFloat) {
    Value* fa = bf16_to_f32(a, lanes);
    Value* fb = bf16_to_f32(b, lanes);
    DataType f32 = DataType::float32(lanes);
    switch (k) {
      case ExprKind::Min:
        return b_.CreateSelect(b_.CreateFCmpOLT(fa, fb), a, b);
      case ExprKind::Max:
        return b_.CreateSelect(b_.CreateFCmpOGT(fa, fb), a, b);
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
        return emit_binary(k, f32, fa, fb, rhs);
      default:
        return f32_to_bf16(emit_binary(k, f32, fa, fb, rhs), lanes);
    }
  }
  bool fp = t.is_float();
  bool sgn = t.is_int();
  switch (k) {
    case ExprKind::Add:
      return fp ? contract(b_.CreateFAdd(a, b)) : b_.CreateAdd(a, b);
    case ExprKind::Sub:
      return fp ? contract(b_.CreateFSub(a, b)) : b_.CreateSub(a, b);
    case ExprKind::Mul:
      return fp ? contract(b_.CreateFMul(a, b)) : b_.CreateMul(a, b);
    case ExprKind::Div:
      if (fp) return b_.CreateFDiv(a, b);
      return emit_int_div_mod(true, t, a, b, rhs);
    case ExprKind::Mod:
      if (fp) {  // a - floor(a / b) * b
        Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
        return b_.CreateFSub(a, b_.CreateFMul(q, b));
      }
      return emit_int_div_mod(false, t, a, b, rhs);
    case ExprKind::Min:  // a < b ? a : b (NaN in a gives b, as in C)
      return b_.CreateSelect(fp ? b_.CreateFCmpOLT(a, b) : sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
    case ExprKind::Max:  // a > b ? a : b
      return b_.CreateSelect(fp ? b_.CreateFCmpOGT(a, b) : sgn ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
    case ExprKind::EQ:
      return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
    case ExprKind::NE:
      return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
    case ExprKind::LT:
      return fp ? b_.CreateFCmpOLT(a, b) : sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case ExprKind::LE:
      return fp ? b_.CreateFCmpOLE(a, b) : sgn ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case ExprKind::And:
      return b_.CreateAnd(a, b);
    case ExprKind::Or:
      return b_.CreateOr(a, b);
    default:
      break;
  }
  TESSEL_ICHECK(false) << "codegen: not a binary node: " << kind_name(k);
  return nullptr;
}

// ---- memory ---------------------------------------------------------------------------------------

Value* CodeGen::buffer_pointer(const BufferNode* buf) {
  auto it = bufs_.find(buf);
  TESSEL_ICHECK(it != bufs_.end()) << "codegen: buffer " << buf->name << " is neither a parameter of " << func_name_
                                   << " nor allocated around its use";
  return it->second;
}

Value* CodeGen::element_pointer(const BufferNode* buf, Value* index, DataType index_t) {
  llvm::Type* i64 = vec(b_.getInt64Ty(), index_t.lanes);
  Value* idx = b_.CreateIntCast(index, i64, !index_t.is_uint());
  return b_.CreateInBoundsGEP(mem_elem_type(buf->dtype), buffer_pointer(buf), idx);
}

llvm::Align CodeGen::access_align(const BufferNode* buf, const Expr& index_base) {
  int64_t eb = buf->dtype.bytes_per_lane();
  int64_t a = eb;
  if (is_power_of_two(buf->align_bytes))
    a = std::max(eb, std::min<int64_t>(buf->align_bytes, known_multiple(index_base) * eb));
  return llvm::Align(uint64_t(a));
}

Value* CodeGen::mask_of(const Expr& predicate, int lanes) {
  if (!predicate.defined()) return splat(b_.getTrue(), lanes);
  Value* m = emit(predicate);
  if (predicate.dtype().lanes != lanes) m = splat(m, lanes);
  return m;
}

Value* CodeGen::emit_load(const Load* op) {
  const BufferNode* buf = op->buffer.get();
  DataType t = op->dtype;
  int lanes = t.lanes;
  if (lanes == 1) {
    auto load = [&]() -> Value* {
      Value* p = element_pointer(buf, emit(op->index), op->index.dtype());
      return to_register(b_.CreateAlignedLoad(mem_type(t), p, access_align(buf, op->index)), t);
    };
    if (!op->predicate.defined()) return load();
    return emit_branches(emit(op->predicate), load, [&] { return llvm::Constant::getNullValue(reg_type(t)); });
  }
  auto* ramp = op->index.as<Ramp>();
  const int64_t* stride = ramp ? as_const_int(ramp->stride) : nullptr;
  Value* result;
  if (stride && *stride == 1) {
    Value* p = element_pointer(buf, emit(ramp->base), ramp->base.dtype());
    llvm::Align align = access_align(buf, ramp->base);
    if (!op->predicate.defined()) {
      result = b_.CreateAlignedLoad(mem_type(t), p, align);
    } else {
      result = b_.CreateMaskedLoad(mem_type(t), p, align, mask_of(op->predicate, lanes),
                                   llvm::Constant::getNullValue(mem_type(t)));
    }
  } else {
    Value* ptrs = element_pointer(buf, emit(op->index), op->index.dtype());
    result = b_.CreateMaskedGather(mem_type(t), ptrs, llvm::Align(uint64_t(buf->dtype.bytes_per_lane())),
                                   mask_of(op->predicate, lanes), llvm::Constant::getNullValue(mem_type(t)));
  }
  return to_register(result, t);
}

void CodeGen::emit_store(const Store* op) {
  const BufferNode* buf = op->buffer.get();
  DataType t = op->value.dtype();
  int lanes = t.lanes;
  if (lanes == 1) {
    auto store = [&] {
      Value* v = to_memory(emit(op->value), t);
      Value* p = element_pointer(buf, emit(op->index), op->index.dtype());
      b_.CreateAlignedStore(v, p, access_align(buf, op->index));
    };
    if (!op->predicate.defined()) return store();
    TESSEL_ICHECK(op->predicate.dtype() == DataType::boolean()) << "scalar store with a vector predicate";
    emit_branches(
        emit(op->predicate),
        [&]() -> Value* {
          store();
          return nullptr;
        },
        [&]() -> Value* { return nullptr; });
    return;
  }
  if (op->predicate.defined())
    TESSEL_ICHECK(op->predicate.dtype().is_bool() &&
                  (op->predicate.dtype().lanes == lanes || op->predicate.dtype().lanes == 1))
        << "store predicate of type " << op->predicate.dtype() << " for a " << t << " value";
  Value* v = to_memory(emit(op->value), t);
  auto* ramp = op->index.as<Ramp>();
  const int64_t* stride = ramp ? as_const_int(ramp->stride) : nullptr;
  if (stride && *stride == 1) {
    Value* p = element_pointer(buf, emit(ramp->base), ramp->base.dtype());
    llvm::Align align = access_align(buf, ramp->base);
    if (!op->predicate.defined()) {
      b_.CreateAlignedStore(v, p, align);
    } else {
      b_.CreateMaskedStore(v, p, align, mask_of(op->predicate, lanes));
    }
    return;
  }
  Value* ptrs = element_pointer(buf, emit(op->index), op->index.dtype());
  b_.CreateMaskedScatter(v, ptrs, llvm::Align(uint64_t(buf->dtype.bytes_per_lane())), mask_of(op->predicate, lanes));
}

// ---- control flow inside expressions -------------------------------------------------------------

Value* CodeGen::emit_branches(Value* cond, const std::function<Value*()>& then_fn,
                              const std::function<Value*()>& else_fn) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "if.else", fn_);
  auto* done_bb = llvm::BasicBlock::Create(ctx_, "if.end", fn_);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  Value* tv = then_fn();
  auto* then_end = b_.GetInsertBlock();
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(else_bb);
  Value* fv = else_fn();
  auto* else_end = b_.GetInsertBlock();
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(done_bb);
  if (!tv || !fv) return nullptr;
  auto* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(fv, else_end);
  return phi;
}

Value* CodeGen::emit_lane(const Expr& e, int lane) {
  LaneProjector proj(lane);
  Expr scalar = proj.mutate(e);
  std::vector<std::unique_ptr<ScopedVar>> binds;
  for (auto& [fresh, vector_var] : proj.extracts) {
    auto it = vars_.find(vector_var);
    TESSEL_ICHECK(it != vars_.end()) << "codegen: variable " << vector_var->name << " is not bound";
    binds.push_back(
        std::make_unique<ScopedVar>(this, fresh.get(), b_.CreateExtractElement(it->second, uint64_t(lane))));
  }
  return emit(scalar);
}

Value* CodeGen::emit_if_then_else(const Call* op) {
  const Expr& c = op->args[0];
  const Expr& t = op->args[1];
  const Expr& f = op->args[2];
  int lanes = op->dtype.lanes;
  if (c.dtype().is_scalar()) {
    return emit_branches(
        emit(c), [&] { return emit(t); }, [&] { return emit(f); });
  }
  if (!may_fault(t) && !may_fault(f)) return b_.CreateSelect(emit(c), emit(t), emit(f));
  // Vector condition with branches that may fault: one branch per lane on scalarized operands.
  Value* cv = emit(c);
  Value* result = llvm::PoisonValue::get(reg_type(op->dtype));
  for (int i = 0; i < lanes; ++i) {
    Value* ci = b_.CreateExtractElement(cv, uint64_t(i));
    Value* vi = emit_branches(
        ci, [&] { return emit_lane(t, i); }, [&] { return emit_lane(f, i); });
    result = b_.CreateInsertElement(result, vi, uint64_t(i));
  }
  return result;
}

Value* CodeGen::emit_prefetch(const Call* op) {
  // prefetch(Load(buf, index)[, rw, locality]): prefetches the address of the load's first element;
  // rw is 0 (read, default) or 1 (write), locality 0..3 (default 3 = keep in all cache levels).
  TESSEL_ICHECK(!op->args.empty() && op->args[0].as<Load>())
      << "codegen: prefetch takes a Load as its first argument, got " << to_string(op->args[0]);
  auto* load = op->args[0].as<Load>();
  Expr index = load->index;
  if (auto* r = index.as<Ramp>()) index = r->base;
  Value* p;
  if (index.dtype().is_scalar()) {
    p = element_pointer(load->buffer.get(), emit(index), index.dtype());
  } else {
    p = b_.CreateExtractElement(element_pointer(load->buffer.get(), emit(index), index.dtype()), uint64_t(0));
  }
  auto arg_const = [&](size_t i, int64_t dflt, int64_t lo, int64_t hi) {
    if (op->args.size() <= i) return dflt;
    const int64_t* c = as_const_int(op->args[i]);
    TESSEL_ICHECK(c && *c >= lo && *c <= hi)
        << "codegen: prefetch argument " << i << " must be a constant in [" << lo << ", " << hi << "]";
    return *c;
  };
  int64_t rw = arg_const(1, 0, 0, 1), locality = arg_const(2, 3, 0, 3);
  auto* fn = llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
  b_.CreateCall(fn, {p, b_.getInt32(uint32_t(rw)), b_.getInt32(uint32_t(locality)), b_.getInt32(1)});
  return b_.getInt32(0);
}

Value* CodeGen::call_libm(const std::string& name, Value* x, DataType t) {
  llvm::Type* st = scalar_reg_type(t.element_of());
  auto callee = mod_.getOrInsertFunction(name, llvm::FunctionType::get(st, {st}, false));
  auto call1 = [&](Value* v) {
    auto* c = b_.CreateCall(callee, {v});
    c->setDoesNotThrow();
    c->setDoesNotAccessMemory();
    return c;
  };
  if (t.is_scalar()) return call1(x);
  Value* r = llvm::PoisonValue::get(reg_type(t));
  for (int i = 0; i < t.lanes; ++i)
    r = b_.CreateInsertElement(r, call1(b_.CreateExtractElement(x, uint64_t(i))), uint64_t(i));
  return r;
}

Value* CodeGen::emit_math(Intrinsic op, std::vector<Value*> a, DataType t) {
  // t is float32 or float64 (with lanes).
  bool f32 = t.bits == 32;
  if (gpu_)
    if (Value* v = emit_gpu_math(op, a, t)) return v;
  switch (op) {
    case Intrinsic::kExp:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a[0]);
    case Intrinsic::kLog:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, a[0]);
    case Intrinsic::kSqrt:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
    case Intrinsic::kFloor:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a[0]);
    case Intrinsic::kCeil:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a[0]);
    case Intrinsic::kAbs:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
    case Intrinsic::kPow:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a[0], a[1]);
    case Intrinsic::kFma:
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]});
    case Intrinsic::kTanh:
      return call_libm(f32 ? "tanhf" : "tanh", a[0], t);
    case Intrinsic::kErf:
      return call_libm(f32 ? "erff" : "erf", a[0], t);
    case Intrinsic::kSigmoid: {  // 1 / (1 + exp(-x))
      Value* one = const_float(t, 1.0);
      Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(a[0]));
      return b_.CreateFDiv(one, b_.CreateFAdd(one, e));
    }
    default:
      break;
  }
  TESSEL_ICHECK(false) << "codegen: not a math intrinsic: " << intrinsic_name(op);
  return nullptr;
}

Value* CodeGen::emit_call(const Call* op) {
  DataType t = op->dtype;
  switch (op->op) {
    case Intrinsic::kIfThenElse:
      return emit_if_then_else(op);
    case Intrinsic::kPrefetch:
      if (gpu_) return b_.getInt32(0);
      return emit_prefetch(op);
    case Intrinsic::kSyncThreads:
      if (gpu_) b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::nvvm_barrier0));
      return b_.getInt32(0);  // a CPU runs the threads of a block one after another: nothing to wait for
    case Intrinsic::kAbs:
      if (t.is_int()) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, emit(op->args[0]), b_.getFalse());
      if (!t.is_float()) return emit(op->args[0]);  // unsigned and bool
      break;
    default:
      break;
  }
  TESSEL_ICHECK(t.is_float()) << "codegen: " << intrinsic_name(op->op) << " of " << t;
  std::vector<Value*> args;
  for (auto& a : op->args) {
    Value* v = emit(a);
    if (a.dtype().lanes != t.lanes) v = splat(v, t.lanes);
    args.push_back(v);
  }
  if (t.bits == 32 || t.bits == 64) {
    if (t.code == DataType::kFloat) return emit_math(op->op, args, t);
  }
  // float16 and bfloat16: compute in float32, round back.
  DataType f32 = DataType::float32(t.lanes);
  for (auto& v : args) v = cast_value(v, t, f32);
  return cast_value(emit_math(op->op, args, f32), f32, t);
}

// =================================================================================================
// Statements
// =================================================================================================

void CodeGen::emit(const Stmt& s) {
  TESSEL_ICHECK(s.defined()) << "codegen: undefined statement";
  switch (s.kind()) {
    case StmtKind::For: {
      auto* op = s.as<For>();
      if (gpu_ && is_gpu_bound(op->for_kind)) return emit_gpu_bound_for(op);
      TESSEL_CHECK(!(gpu_ && op->for_kind == ForKind::kParallel))
          << "codegen: parallel loop " << op->var.name() << " in a GPU kernel; bind it to blockIdx/threadIdx";
      if (op->for_kind == ForKind::kParallel && !in_parallel_) return emit_parallel_for(op);
      return emit_for(op);  // a loop bound to a GPU index runs as a serial loop on a CPU
    }
    case StmtKind::Store:
      return emit_store(s.as<Store>());
    case StmtKind::Allocate:
      return emit_allocate(s.as<Allocate>());
    case StmtKind::Seq:
      for (auto& x : s.as<Seq>()->seq) emit(x);
      return;
    case StmtKind::IfThenElse: {
      auto* op = s.as<IfThenElse>();
      TESSEL_ICHECK(op->cond.dtype() == DataType::boolean()) << "IfThenElse condition of type " << op->cond.dtype();
      emit_branches(
          emit(op->cond),
          [&]() -> Value* {
            emit(op->then_case);
            return nullptr;
          },
          [&]() -> Value* {
            if (op->else_case.defined()) emit(op->else_case);
            return nullptr;
          });
      return;
    }
    case StmtKind::Evaluate:
      emit(s.as<Evaluate>()->value);
      return;
    case StmtKind::LetStmt: {
      auto* op = s.as<LetStmt>();
      ScopedVar bind(this, op->var.get(), emit(op->value));
      emit(op->body);
      return;
    }
    case StmtKind::AttrStmt:
      emit(s.as<AttrStmt>()->body);
      return;
    case StmtKind::BufferStore:
      break;
  }
  TESSEL_ICHECK(false) << "codegen: " << kind_name(s.kind()) << " must be removed by lowering (in " << func_name_
                       << ")";
}

void CodeGen::emit_loop(Value* begin, Value* end, const std::function<void(Value*)>& body, ForKind kind) {
  auto* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "for.header", fn_);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, "for.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for.end", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  auto* phi = b_.CreatePHI(begin->getType(), 2, "i");
  phi->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(phi, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  body(phi);
  Value* next = b_.CreateAdd(phi, llvm::ConstantInt::get(begin->getType(), 1), "i.next", false, true);
  auto* latch = b_.CreateBr(header);
  phi->addIncoming(next, b_.GetInsertBlock());
  if (kind == ForKind::kUnrolled) {  // ask LLVM to unroll it fully
    llvm::SmallVector<llvm::Metadata*, 2> ops{
        nullptr, llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")})};
    auto* id = llvm::MDNode::getDistinct(ctx_, ops);
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b_.SetInsertPoint(exit);
}

void CodeGen::emit_for(const For* op) {
  Value* mn = emit(op->min);
  Value* end = b_.CreateAdd(mn, emit(op->extent));
  emit_loop(
      mn, end,
      [&](Value* i) {
        i->setName(op->var.name());
        ScopedVar bind(this, op->var.get(), i);
        emit(op->body);
      },
      op->for_kind);
}

void CodeGen::emit_parallel_for(const For* op) {
  // Free variables and buffers of the body, deduplicated by their LLVM value.
  UseCollector uses;
  uses.visit(op->body);
  std::vector<Value*> captured;
  std::unordered_map<Value*, size_t> slot;
  std::unordered_map<Value*, int64_t> align;
  auto capture = [&](Value* v, int64_t a) {
    auto [it, fresh] = slot.emplace(v, captured.size());
    if (fresh) captured.push_back(v);
    if (a > 0) align[v] = align.count(v) ? std::min(align[v], a) : a;
  };
  for (auto* v : uses.vars) {
    if (v == op->var.get()) continue;
    if (auto it = vars_.find(v); it != vars_.end()) capture(it->second, 0);
  }
  for (auto* b : uses.buffers) {
    if (auto it = bufs_.find(b); it != bufs_.end())
      capture(it->second, is_power_of_two(b->align_bytes) ? b->align_bytes : b->dtype.bytes_per_lane());
  }
  Value* mn = emit(op->min);
  Value* extent = b_.CreateIntCast(emit(op->extent), b_.getInt64Ty(), true);

  // The body function: body(task_begin, task_end, min, captured...) with noalias pointer parameters.
  int id = num_parallel_++;
  std::vector<llvm::Type*> ptypes{b_.getInt64Ty(), b_.getInt64Ty(), mn->getType()};
  for (Value* v : captured) ptypes.push_back(v->getType());
  auto* body_fn =
      llvm::Function::Create(llvm::FunctionType::get(b_.getInt32Ty(), ptypes, false), llvm::Function::InternalLinkage,
                             func_name_ + ".parallel" + std::to_string(id) + ".body", mod_);
  set_function_attrs(body_fn);
  body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < captured.size(); ++i) {
    auto* arg = body_fn->getArg(unsigned(3 + i));
    arg->setName(captured[i]->getName());
    if (arg->getType()->isPointerTy() && align.count(captured[i])) {
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttrs(llvm::AttrBuilder(ctx_).addAlignmentAttr(llvm::Align(uint64_t(align[captured[i]]))));
    }
  }
  {
    // Swap in a fresh emission state for the outlined function.
    auto saved_vars = vars_;
    auto saved_bufs = bufs_;
    auto* saved_fn = fn_;
    auto saved_ip = b_.saveIP();
    std::unordered_map<Value*, Value*> remap;
    for (size_t i = 0; i < captured.size(); ++i) remap[captured[i]] = body_fn->getArg(unsigned(3 + i));
    for (auto& [k, v] : vars_) v = remap.count(v) ? remap[v] : nullptr;
    for (auto& [k, v] : bufs_) v = remap.count(v) ? remap[v] : nullptr;
    std::erase_if(vars_, [](auto& kv) { return kv.second == nullptr; });
    std::erase_if(bufs_, [](auto& kv) { return kv.second == nullptr; });
    fn_ = body_fn;
    in_parallel_ = true;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
    Value* inner_min = body_fn->getArg(2);
    emit_loop(
        body_fn->getArg(0), body_fn->getArg(1),
        [&](Value* i) {
          // min + i stays within the loop's range, so it cannot overflow (nsw helps SCEV drop overflow checks).
          Value* v = b_.CreateNSWAdd(inner_min, b_.CreateIntCast(i, inner_min->getType(), true), op->var.name());
          ScopedVar bind(this, op->var.get(), v);
          emit(op->body);
        },
        ForKind::kSerial);
    b_.CreateRet(b_.getInt32(0));
    in_parallel_ = false;
    fn_ = saved_fn;
    b_.restoreIP(saved_ip);
    vars_ = std::move(saved_vars);
    bufs_ = std::move(saved_bufs);
  }

  // The task wrapper: task(task_begin, task_end, closure) unpacks the closure and calls the body.
  std::vector<llvm::Type*> fields{mn->getType()};
  for (Value* v : captured) fields.push_back(v->getType());
  auto* closure_ty = llvm::StructType::get(ctx_, fields);
  auto* task_fn = llvm::Function::Create(
      llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false),
      llvm::Function::InternalLinkage, func_name_ + ".parallel" + std::to_string(id), mod_);
  set_function_attrs(task_fn);
  {
    auto saved_ip = b_.saveIP();
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", task_fn));
    std::vector<Value*> args{task_fn->getArg(0), task_fn->getArg(1)};
    for (unsigned i = 0; i < fields.size(); ++i)
      args.push_back(b_.CreateLoad(fields[i], b_.CreateStructGEP(closure_ty, task_fn->getArg(2), i)));
    b_.CreateRet(b_.CreateCall(body_fn, args));
    b_.restoreIP(saved_ip);
  }

  // The call site: fill the closure, run the loop on the pool.
  auto* closure = entry_alloca(closure_ty, llvm::Align(8), "closure");
  b_.CreateStore(mn, b_.CreateStructGEP(closure_ty, closure, 0));
  for (unsigned i = 0; i < captured.size(); ++i)
    b_.CreateStore(captured[i], b_.CreateStructGEP(closure_ty, closure, i + 1));
  b_.CreateCall(runtime_fn("tessel_parallel_for"), {b_.getInt64(0), extent, task_fn, closure});
}

void CodeGen::emit_allocate(const Allocate* op) {
  if (gpu_) return emit_gpu_allocate(op);
  const Buffer& buf = op->buffer;
  TESSEL_ICHECK(buf) << "Allocate of a null buffer";
  int64_t eb = buf->dtype.bytes_per_lane() * buf->dtype.lanes;
  int64_t align = std::max<int64_t>(is_power_of_two(buf->align_bytes) ? buf->align_bytes : 1, eb);
  bool constant = true;
  int64_t n = 1;
  for (auto& s : buf->shape) {
    const int64_t* c = as_const_int(s);
    if (!c)
      constant = false;
    else
      n *= *c;
  }
  Value* ptr;
  bool heap = !constant || n * eb > kMaxStackAllocBytes;
  if (!heap) {
    ptr = entry_alloca(llvm::ArrayType::get(mem_elem_type(buf->dtype), uint64_t(n * buf->dtype.lanes)),
                       llvm::Align(uint64_t(align)), buf->name);
  } else {
    Value* bytes = b_.getInt64(uint64_t(n * eb));
    if (!constant) {
      bytes = b_.getInt64(uint64_t(eb));
      for (auto& s : buf->shape) bytes = b_.CreateMul(bytes, b_.CreateIntCast(emit(s), b_.getInt64Ty(), true));
    }
    auto* call = b_.CreateCall(runtime_fn("tessel_alloc_aligned"), {b_.getInt64(uint64_t(align)), bytes}, buf->name);
    call->addRetAttr(llvm::Attribute::NoAlias);
    ptr = call;
  }
  bufs_[buf.get()] = ptr;
  ScopedVar bind(this, buf->data.get(), ptr);
  emit(op->body);
  bufs_.erase(buf.get());
  if (heap) b_.CreateCall(runtime_fn("tessel_free_aligned"), {ptr});
}

// =================================================================================================
// GPU (NVPTX)
// =================================================================================================

void CodeGen::emit_kernel(const LoweredFunc& f) {
  TESSEL_ICHECK(gpu_) << "emit_kernel without GPU options";
  TESSEL_CHECK(!f.name.empty()) << "codegen: function needs a name";
  TESSEL_ICHECK(f.body.defined()) << "codegen: function " << f.name << " has no body";
  func_name_ = f.name;
  llvm::Type* gptr = llvm::PointerType::get(ctx_, 1);
  std::vector<llvm::Type*> params(f.params.size(), gptr);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                    llvm::Function::ExternalLinkage, f.name, mod_);
  set_function_attrs(fn);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const auto& buf = f.params[i];
    auto* arg = fn->getArg(unsigned(i));
    arg->setName(buf->name);
    arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::NoUndef);
    // cudaMalloc gives 256-byte aligned pointers; promise what the buffer declares, at most 16 bytes.
    int64_t a = is_power_of_two(buf->align_bytes) ? std::min<int64_t>(buf->align_bytes, 16) : 1;
    arg->addAttrs(llvm::AttrBuilder(ctx_).addAlignmentAttr(llvm::Align(uint64_t(a))));
    bufs_[buf.get()] = arg;
    vars_[buf->data.get()] = arg;
  }
  fn_ = fn;
  // nvvm.annotations: the kernel flag and the block shape (lets ptxas budget registers).
  auto* md = mod_.getOrInsertNamedMetadata("nvvm.annotations");
  auto annot = [&](const char* key, int64_t v) {
    md->addOperand(llvm::MDNode::get(ctx_, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx_, key),
                                            llvm::ConstantAsMetadata::get(b_.getInt32(uint32_t(v)))}));
  };
  annot("kernel", 1);
  annot("maxntidx", gpu_->launch.block[0]);
  annot("maxntidy", gpu_->launch.block[1]);
  annot("maxntidz", gpu_->launch.block[2]);
  if (gpu_->launch.min_blocks_per_sm > 0) annot("minctasm", gpu_->launch.min_blocks_per_sm);
  if (gpu_->dynamic_shared) {
    dyn_shared_ = new llvm::GlobalVariable(mod_, llvm::ArrayType::get(b_.getInt8Ty(), 0), false,
                                           llvm::GlobalValue::ExternalLinkage, nullptr, "__tessel_dynamic_shared",
                                           nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    dyn_shared_->setAlignment(llvm::Align(16));
  }
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  emit(f.body);
  b_.CreateRetVoid();
  bufs_.clear();
  vars_.clear();
}

void CodeGen::emit_gpu_bound_for(const For* op) {
  int d = gpu_dim(op->for_kind);
  static const llvm::Intrinsic::ID kTid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
  static const llvm::Intrinsic::ID kCtaid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  bool block = is_block_bound(op->for_kind);
  Value* idx = b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, block ? kCtaid[d] : kTid[d]));
  idx = b_.CreateIntCast(idx, reg_type(op->var.dtype()), false, op->var.name());
  Value* v = b_.CreateAdd(emit(op->min), idx);
  const int64_t* ext = as_const_int(op->extent);
  int64_t launch = block ? gpu_->launch.grid[d] : gpu_->launch.block[d];
  TESSEL_ICHECK(ext && *ext <= launch) << "codegen: loop " << op->var.name() << " bound to "
                                       << for_kind_name(op->for_kind) << " is longer than the launch";
  ScopedVar bind(this, op->var.get(), v);
  if (*ext == launch) return emit(op->body);
  emit_branches(
      b_.CreateICmpSLT(idx, const_int(op->var.dtype(), *ext)),
      [&]() -> Value* {
        emit(op->body);
        return nullptr;
      },
      [&]() -> Value* { return nullptr; });
}

void CodeGen::emit_gpu_allocate(const Allocate* op) {
  const Buffer& buf = op->buffer;
  int64_t eb = buf->dtype.bytes_per_lane() * buf->dtype.lanes;
  int64_t n = 1;
  for (auto& s : buf->shape) {
    const int64_t* c = as_const_int(s);
    TESSEL_CHECK(c) << "codegen: GPU buffer " << buf->name << " needs a constant shape";
    n *= *c;
  }
  int64_t align = std::max<int64_t>(16, eb);
  llvm::Type* arr = llvm::ArrayType::get(mem_elem_type(buf->dtype), uint64_t(n * buf->dtype.lanes));
  Value* ptr = nullptr;
  switch (buf->scope) {
    case MemScope::kShared:
      if (dyn_shared_) {
        dyn_shared_offset_ = (dyn_shared_offset_ + align - 1) / align * align;
        ptr = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), dyn_shared_, uint64_t(dyn_shared_offset_), buf->name);
        dyn_shared_offset_ += n * eb;
      } else {
        auto* g = new llvm::GlobalVariable(mod_, arr, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::UndefValue::get(arr), buf->name, nullptr,
                                           llvm::GlobalValue::NotThreadLocal, 3);
        g->setAlignment(llvm::Align(uint64_t(align)));
        ptr = g;
      }
      break;
    case MemScope::kLocal:
      TESSEL_CHECK(n * eb <= kMaxStackAllocBytes) << "codegen: local buffer " << buf->name << " of " << n * eb
                                                  << " bytes per thread is too large for a GPU thread";
      ptr = entry_alloca(arr, llvm::Align(uint64_t(align)), buf->name);
      break;
    case MemScope::kGlobal:
      TESSEL_CHECK(false) << "codegen: stage " << buf->name
                          << " needs global memory inside a GPU kernel; compute_at it (local/shared) or inline it";
  }
  bufs_[buf.get()] = ptr;
  ScopedVar bind(this, buf->data.get(), ptr);
  emit(op->body);
  bufs_.erase(buf.get());
}

Value* CodeGen::nvvm_unary(llvm::Intrinsic::ID id, Value* x, DataType t) {
  auto* fn = llvm::Intrinsic::getDeclaration(&mod_, id);
  if (t.is_scalar()) return b_.CreateCall(fn, {x});
  Value* r = llvm::PoisonValue::get(reg_type(t));
  for (int i = 0; i < t.lanes; ++i)
    r = b_.CreateInsertElement(r, b_.CreateCall(fn, {b_.CreateExtractElement(x, uint64_t(i))}), uint64_t(i));
  return r;
}

// NVPTX has no libm: transcendental functions go through the SFU's ex2/lg2 (float32 only). Returns null
// for operations the common path handles (sqrt, floor, ceil, abs, fma lower to PTX instructions).
Value* CodeGen::emit_gpu_math(Intrinsic op, const std::vector<Value*>& a, DataType t) {
  bool transcendental = op == Intrinsic::kExp || op == Intrinsic::kLog || op == Intrinsic::kPow ||
                        op == Intrinsic::kTanh || op == Intrinsic::kErf || op == Intrinsic::kSigmoid;
  if (!transcendental) return nullptr;
  TESSEL_CHECK(t.bits == 32) << "codegen: " << intrinsic_name(op) << " of " << t
                             << " is not supported on CUDA yet (float32 only)";
  auto c = [&](double v) { return const_float(t, v); };
  auto exp2 = [&](Value* x) { return nvvm_unary(llvm::Intrinsic::nvvm_ex2_approx_f, x, t); };
  auto log2 = [&](Value* x) { return nvvm_unary(llvm::Intrinsic::nvvm_lg2_approx_f, x, t); };
  auto exp = [&](Value* x) { return exp2(b_.CreateFMul(x, c(1.4426950408889634))); };
  switch (op) {
    case Intrinsic::kExp:
      return exp(a[0]);
    case Intrinsic::kLog:
      return b_.CreateFMul(log2(a[0]), c(0.6931471805599453));
    case Intrinsic::kPow:  // x^y = 2^(y log2 x), for x > 0
      return exp2(b_.CreateFMul(a[1], log2(a[0])));
    case Intrinsic::kTanh:  // 1 - 2 / (exp(2x) + 1): saturates to +-1
      return b_.CreateFSub(c(1.0), b_.CreateFDiv(c(2.0), b_.CreateFAdd(exp(b_.CreateFMul(a[0], c(2.0))), c(1.0))));
    case Intrinsic::kSigmoid:
      return b_.CreateFDiv(c(1.0), b_.CreateFAdd(c(1.0), exp(b_.CreateFNeg(a[0]))));
    case Intrinsic::kErf: {  // Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)
      Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
      Value* tt = b_.CreateFDiv(c(1.0), b_.CreateFAdd(c(1.0), b_.CreateFMul(c(0.3275911), ax)));
      Value* poly = c(1.061405429);
      for (double k : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
        poly = b_.CreateFAdd(b_.CreateFMul(poly, tt), c(k));
      poly = b_.CreateFMul(poly, tt);
      Value* y = b_.CreateFSub(c(1.0), b_.CreateFMul(poly, exp(b_.CreateFNeg(b_.CreateFMul(ax, ax)))));
      return b_.CreateIntrinsic(llvm::Intrinsic::copysign, {y->getType()}, {y, a[0]});
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::unique_ptr<llvm::Module> emit_module(const LoweredFunc& f, llvm::LLVMContext& ctx, llvm::TargetMachine& tm,
                                          const GpuEmitOptions* gpu) {
  auto m = std::make_unique<llvm::Module>(f.name, ctx);
  m->setTargetTriple(tm.getTargetTriple().str());
  m->setDataLayout(tm.createDataLayout());
  CodeGen cg(ctx, *m, tm, gpu);
  if (gpu)
    cg.emit_kernel(f);
  else
    cg.emit_function(f);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*m, &os)) {
    os.flush();
    TESSEL_ICHECK(false) << "LLVM verifier rejected the code generated for " << f.name << ":\n" << err;
  }
  return m;
}

std::string module_to_string(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  os.flush();
  return s;
}

}  // namespace tessel::codegen::detail
