// Activation functions fused after a linear operator (dense, conv2d, depthwise conv2d).
#pragma once
#include <string>

#include "tessel/ir/op.h"

namespace tessel::ops {

/** The function applied after the bias. */
enum class Activation { kNone, kRelu, kGelu };
/** Parses none|relu|gelu (UserError listing them otherwise). */
Activation parse_activation(const std::string& s);
/** act(x): relu = max(x, 0), gelu = 0.5 x (1 + erf(x / sqrt(2))) (the exact form, not the tanh one; floats
 *  only: a UserError for integer x). */
ir::Expr apply_activation(Activation act, const ir::Expr& x);

}  // namespace tessel::ops
