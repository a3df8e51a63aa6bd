// Activation functions (none, relu, gelu) shared by dense and the convolutions.
#include "tessel/ops/activation.h"

#include <cmath>

#include "tessel/support/error.h"

namespace tessel::ops {

Activation parse_activation(const std::string& s) {
  if (s == "none") return Activation::kNone;
  if (s == "relu") return Activation::kRelu;
  if (s == "gelu") return Activation::kGelu;
  TESSEL_CHECK(false) << "unknown activation '" << s << "' (expected none, relu or gelu)";
  return Activation::kNone;
}

ir::Expr apply_activation(Activation act, const ir::Expr& x) {
  switch (act) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return ir::max(x, ir::make_zero(x.dtype()));
    case Activation::kGelu:
      TESSEL_CHECK(x.dtype().is_float()) << "activation gelu needs a floating-point input, got "
                                         << x.dtype().to_string() << " (use relu or none with int8)";
      return x * 0.5f * (ir::erf(x * float(1.0 / std::sqrt(2.0))) + 1.0f);
  }
  return x;
}

}  // namespace tessel::ops
