// Registration functions of the built-in operator files (private to src/ops).
#pragma once

namespace tessel::ops {

/** Registers every built-in operator; called once by the registry on first use. */
void register_builtin_ops();

// One per operator file; each calls register_op() for the operators that file defines.
void register_matmul_ops();
void register_conv2d_ops();
void register_matmul_general_ops();
void register_conv_general_ops();
void register_nn_ops();
void register_elementwise_ops();
void register_reduce_ops();
void register_transform_ops();

}  // namespace tessel::ops
