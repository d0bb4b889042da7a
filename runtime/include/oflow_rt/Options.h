//===- oflow_rt/Options.h - the executable's command line -------*- C++ -*-===//
#ifndef OFLOW_RT_OPTIONS_H
#define OFLOW_RT_OPTIONS_H

#include "oflow_rt/Manifest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oflow_rt {

using NamedFile = std::pair<std::string, std::string>; // NAME=FILE

struct TrainOptions {
  int64_t steps = 100;
  std::optional<double> lr;
  std::vector<NamedFile> data, evalData;
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t evalEvery = 0; // 0: only at the end
  std::string logJson, saveDir, resumeDir, exportPath, dumpGradsDir, dumpWeightsDir;
  std::string weights; // --weights FILE.onnx
  int64_t saveEvery = 0; // 0: only at the end
  bool checkMemory = false;
  /// --check-finite: after every step, name the first variable holding a
  /// NaN or an infinity.
  bool checkFinite = false;
  /// --collective-timeout S: a collective waiting this long for the other
  /// ranks ends the job (0: never).
  double collectiveTimeout = 1800;
  /// --check-gradients[=TOL]: compare the gradients with central
  /// differences of the loss, then exit.
  std::optional<double> checkGradients;
  int threads = 0; // --threads N for BLAS; 0: OpenBLAS's default
  bool allowTf32 = false; // --allow-tf32 (CUDA executables)
  bool noCudaGraph = false; // --no-cuda-graph (CUDA executables)
  bool help = false;
};

struct InferOptions {
  std::vector<NamedFile> inputs;
  std::vector<std::string> positional; // inputs in manifest order
  std::string outputDir;
  std::string format = "npy";
  std::string weights;
  int threads = 0;
  bool allowTf32 = false;
  bool noCudaGraph = false;
  bool help = false;
};

/// Both throw usageError (exit 2) on unknown options and bad values.
TrainOptions parseTrainOptions(int argc, char **argv);
InferOptions parseInferOptions(int argc, char **argv);

std::string trainHelp(const std::string &exe, const Manifest &m);
std::string inferHelp(const std::string &exe, const Manifest &m);

} // namespace oflow_rt

#endif
