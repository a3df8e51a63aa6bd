// Pass: multi-dimensional BufferLoad/BufferStore become flat Load/Store. Allocated buffers become 1-D
// (size from shape and storage_align padding); parameter buffers keep their shapes (row-major).
#pragma once
#include "tessel/ir/stmt.h"

namespace tessel::lower {

ir::Stmt storage_flatten(const ir::Stmt& s);

}  // namespace tessel::lower
