//===- LRSchedule.cpp - learning-rate schedules in the program ------------===//
//
// All in f64, as torch's schedulers compute in Python floats; the caller
// rounds the result where torch hands it to a tensor op. oflow has no cos
// op, so cos(pi * s / T) is evaluated from the integer step: s is reduced
// exactly (integer arithmetic) into [0, T], so the angle lies in [0, pi],
// where a degree-32 Taylor polynomial is accurate to 3e-20.
//
//===----------------------------------------------------------------------===//
#include "LRSchedule.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace oflow {

std::optional<ScheduleKind> parseScheduleKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ScheduleKind>>(name)
      .Case("constant", ScheduleKind::constant)
      .Case("linear-warmup", ScheduleKind::linearWarmup)
      .Case("cosine", ScheduleKind::cosine)
      .Case("warmup-cosine", ScheduleKind::warmupCosine)
      .Default(std::nullopt);
}

StringRef stringifyScheduleKind(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::constant:
    return "constant";
  case ScheduleKind::linearWarmup:
    return "linear-warmup";
  case ScheduleKind::cosine:
    return "cosine";
  case ScheduleKind::warmupCosine:
    return "warmup-cosine";
  }
  llvm_unreachable("unknown schedule");
}

std::string checkSchedule(const ScheduleConfig &c) {
  if (c.warmupSteps < 0 || c.totalSteps < 0)
    return "--warmup-steps and --total-steps must not be negative";
  if (c.minLr < 0)
    return "--min-lr must not be negative";
  switch (c.kind) {
  case ScheduleKind::constant:
    return "";
  case ScheduleKind::linearWarmup:
    return c.warmupSteps > 0 ? "" : "linear-warmup needs --warmup-steps > 0";
  case ScheduleKind::cosine:
    return c.totalSteps > 0 ? "" : "cosine needs --total-steps > 0";
  case ScheduleKind::warmupCosine:
    return c.totalSteps > c.warmupSteps
               ? ""
               : "warmup-cosine needs --total-steps > --warmup-steps";
  }
  llvm_unreachable("unknown schedule");
}

/// cos(pi * s / period) for s >= 0 (i64, 0-d), as f64.
static Value cosPiFraction(ScalarBuilder &sb, Value s, int64_t period) {
  // cos(pi * s / T) has period 2T and is symmetric about T: fold s into
  // [0, T] exactly before leaving the integers.
  Value twoT = sb.i64(2 * period);
  Value r = sb.sub(s, sb.mul(sb.div(s, twoT), twoT));
  r = sb.where(sb.compare(of::ComparePredicate::gt, r, sb.i64(period)),
               sb.sub(twoT, r), r);
  Type f64 = sb.builder().getF64Type();
  // The angle as torch forms it: math.pi * s / T.
  Value x = sb.div(sb.mul(sb.f64(M_PI), sb.cast(r, f64)),
                   sb.f64(static_cast<double>(period)));
  Value x2 = sb.mul(x, x);
  // Horner in x^2: sum_k (-1)^k x^2k / (2k)!, k = 0..16.
  constexpr int kTerms = 16;
  double coefficients[kTerms + 1];
  double factorial = 1;
  for (int k = 0; k <= kTerms; ++k) {
    if (k > 0)
      factorial *= (2.0 * k - 1) * (2.0 * k);
    coefficients[k] = (k % 2 ? -1.0 : 1.0) / factorial;
  }
  Value acc = sb.f64(coefficients[kTerms]);
  for (int k = kTerms - 1; k >= 0; --k)
    acc = sb.add(sb.mul(acc, x2), sb.f64(coefficients[k]));
  return acc;
}

/// CosineAnnealingLR's closed form at step s (i64) over `period` steps:
/// eta_min + (lr - eta_min) * (1 + cos(pi * s / T)) / 2.
static Value cosineRate(ScalarBuilder &sb, Value lr, double minLr, Value s,
                        int64_t period) {
  Value etaMin = sb.f64(minLr);
  Value cosine = cosPiFraction(sb, s, period);
  Value scaled = sb.mul(sb.sub(lr, etaMin), sb.add(sb.f64(1.0), cosine));
  return sb.add(etaMin, sb.div(scaled, sb.f64(2.0)));
}

Value buildScheduledLearningRate(ScalarBuilder &sb,
                                        const ScheduleConfig &c, Value lr,
                                        Value step) {
  Type f64 = sb.builder().getF64Type();
  auto warmupFactor = [&] {
    // (s + 1) / W, in doubles as LambdaLR's lambda computes it.
    return sb.div(sb.add(sb.cast(step, f64), sb.f64(1.0)),
                  sb.f64(static_cast<double>(c.warmupSteps)));
  };
  switch (c.kind) {
  case ScheduleKind::constant:
    return lr;
  case ScheduleKind::linearWarmup:
    return sb.mul(lr, sb.min(sb.f64(1.0), warmupFactor()));
  case ScheduleKind::cosine:
    return cosineRate(sb, lr, c.minLr, step, c.totalSteps);
  case ScheduleKind::warmupCosine: {
    if (c.warmupSteps == 0)
      return cosineRate(sb, lr, c.minLr, step, c.totalSteps);
    Value warmup = sb.i64(c.warmupSteps);
    Value sinceWarmup = sb.max(sb.sub(step, warmup), sb.i64(0));
    Value cosine = cosineRate(sb, lr, c.minLr, sinceWarmup,
                              c.totalSteps - c.warmupSteps);
    Value inWarmup = sb.compare(of::ComparePredicate::lt, step, warmup);
    return sb.where(inWarmup, sb.mul(lr, warmupFactor()), cosine);
  }
  }
  llvm_unreachable("unknown schedule");
}

} // namespace oflow
