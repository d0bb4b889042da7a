//===- SbpRules.h - what an nd-SBP may be, stated once ----------*- C++ -*-===//
//
// The dialect's verifier (`#oflow.nd_sbp` against a mesh and a tensor) and
// the planner's model (oflow::sbp::isValidLayout) used to state the rules
// twice, and disagreed: the dialect accepted a layout partial with sum on
// one mesh axis and max on another, which no collective can reduce. Both
// now ask this MLIR-free function, the one statement of the rules; each
// phrases what it finds in its own words (the verifier names mesh axes by
// name).
//
// An nd-SBP has one entry per mesh axis. Where several mesh axes split the
// same tensor axis, the piece index along it is mixed-radix in mesh-axis
// order; the tensor axis must divide by the product of their sizes.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_SUPPORT_SBPRULES_H
#define OFLOW_SUPPORT_SBPRULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace oflow::sbp_rules {

enum class EntryKind { Split, Broadcast, PartialSum, PartialMax };

/// One mesh axis's entry; `axis` is the tensor axis of a split.
struct Entry {
  EntryKind kind = EntryKind::Broadcast;
  int64_t axis = -1;
};

enum class Problem {
  None,
  /// Not one entry per mesh axis.
  EntryCount,
  /// A split of a tensor axis the tensor does not have (`meshAxis`,
  /// `tensorAxis`).
  SplitAxisOutOfRange,
  /// `tensorAxis` does not divide by `factor`, the product of the sizes of
  /// the mesh axes that split it up to `meshAxis`.
  NotDivisible,
  /// Partial with sum on one mesh axis and max on `meshAxis`, or the
  /// reverse: no reduction undoes both.
  MixedPartials,
};

struct Finding {
  Problem problem = Problem::None;
  int64_t meshAxis = -1;
  int64_t tensorAxis = -1;
  int64_t factor = 1;
  explicit operator bool() const { return problem != Problem::None; }
};

/// The first problem of `entries` on a mesh of `meshShape` for a tensor of
/// static `shape`, mesh axes in order; a Finding that converts to false when
/// the layout is valid.
Finding checkLayout(llvm::ArrayRef<int64_t> meshShape, llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<Entry> entries);

/// The shape each device holds (the layout must be valid).
llvm::SmallVector<int64_t> localShape(llvm::ArrayRef<int64_t> meshShape,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<Entry> entries);

/// How many pieces `entries` cut tensor axis `axis` into.
int64_t splitFactor(llvm::ArrayRef<int64_t> meshShape, llvm::ArrayRef<Entry> entries,
                    int64_t axis);

} // namespace oflow::sbp_rules

#endif // OFLOW_SUPPORT_SBPRULES_H
