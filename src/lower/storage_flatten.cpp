// storage_flatten: multi-dimensional buffer accesses -> flat Load/Store with row-major (or
// storage_align-padded) strides. Allocated buffers become 1-D; parameters keep their shapes.
#include "tessel/lower/storage_flatten.h"

#include <unordered_map>

#include "tessel/ir/functor.h"
#include "tessel/ir/op.h"
#include "tessel/ir/simplify.h"

namespace tessel::lower {

using namespace ir;

namespace {

std::vector<Expr> strides_of(const BufferNode& b) {
  if (!b.strides.empty()) return b.strides;
  std::vector<Expr> st(b.shape.size());
  Expr acc = Expr(1);
  for (int d = int(b.shape.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc = acc * b.shape[d];
  }
  return st;
}

class Flattener : public IRMutator {
 public:
  using IRMutator::mutate;

 protected:
  const Buffer& flat(const Buffer& b) {
    auto it = flat_.find(b.get());
    return it == flat_.end() ? b : it->second;
  }
  Expr flat_index(const BufferNode& b, const std::vector<Expr>& idx) {
    if (idx.empty()) return Expr(0);
    std::vector<Expr> st = strides_of(b);
    Expr e;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr term = idx[d] * st[d];
      e = e.defined() ? e + term : term;
    }
    return e;
  }

  Stmt mutate_(const Allocate* op, const Stmt& s) override {
    const BufferNode& b = *op->buffer;
    Expr size = b.strides.empty() ? buffer_num_elements(b) : b.shape[0] * b.strides[0];
    Buffer nb = make_buffer(b.name, b.dtype, {simplify(size)}, {}, b.scope, b.align_bytes);
    flat_[op->buffer.get()] = nb;
    Stmt body = mutate(op->body);
    return Allocate::make(nb, body);
  }
  Expr mutate_(const BufferLoad* op, const Expr& e) override {
    std::vector<Expr> idx;
    mutate_all(op->indices, &idx);
    return Load::make(flat(op->buffer), flat_index(*op->buffer, idx));
  }
  Stmt mutate_(const BufferStore* op, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_all(op->indices, &idx);
    Expr v = mutate(op->value);
    return Store::make(flat(op->buffer), v, flat_index(*op->buffer, idx));
  }

 private:
  std::unordered_map<const BufferNode*, Buffer> flat_;
};

}  // namespace

Stmt storage_flatten(const Stmt& s) { return Flattener().mutate(s); }

}  // namespace tessel::lower
