// The list of built-in operator files: a new operator file adds one line here.
#include "builtin_ops.h"

namespace tessel::ops {

void register_builtin_ops() {
  register_matmul_ops();
  register_conv2d_ops();
  register_matmul_general_ops();
  register_conv_general_ops();
  register_nn_ops();
  register_elementwise_ops();
  register_reduce_ops();
  register_transform_ops();
}

}  // namespace tessel::ops
