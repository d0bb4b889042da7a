//===- KernelReport.h - per-kernel cost of a CUDA program -----*- C++ -*-===//
//
// `oflow-compile --emit=kernels`: one line per kernel (and per library call:
// GEMMs, collectives) of each entry, in launch order, with its cost counted
// from the outlined gpu.func, i.e. what really runs:
//
//  * L2 traffic: for every global load and store, the 32-byte sectors one warp
//    access touches (its lanes' addresses evaluated concretely on sampled
//    warps), times how many warp accesses run (active warps x loop trips).
//  * HBM bytes: the distinct sectors the kernel touches: per access, the
//    smaller of its L2 sectors and the address span it covers; accesses whose
//    spans overlap share their span (a mask broadcast to every head is read
//    once from HBM).
//  * FLOPs: float arithmetic executed (active threads x loop trips).
//  * the longest chain of dependent global loads one thread issues (loop
//    trips, plus one per load whose address needs another load's value).
//
// Predicted time = max(HBM / (bandwidth x min(1, threads in flight / threads
// needed to cover memory latency)), FLOPs / peak, chain x waves x latency)
// plus the launch overhead (Little's law: the bytes in flight must cover
// bandwidth x latency).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_CODEGEN_KERNELREPORT_H
#define OFLOW_CODEGEN_KERNELREPORT_H

#include "oflow/Support/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <string>
#include <vector>

namespace mlir::gpu {
class GPUFuncOp;
} // namespace mlir::gpu

namespace oflow {

struct KernelCost {
  std::string name;
  std::string kind = "kernel"; ///< kernel | gemm | collective
  /// How the kernel computes (the strategy recorded on it, or the fallback:
  /// "pointwise (fallback)", "single-thread (fallback)"); for library calls
  /// the call and its shape.
  std::string strategy;
  std::string origins; ///< the ONNX nodes (location names) it came from
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  double flops = 0;
  double l2Bytes = 0;  ///< sectors x 32 over all warp accesses
  double hbmBytes = 0; ///< distinct sectors x 32 (reads + writes)
  double loadChain = 0;
  /// A fused launch's former kernels (oflow-fuse-launches): the threads and
  /// the longest chain of dependent loads of each. Empty for other kernels.
  std::vector<std::pair<double, double>> segments;
  /// What the profiler records for it: 1, or for a GEMM the runtime pads,
  /// the GEMM plus its copies and memsets (nodes of the CUDA graph).
  int64_t nodes = 1;
  double seconds = 0;  ///< predicted, launch included
  std::string bound;   ///< memory | compute | latency | launch
  int64_t threads() const {
    return grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
  }
};

struct EntryReport {
  std::string entry;
  std::vector<KernelCost> launches;
  double hbmBytes = 0, flops = 0, seconds = 0;
  int64_t generated = 0, library = 0;
  /// Launches and graph nodes in all (padded GEMMs' copies and memsets too).
  int64_t nodes = 0;
  /// Kernels and memsets launched only with --check-memory (poisoning dead
  /// buffers): not in `launches` nor in the totals.
  int64_t checkingOnly = 0;
  /// Whether the runtime replays the entry from a CUDA graph (launches at
  /// the profile's graph_launch_s), and if not, why: the runtime launches
  /// collectives and allocations eagerly (runtime/lib/GraphReplay.h).
  bool cudaGraph = true;
  std::string eagerReason;
};

/// The ONNX nodes (location names) the ops nested in `root` came from:
/// up to three, then "+N".
std::string kernelOrigins(mlir::Operation *root);

/// The cost of one outlined kernel launched with `grid` x `block` (its
/// known_grid_size / known_block_size when those are empty) and the
/// integer `arguments` its launch passes, where constant (its views'
/// offsets).
KernelCost analyzeKernel(mlir::gpu::GPUFuncOp kernel, const DeviceProfile &device,
                         std::array<int64_t, 3> grid = {0, 0, 0},
                         std::array<int64_t, 3> block = {0, 0, 0},
                         llvm::ArrayRef<std::optional<int64_t>> arguments = {});

/// Every entry's launches in order: gpu.launch_func (after
/// gpu-kernel-outlining) and the runtime's GEMM and collective calls.
std::vector<EntryReport> analyzeProgram(mlir::ModuleOp module,
                                        const DeviceProfile &device);

std::string formatKernelReport(const std::vector<EntryReport> &entries,
                               const DeviceProfile &device);
std::string kernelReportJson(const std::vector<EntryReport> &entries,
                             const DeviceProfile &device);

} // namespace oflow

#endif // OFLOW_CODEGEN_KERNELREPORT_H
