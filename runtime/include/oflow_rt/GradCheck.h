//===- GradCheck.h - central differences against the program's gradients -===//
#ifndef OFLOW_RT_GRADCHECK_H
#define OFLOW_RT_GRADCHECK_H

#include "oflow_rt/Program.h"

#include <functional>

namespace oflow_rt {

struct GradCheckOptions {
  /// Relative error above which a tensor fails (when the check can resolve
  /// errors that small).
  double tolerance = 1e-2;
  /// Difference quotients per tensor (steps 1e-1 of the tensor's norm, then
  /// 4x smaller each); each costs two calls of the gradient entry.
  int levels = 6;
  /// Tensors printed, worst first.
  int show = 10;
  uint64_t seed = 0;
};

/// Checks every trained tensor's gradient from the program's "grads" entry
/// against central differences of its loss along one random direction;
/// `prepareCall` fills the inputs and scalars before each call. Prints the
/// worst tensors and the smallest error the check resolves; returns the
/// exit status (1 when a tensor fails). The state is left as it was.
int checkGradients(Program &p, const GradCheckOptions &o,
                   const std::function<void()> &prepareCall);

} // namespace oflow_rt

#endif
