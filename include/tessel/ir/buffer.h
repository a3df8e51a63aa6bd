// A buffer: a named region of memory holding elements of one dtype, with a shape, optional strides
// (empty = compact row-major) and a storage scope. Function arguments, intermediate tensors and
// local tiles are all buffers. `data` is the handle variable the code generator binds to its pointer.
#pragma once
#include <string>
#include <vector>

#include "tessel/ir/expr.h"

namespace tessel::ir {

/** Where a buffer lives: global memory (arguments, compute_root), a thread's local tile (registers or
 *  stack), or GPU shared memory. */
enum class MemScope : uint8_t { kGlobal, kLocal, kShared };
const char* scope_name(MemScope s);

struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  std::vector<Expr> strides;  // empty = compact row-major
  Var data;
  MemScope scope = MemScope::kGlobal;
  int align_bytes = 64;  // guaranteed alignment of the base pointer
  auto fields() const { return std::tie(name, dtype, shape, strides, scope, align_bytes); }
};

/** Creates a buffer; checks the shape is non-empty-valued (extents > 0 when constant). */
Buffer make_buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::vector<Expr> strides = {},
                   MemScope scope = MemScope::kGlobal, int align_bytes = 64);

/** Number of elements (product of the shape), as an expression. */
Expr buffer_num_elements(const BufferNode& b);

}  // namespace tessel::ir
