// Data-movement operators: transpose (any permutation of any rank) and pad (constant, edge, reflect),
// for float32 or int8 tensors.
#pragma once
#include <string>
#include <vector>

#include "tessel/ops/registry.h"

namespace tessel::ops {

/** Out[..., shape[perm[d]], ...] with Out[v] = In[u], u[perm[d]] = v[d] (numpy.transpose semantics).
 *  Returns {{In}, {Out}}. */
OpTensors transpose(const std::vector<int>& shape, const std::vector<int>& perm,
                    ir::DataType dtype = ir::DataType::float32());

/** What the elements added by pad hold. */
enum class PadMode { kConstant, kEdge, kReflect };
/** Parses constant|edge|reflect (UserError listing them otherwise). */
PadMode parse_pad_mode(const std::string& s);

/** Out has extent before[d] + shape[d] + after[d] along axis d. constant: `value` outside In; edge: the
 *  nearest element of In; reflect: mirrored without repeating the edge (numpy "reflect"; needs
 *  before, after < shape). Returns {{In}, {Out}}. */
OpTensors pad(const std::vector<int>& shape, const std::vector<int>& before, const std::vector<int>& after,
              PadMode mode, double value = 0, ir::DataType dtype = ir::DataType::float32());

}  // namespace tessel::ops
