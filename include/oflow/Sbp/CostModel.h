//===- CostModel.h - SBP layouts, meshes and the time model -----*- C++ -*-===//
//
// Plain C++ (no IR) over shapes and mesh sizes, so that the SBP-choice pass,
// the boxing-insertion pass and `--emit=plan` all price things the same way
// (DESIGN.md: "one cost function serves both choice and lowering").
//
// An nd-SBP has one entry per mesh axis. Where several mesh axes split the
// same tensor axis, the piece index along it is mixed-radix in mesh-axis order
// (the earlier mesh axis is the more significant digit).
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SBP_COSTMODEL_H
#define OFLOW_SBP_COSTMODEL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "oflow/Support/DeviceProfile.h"

#include <cstdint>
#include <optional>
#include <string>

namespace oflow::sbp {

enum class SbpKind { Split, Broadcast, PartialSum, PartialMax };

/// The layout of a tensor along one mesh axis.
struct Sbp {
  SbpKind kind = SbpKind::Broadcast;
  int64_t axis = -1; // tensor axis, for Split only

  static Sbp split(int64_t axis) { return {SbpKind::Split, axis}; }
  static Sbp broadcast() { return {SbpKind::Broadcast, -1}; }
  static Sbp partialSum() { return {SbpKind::PartialSum, -1}; }
  static Sbp partialMax() { return {SbpKind::PartialMax, -1}; }

  bool isSplit() const { return kind == SbpKind::Split; }
  bool isPartial() const {
    return kind == SbpKind::PartialSum || kind == SbpKind::PartialMax;
  }
  bool operator==(const Sbp &o) const {
    return kind == o.kind && axis == o.axis;
  }
  bool operator!=(const Sbp &o) const { return !(*this == o); }
  /// "S(0)", "B", "P(sum)", "P(max)".
  std::string str() const;
};

/// One Sbp per mesh axis.
using NdSbp = llvm::SmallVector<Sbp, 2>;

/// "[S(0), B]".
std::string str(const NdSbp &nd);
/// Parses "S(1)", "B", "P", "P(sum)", "P(max)"; std::nullopt otherwise.
std::optional<Sbp> parseSbp(llvm::StringRef text);
/// Parses "[S(0), B]" (brackets optional, comma separated).
std::optional<NdSbp> parseNdSbp(llvm::StringRef text);

/// Alpha-beta model of one mesh axis's interconnect: a collective costs
/// alphaSeconds + bytes / bytesPerSecond.
struct Link {
  double alphaSeconds;
  double bytesPerSecond;
  /// The axis's devices are one device taking turns (--micro-batches): a
  /// collective on another axis of a value split along this one runs once
  /// per turn on its piece, so the whole value's bytes and one latency per
  /// turn.
  bool sequential = false;
};

/// Round numbers per link kind: latency, and the bus bandwidth a device
/// sustains in ring collectives (NCCL's busbw: the bytes each device sends,
/// which the boxing planner counts, per second):
///   nvlink   10 us, 370 GB/s   (NVLink 4 inside an H100/H200 node; NVLS
///                               all-reduce reaches ~480, not modelled)
///   pcie     10 us,  16 GB/s
///   ib       46 us,  46 GB/s   (400 Gb/s InfiniBand across nodes, one NIC
///                               per GPU: 8 rails, ~370 GB/s per node)
///   ethernet 30 us,   3 GB/s
///   local     2 us,  10 GB/s   (CPU ranks on one machine, shared memory)
///   sequential 1 us, 1 TB/s    (--micro-batches' axis: one device taking
///                               turns; its "collectives" are local sums,
///                               concatenations and slices)
/// std::nullopt for an unknown name.
std::optional<Link> linkByName(llvm::StringRef kind);
/// The link used where a mesh axis declares none.
Link defaultLink();

struct Mesh {
  llvm::SmallVector<int64_t, 2> shape;
  /// One per mesh axis; missing trailing entries mean defaultLink().
  llvm::SmallVector<Link, 2> links;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numDevices() const;
  Link link(int64_t meshAxis) const;
};

/// A rate model of one device, for the compute term.
struct Device {
  double flopsPerSecond;
  double bytesPerSecond;
  /// Convolutions' rate: both targets run them in fp32 whatever the GEMMs'
  /// precision (cuDNN with FMA math, oneDNN), as the kernel report prices
  /// them.
  double convFlopsPerSecond = 0;
};

/// The rate model of `profile` (`--device`) for a program whose GEMMs run in
/// `precision` (fp32, tf32, bf16, fp16): that precision's GEMM rate, the fp32
/// rate for convolutions, and the memory bandwidth. The built-in `cpu`
/// profile gives one CPU rank, 100 GFLOP/s and 20 GB/s, what the planner has
/// always assumed.
Device deviceFor(const oflow::DeviceProfile &profile, llvm::StringRef precision);

/// Seconds for `flops` arithmetic and `bytes` of memory traffic on `device`.
/// Roofline: max(flops / F, bytes / B), i.e. compute and traffic overlap and
/// the slower one bounds the kernel.
double computeSeconds(const Device &device, double flops, double bytes);

/// The product of the sizes of the mesh axes that split tensor axis `axis`.
int64_t splitFactor(const Mesh &mesh, const NdSbp &nd, int64_t axis);

/// True iff every dimension of `shape` is static (>= 0: the planner prices
/// only those) and `nd` follows the rules the dialect's verifier applies
/// (oflow/Support/SbpRules.h: one entry per mesh axis, splits of tensor axes
/// that exist and divide by the product of the mesh axes splitting them,
/// partial sums and partial maxes not mixed).
bool isValidLayout(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                   const NdSbp &nd);

/// The shape each device holds. Requires isValidLayout.
llvm::SmallVector<int64_t> localShape(const Mesh &mesh,
                                      llvm::ArrayRef<int64_t> shape,
                                      const NdSbp &nd);

} // namespace oflow::sbp

#endif // OFLOW_SBP_COSTMODEL_H
