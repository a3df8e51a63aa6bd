// Construction of statement nodes and buffers, with input checks.
#include "tessel/ir/stmt.h"

#include "tessel/ir/op.h"
#include "tessel/support/error.h"

namespace tessel::ir {

const char* kind_name(StmtKind k) {
  switch (k) {
#define TESSEL_X(n, T) \
  case StmtKind::n: return #n;
    TESSEL_STMT_NODES(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

const char* scope_name(MemScope s) {
  switch (s) {
    case MemScope::kGlobal: return "global";
    case MemScope::kLocal: return "local";
    case MemScope::kShared: return "shared";
  }
  return "?";
}

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "for";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kBlockIdxX: return "blockIdx.x";
    case ForKind::kBlockIdxY: return "blockIdx.y";
    case ForKind::kBlockIdxZ: return "blockIdx.z";
    case ForKind::kThreadIdxX: return "threadIdx.x";
    case ForKind::kThreadIdxY: return "threadIdx.y";
    case ForKind::kThreadIdxZ: return "threadIdx.z";
  }
  return "?";
}

bool for_kind_of_thread_tag(const std::string& tag, ForKind* out) {
  for (ForKind k : {ForKind::kBlockIdxX, ForKind::kBlockIdxY, ForKind::kBlockIdxZ, ForKind::kThreadIdxX,
                    ForKind::kThreadIdxY, ForKind::kThreadIdxZ})
    if (tag == for_kind_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

Buffer make_buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::vector<Expr> strides,
                   MemScope scope, int align_bytes) {
  TESSEL_CHECK(!name.empty()) << "buffer needs a name";
  for (size_t i = 0; i < shape.size(); ++i) {
    TESSEL_CHECK(shape[i].defined() && shape[i].dtype().is_integer())
        << "buffer " << name << ", dimension " << i << ": extent must be an integer";
    if (auto* c = as_const_int(shape[i]))
      TESSEL_CHECK(*c > 0) << "buffer " << name << ", dimension " << i << ": extent " << *c << " must be > 0";
  }
  TESSEL_CHECK(strides.empty() || strides.size() == shape.size())
      << "buffer " << name << ": " << strides.size() << " strides for rank " << shape.size();
  auto b = std::make_shared<BufferNode>();
  b->name = name;
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->strides = std::move(strides);
  b->data = Var(name, DataType::handle());
  b->scope = scope;
  b->align_bytes = align_bytes;
  return b;
}

Expr buffer_num_elements(const BufferNode& b) {
  Expr n = IntImm::make(b.shape.empty() ? DataType::int64() : b.shape[0].dtype(), 1);
  for (auto& s : b.shape) n = n * s;
  return n;
}

Stmt For::make(Var var, Expr min, Expr extent, ForKind kind, Stmt body) {
  TESSEL_ICHECK(var.defined() && min.defined() && extent.defined() && body.defined()) << "For with undefined field";
  TESSEL_ICHECK(min.dtype() == var.dtype() && extent.dtype() == var.dtype())
      << "For " << var.name() << ": min/extent/var types differ";
  return Stmt(std::make_shared<For>(std::move(var), std::move(min), std::move(extent), kind, std::move(body)));
}

Stmt BufferStore::make(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TESSEL_ICHECK(buffer && value.defined()) << "BufferStore with undefined field";
  TESSEL_ICHECK(indices.size() == buffer->shape.size()) << "BufferStore to " << buffer->name << ": rank mismatch";
  TESSEL_ICHECK(value.dtype().element_of() == buffer->dtype)
      << "BufferStore of " << value.dtype() << " into " << buffer->dtype << " buffer " << buffer->name;
  return Stmt(std::make_shared<BufferStore>(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt Store::make(Buffer buffer, Expr value, Expr index, Expr predicate) {
  TESSEL_ICHECK(buffer && value.defined() && index.defined()) << "Store with undefined field";
  TESSEL_ICHECK(value.dtype() == buffer->dtype.with_lanes(index.dtype().lanes))
      << "Store of " << value.dtype() << " at " << index.dtype() << " index into " << buffer->dtype << " buffer "
      << buffer->name;
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(value), std::move(index), std::move(predicate)));
}

Stmt Allocate::make(Buffer buffer, Stmt body) {
  TESSEL_ICHECK(buffer && body.defined()) << "Allocate with undefined field";
  return Stmt(std::make_shared<Allocate>(std::move(buffer), std::move(body)));
}

Stmt Seq::make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (auto& s : seq) {
    if (!s.defined()) continue;
    if (auto* q = s.as<Seq>()) {
      flat.insert(flat.end(), q->seq.begin(), q->seq.end());
    } else {
      flat.push_back(s);
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<Seq>(std::move(flat)));
}

Stmt IfThenElse::make(Expr cond, Stmt then_case, Stmt else_case) {
  TESSEL_ICHECK(cond.defined() && then_case.defined()) << "IfThenElse with undefined field";
  TESSEL_ICHECK(cond.dtype() == DataType::boolean()) << "IfThenElse condition must be scalar bool";
  return Stmt(std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt Evaluate::make(Expr value) {
  TESSEL_ICHECK(value.defined()) << "Evaluate of undefined";
  return Stmt(std::make_shared<Evaluate>(std::move(value)));
}

Stmt LetStmt::make(Var var, Expr value, Stmt body) {
  TESSEL_ICHECK(var.defined() && value.defined() && body.defined()) << "LetStmt with undefined field";
  TESSEL_ICHECK(var.dtype() == value.dtype()) << "LetStmt " << var.name() << ": type mismatch";
  return Stmt(std::make_shared<LetStmt>(std::move(var), std::move(value), std::move(body)));
}

Stmt AttrStmt::make(std::string key, Expr value, Stmt body) {
  TESSEL_ICHECK(value.defined() && body.defined()) << "AttrStmt with undefined field";
  return Stmt(std::make_shared<AttrStmt>(std::move(key), std::move(value), std::move(body)));
}

}  // namespace tessel::ir
