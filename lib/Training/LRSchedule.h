//===- LRSchedule.h - learning-rate schedules in the program ---*- C++ -*-===//
//
// The schedule is computed inside the train step from the run-time base rate
// and step counter, so `--lr` at run time and resumed runs need no
// recompilation. Formulas and the torch schedulers they equal: Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_TRAINING_LRSCHEDULE_H
#define OFLOW_LIB_TRAINING_LRSCHEDULE_H

#include "ScalarBuilder.h"

#include <optional>

namespace oflow {

enum class ScheduleKind { constant, linearWarmup, cosine, warmupCosine };

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::constant;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 0;
  double minLr = 0;
};

std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);
llvm::StringRef stringifyScheduleKind(ScheduleKind kind);

/// Why `config` is unusable, or "" when it is fine.
std::string checkSchedule(const ScheduleConfig &config);

/// The learning rate of step `step` (i64, 0-d, counted from 0) for base rate
/// `lr` (f64, 0-d), as an f64 0-d tensor.
mlir::Value buildScheduledLearningRate(ScalarBuilder &sb,
                                       const ScheduleConfig &config,
                                       mlir::Value lr, mlir::Value step);

} // namespace oflow

#endif
