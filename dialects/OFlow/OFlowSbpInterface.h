//===- OFlowSbpInterface.h - SBP signatures of an op ------------*- C++ -*-===//
//
// The SBP signature of an op on one mesh axis, the op interface that lists
// them, and helpers for the common op families. The helpers work on shapes
// only, so the rules read like DESIGN.md's tables.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_DIALECT_OFLOWSBPINTERFACE_H
#define OFLOW_DIALECT_OFLOWSBPINTERFACE_H

#include "OFlow/OFlowAttrs.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::oflow {

/// One way to run an op locally on one mesh axis: an SBP per operand and per
/// result. `collective` is empty when every device's local work alone gives
/// its piece of the single-device result; otherwise it names the collective
/// the op must run inside (e.g. "all-reduce of the batch statistics").
struct SbpSignature {
  llvm::SmallVector<SbpAttr> operands;
  llvm::SmallVector<SbpAttr> results;
  std::string collective;

  bool operator==(const SbpSignature &other) const {
    return operands == other.operands && results == other.results &&
           collective == other.collective;
  }
  /// `S(0), B -> S(0)` (`()` for no values), then ` [needs <collective>]` when there is one.
  std::string str() const;
};

/// The `collective` of a lookup in a table split along the gathered axis:
/// each rank looks up its own rows and masks the rest (oflow-partition
/// implements it, so the SBP planner may choose it).
inline constexpr const char *kMaskRowsCollective =
    "indices outside the local rows masked, offset by rank";

/// Short names for building signatures: `S(ctx, 1)`, `B(ctx)`, `P(ctx)`.
SbpAttr sbpS(MLIRContext *ctx, int64_t axis);
SbpAttr sbpB(MLIRContext *ctx);
SbpAttr sbpP(MLIRContext *ctx);
SbpAttr sbpPMax(MLIRContext *ctx);

/// Whether every split in `sig` divides its tensor dim by `axisSize` (and the
/// split axis exists).
bool sbpSignatureFits(const SbpSignature &sig,
                      llvm::ArrayRef<llvm::SmallVector<int64_t>> operandShapes,
                      llvm::ArrayRef<llvm::SmallVector<int64_t>> resultShapes,
                      int64_t axisSize);

/// Elementwise with numpy broadcasting: all-broadcast, and for each result
/// axis i a signature splitting it: an operand holding that axis at full size
/// is split on its own matching axis, one broadcasting along it (size 1 or
/// missing) is B. Partial signatures are the op's to add (only where linear).
llvm::SmallVector<SbpSignature> getElementwiseSbpSignatures(
    MLIRContext *ctx, llvm::ArrayRef<llvm::SmallVector<int64_t>> operandShapes,
    llvm::ArrayRef<int64_t> resultShape);

/// A reduction of `inputShape` over `axes`: kept axes split through (renumbered
/// when `keepDims` is false); a reduced split axis gives `partial` (P(sum) for
/// sums and means, P(max) for max), with `collective` as the note (means
/// divide by the global count).
llvm::SmallVector<SbpSignature>
getReductionSbpSignatures(MLIRContext *ctx, llvm::ArrayRef<int64_t> inputShape,
                          llvm::ArrayRef<int64_t> axes, bool keepDims,
                          SbpAttr partial, llvm::StringRef collective = "");

/// A row-major reshape from `inShape` to `outShape`: input S(i) stays split as
/// S(j) when the dims before i and before j have the same product (then each
/// device's chunk is the same contiguous run of elements). With B -> B.
llvm::SmallVector<SbpSignature>
getReshapeSbpSignatures(MLIRContext *ctx, llvm::ArrayRef<int64_t> inShape,
                        llvm::ArrayRef<int64_t> outShape);

/// Shapes of an op's operands and results (static tensors; empty for others).
llvm::SmallVector<llvm::SmallVector<int64_t>> getShapes(TypeRange types);

} // namespace mlir::oflow

#include "OFlow/OFlowSbpInterface.h.inc"

namespace mlir::oflow {
/// The op's signatures on one mesh axis of `axisSize` devices: its candidates
/// that fit the shapes (divisibility), without duplicates, in order.
llvm::SmallVector<SbpSignature> getSbpSignatures(SbpSignatureOpInterface op,
                                                 int64_t axisSize);
} // namespace mlir::oflow

namespace mlir::oflow {
/// Checks that `op`, whose operands and results are laid out as `operands` and
/// `results` on `mesh` (one nd-SBP each), runs one of its signatures on every
/// mesh axis (the collective a signature names is the op's own business).
/// Reports the first mesh axis without one through `emitError`.
LogicalResult verifyNdSbpSignature(SbpSignatureOpInterface op, MeshAttr mesh,
                                   ArrayRef<NdSbpAttr> operands,
                                   ArrayRef<NdSbpAttr> results,
                                   function_ref<InFlightDiagnostic()> emitError);
} // namespace mlir::oflow

#endif
