//===- oflow_rt/StepLog.h - per-step metrics on stdout and JSON --*- C++ -*-===//
#ifndef OFLOW_RT_STEPLOG_H
#define OFLOW_RT_STEPLOG_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace oflow_rt {

/// Shortest decimal text that reads back as the same float ("%.9g" is exact
/// but often longer than needed); JSON `null` for NaN and infinities.
std::string floatText(float v);

class StepLog {
public:
  /// `jsonPath` empty: no JSON log. The file is created (truncated) now,
  /// so a bad path fails before any step runs.
  StepLog(const std::string &jsonPath, int64_t batch, int64_t firstStep,
          int64_t lastStep);
  ~StepLog();

  /// Restarts the clock that rates and ETAs count from (set at the first
  /// step, so start-up work such as --dump-grads does not skew them).
  void startClock() { start = std::chrono::steady_clock::now(); }

  /// `extra`: the program's other scalar outputs (accuracy, ...), by name.
  void step(int64_t k, float loss, float lr,
            const std::vector<std::pair<std::string, float>> &extra = {});
  void eval(int64_t k, float evalLoss, int64_t batches);

  /// Text (`, "key": value` ...) appended inside every JSON record, e.g. the
  /// CUDA runtime's device memory; nothing when it returns "".
  void setJsonExtra(std::function<std::string()> f) { jsonExtra = std::move(f); }

private:
  void json(const std::string &line);

  std::function<std::string()> jsonExtra;
  std::FILE *jsonFile = nullptr;
  std::string jsonPath;
  int64_t batch, firstStep, lastStep;
  std::chrono::steady_clock::time_point start;
};

} // namespace oflow_rt

#endif
