//===- DeviceProfile.h - what a device can do, for cost models -*- C++ -*-===//
//
// The figures the kernel cost report and the SBP planner judge a program
// with (one struct, one flag, `--device`): sustained memory bandwidth, the
// FLOP rates GEMMs reach per precision (on GPUs what cuBLASLt sustains,
// about two thirds of the datasheet), memory latency, launch overhead, how
// many threads the chip keeps resident and its memory capacity. Built-in
// profiles (h200, h100, a100, cpu) are never edited; a GPU calibration
// writes its own JSON file, read with the same schema ("memory_bytes" may
// be left out of a file: capacity unknown; "gpu": false marks a CPU):
//
//   {"name": "h200", "hbm_bytes_per_s": 4.3e12, "memory_bytes": 150323855360,
//    "flops_per_s": {"bf16": 6.5e14, "fp16": 6.5e14, "tf32": 3.3e14, "fp32": 5e13},
//    "memory_latency_s": 6e-7, "launch_s": 4e-6, "graph_launch_s": 1e-6,
//    "multiprocessors": 132, "max_threads_per_multiprocessor": 2048,
//    "gemms": [{"precision": "bf16", "m": 8192, "n": 768, "k": 768,
//               "batch": 1, "seconds": 4.5e-5}]}
//
// "gemms" (optional; what bench/gpu_check.py's calibration writes) holds
// measured times of whole GEMMs: a GEMM of exactly that precision and shape
// is priced with its time instead of the precision's rate. Measured on an
// H200 (2026-12-04), cuBLASLt's bf16 rate over GPT-2's shapes ranges from
// 123 to 508 TFLOP/s (an extent of 50257 leaves rows unaligned): one rate
// per precision cannot describe that.
//
// `cpu` is one CPU rank as the planner has always priced it (100 GFLOP/s,
// 20 GB/s); its latency, launch and thread figures are nominal (no kernels).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SUPPORT_DEVICEPROFILE_H
#define OFLOW_SUPPORT_DEVICEPROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oflow {

/// One measured GEMM: C[m][n] (+)= A[m][k] B[k][n], `batch` times.
struct MeasuredGemm {
  std::string precision; ///< "bf16", "fp16", "tf32" or "fp32"
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double seconds = 0;
};

struct DeviceProfile {
  std::string name;
  double hbmBytesPerSecond = 0;
  /// Sustained FLOP/s per precision: GEMMs in that precision; "fp32" also
  /// rates the arithmetic of generated kernels.
  double bf16FlopsPerSecond = 0, fp16FlopsPerSecond = 0;
  double tf32FlopsPerSecond = 0, fp32FlopsPerSecond = 0;
  double memoryLatencySeconds = 0;
  double launchSeconds = 0;      ///< per kernel launch from the host
  double graphLaunchSeconds = 0; ///< per kernel node of a CUDA graph
  int64_t multiprocessors = 0;
  int64_t maxThreadsPerMultiprocessor = 0;
  /// Device memory in bytes; 0 when unknown (a file that leaves it out, the
  /// cpu profile: the host's memory).
  double memoryBytes = 0;
  /// Whether it is a GPU (what the kernel report can predict for).
  bool gpu = true;

  /// Measured GEMM times (a calibration's); empty for the built-ins.
  std::vector<MeasuredGemm> gemms;

  /// The GEMM rate for "bf16", "fp16", "tf32" or "fp32".
  double gemmFlopsPerSecond(llvm::StringRef precision) const;
  /// The measured time of a GEMM of exactly this precision and shape.
  std::optional<double> measuredGemmSeconds(llvm::StringRef precision, int64_t m,
                                            int64_t n, int64_t k,
                                            int64_t batch) const;
  /// Threads the whole chip keeps resident.
  int64_t residentThreads() const {
    return multiprocessors * maxThreadsPerMultiprocessor;
  }
};

/// The names of the built-in profiles.
std::vector<std::string> builtinDeviceProfileNames();
/// A built-in profile, or nullopt.
std::optional<DeviceProfile> builtinDeviceProfile(llvm::StringRef name);
/// A built-in profile's name or a JSON file's path (schema above; every
/// field but memory_bytes required, every figure positive).
llvm::Expected<DeviceProfile> loadDeviceProfile(llvm::StringRef nameOrPath);
/// `profile` in the JSON schema above.
std::string deviceProfileJson(const DeviceProfile &profile);

} // namespace oflow

#endif // OFLOW_SUPPORT_DEVICEPROFILE_H
