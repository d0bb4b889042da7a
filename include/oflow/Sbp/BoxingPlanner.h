//===- BoxingPlanner.h - cheapest SBP conversions ---------------*- C++ -*-===//
//
// Boxing (DESIGN.md, stage 4): converting a tensor from one nd-SBP to another
// as a sequence of one-mesh-axis steps, each a 1-D collective (or a local
// op) inside every group of devices that differ only in that mesh axis.
// The planner is a shortest path over nd-SBP states under the alpha-beta
// model of CostModel.h; the boxing-insertion pass lowers its steps one to one.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SBP_BOXINGPLANNER_H
#define OFLOW_SBP_BOXINGPLANNER_H

#include "oflow/Sbp/CostModel.h"

namespace oflow::sbp {

enum class BoxingKind {
  AllReduce,          // P -> B
  ReduceScatter,      // P -> S(i)
  AllGather,          // S(i) -> B
  AllToAll,           // S(i) -> S(j), i != j
  LocalSlice,         // B -> S(i)
  BroadcastToPartial, // B -> P(sum) (coordinate 0 keeps it, others zero)
                      // or B -> P(max) (every device keeps it)
  SplitToPartial,     // S(i) -> P(sum): zero-pad the piece to the full shape
};

/// "all-reduce", "reduce-scatter", ...
llvm::StringRef str(BoxingKind kind);

/// One conversion on one mesh axis.
struct BoxingStep {
  BoxingKind kind;
  int64_t meshAxis;
  /// Tensor axis: the source's S(i) for AllGather / SplitToPartial, the
  /// target's for ReduceScatter / LocalSlice / AllToAll.
  int64_t splitAxis = -1;
  /// AllToAll: the source's S(i).
  int64_t sourceSplitAxis = -1;
  /// AllReduce / ReduceScatter of a P(max) (max instead of sum);
  /// BroadcastToPartial to P(max).
  bool max = false;
  /// The layouts before and after; they differ only at meshAxis.
  NdSbp from, to;
  /// What each device sends (0 for local steps).
  int64_t bytesPerDevice = 0;
  /// alpha + bytes / bandwidth on meshAxis's link; 0 when nothing is sent.
  double seconds = 0;

  /// "all-reduce on mesh axis 0: [P(sum), B] -> [B, B], 512 B/device".
  std::string str() const;
};

struct BoxingPlan {
  llvm::SmallVector<BoxingStep> steps;
  int64_t bytesPerDevice = 0; // sum over steps
  double seconds = 0;         // sum over steps (steps run one after another)

  /// One step per line.
  std::string str() const;
};

/// The step that changes only mesh axis `meshAxis` from `from` to `to`, or
/// std::nullopt when that is not one plain 1-D collective or local op: the
/// layouts differ elsewhere, either is invalid for `shape`, the conversion
/// has no direct form (P(sum) <-> P(max), S -> P(max)), or a later mesh axis
/// also splits a tensor axis the step splits or gathers, so each device's
/// piece along it would be strided within the group.
std::optional<BoxingStep> planOneAxisStep(const Mesh &mesh,
                                          llvm::ArrayRef<int64_t> shape,
                                          int64_t elementBytes,
                                          const NdSbp &from, const NdSbp &to,
                                          int64_t meshAxis);

/// The cheapest sequence of one-axis steps from `from` to `to` for a tensor
/// of `shape` with `elementBytes` per element. Cost is seconds; ties go to
/// fewer bytes, then fewer steps, then a fixed state order, so the plan is
/// the same on every run and every rank. Every intermediate layout is valid
/// for the shape; P(sum) -> P(max) goes through B. from == to gives an
/// empty plan. std::nullopt iff `from` or `to` is not a valid layout for the
/// shape, or elementBytes < 1: every valid pair is connected (gather the
/// mesh axes last to first into all-B, then set them first to last).
/// Cost: about 1 us for a rank-2 tensor and 3 us for rank 4 on a 2-D mesh,
/// ~130 us for rank 4 on a 3-D mesh (343 states, quadratic scan).
std::optional<BoxingPlan> planBoxing(const Mesh &mesh,
                                     llvm::ArrayRef<int64_t> shape,
                                     int64_t elementBytes, const NdSbp &from,
                                     const NdSbp &to);

} // namespace oflow::sbp

#endif // OFLOW_SBP_BOXINGPLANNER_H
