//===- OFlowSbpInterface.cpp - SBP signatures: interface and helpers ------===//
#include "OFlow/OFlowSbpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::oflow;

#include "OFlow/OFlowSbpInterface.cpp.inc"

std::string SbpSignature::str() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto print = [&](ArrayRef<SbpAttr> list) {
    if (list.empty())
      os << "()";
    llvm::interleaveComma(list, os, [&](SbpAttr sbp) { os << sbp.str(); });
  };
  print(operands);
  os << " -> ";
  print(results);
  if (!collective.empty())
    os << " [needs " << collective << "]";
  return out;
}

SbpAttr mlir::oflow::sbpS(MLIRContext *ctx, int64_t axis) {
  return SbpAttr::getSplit(ctx, axis);
}
SbpAttr mlir::oflow::sbpB(MLIRContext *ctx) {
  return SbpAttr::getBroadcast(ctx);
}
SbpAttr mlir::oflow::sbpP(MLIRContext *ctx) {
  return SbpAttr::getPartialSum(ctx);
}
SbpAttr mlir::oflow::sbpPMax(MLIRContext *ctx) {
  return SbpAttr::getPartialMax(ctx);
}

static bool fits(ArrayRef<SbpAttr> sbps, ArrayRef<SmallVector<int64_t>> shapes,
                 int64_t axisSize) {
  if (sbps.size() != shapes.size())
    return false;
  for (auto [sbp, shape] : llvm::zip_equal(sbps, shapes)) {
    if (!sbp.isSplit())
      continue;
    int64_t axis = sbp.getAxis();
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        shape[axis] % axisSize != 0)
      return false;
  }
  return true;
}

bool mlir::oflow::sbpSignatureFits(const SbpSignature &sig,
                                   ArrayRef<SmallVector<int64_t>> operandShapes,
                                   ArrayRef<SmallVector<int64_t>> resultShapes,
                                   int64_t axisSize) {
  return fits(sig.operands, operandShapes, axisSize) &&
         fits(sig.results, resultShapes, axisSize);
}

SmallVector<SbpSignature> mlir::oflow::getElementwiseSbpSignatures(
    MLIRContext *ctx, ArrayRef<SmallVector<int64_t>> operandShapes,
    ArrayRef<int64_t> resultShape) {
  SmallVector<SbpSignature> sigs;
  SbpSignature all;
  all.operands.assign(operandShapes.size(), sbpB(ctx));
  all.results.push_back(sbpB(ctx));
  sigs.push_back(all);
  int64_t rank = resultShape.size();
  for (int64_t axis = 0; axis < rank; ++axis) {
    SbpSignature sig;
    for (ArrayRef<int64_t> shape : operandShapes) {
      // Numpy broadcasting aligns shapes on the right.
      int64_t own = axis - (rank - static_cast<int64_t>(shape.size()));
      bool holdsAxis = own >= 0 && shape[own] == resultShape[axis];
      sig.operands.push_back(holdsAxis ? sbpS(ctx, own) : sbpB(ctx));
    }
    sig.results.push_back(sbpS(ctx, axis));
    sigs.push_back(std::move(sig));
  }
  return sigs;
}

SmallVector<SbpSignature> mlir::oflow::getReductionSbpSignatures(
    MLIRContext *ctx, ArrayRef<int64_t> inputShape, ArrayRef<int64_t> axes,
    bool keepDims, SbpAttr partial, StringRef collective) {
  int64_t rank = inputShape.size();
  auto isReduced = [&](int64_t axis) {
    return llvm::any_of(axes, [&](int64_t a) { return (a < 0 ? a + rank : a) == axis; });
  };
  SmallVector<SbpSignature> sigs;
  sigs.push_back({{sbpB(ctx)}, {sbpB(ctx)}, ""});
  int64_t outAxis = 0;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (isReduced(axis)) {
      sigs.push_back({{sbpS(ctx, axis)}, {partial}, collective.str()});
      if (keepDims)
        ++outAxis;
      continue;
    }
    sigs.push_back({{sbpS(ctx, axis)}, {sbpS(ctx, outAxis)}, ""});
    ++outAxis;
  }
  return sigs;
}

SmallVector<SbpSignature>
mlir::oflow::getReshapeSbpSignatures(MLIRContext *ctx, ArrayRef<int64_t> inShape,
                                     ArrayRef<int64_t> outShape) {
  SmallVector<SbpSignature> sigs;
  sigs.push_back({{sbpB(ctx)}, {sbpB(ctx)}, ""});
  int64_t inPrefix = 1;
  for (auto [i, inDim] : llvm::enumerate(inShape)) {
    int64_t outPrefix = 1;
    for (auto [j, outDim] : llvm::enumerate(outShape)) {
      // Size-1 dims never split, so each run of them adds nothing new.
      if (outPrefix == inPrefix && inDim != 1 && outDim != 1)
        sigs.push_back({{sbpS(ctx, i)}, {sbpS(ctx, j)}, ""});
      outPrefix *= outDim;
    }
    inPrefix *= inDim;
  }
  // Reshaping moves elements without arithmetic: partial stays partial.
  sigs.push_back({{sbpP(ctx)}, {sbpP(ctx)}, ""});
  sigs.push_back({{sbpPMax(ctx)}, {sbpPMax(ctx)}, ""});
  return sigs;
}

SmallVector<SmallVector<int64_t>> mlir::oflow::getShapes(TypeRange types) {
  SmallVector<SmallVector<int64_t>> shapes;
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    shapes.push_back(tensor ? SmallVector<int64_t>(tensor.getShape())
                            : SmallVector<int64_t>());
  }
  return shapes;
}

SmallVector<SbpSignature> mlir::oflow::getSbpSignatures(SbpSignatureOpInterface op,
                                                        int64_t axisSize) {
  Operation *operation = op.getOperation();
  SmallVector<SmallVector<int64_t>> operandShapes =
      getShapes(operation->getOperandTypes());
  SmallVector<SmallVector<int64_t>> resultShapes =
      getShapes(operation->getResultTypes());
  SmallVector<SbpSignature> out;
  for (SbpSignature &sig : op.getSbpCandidates(axisSize)) {
    if (!sbpSignatureFits(sig, operandShapes, resultShapes, axisSize) ||
        llvm::is_contained(out, sig))
      continue;
    out.push_back(std::move(sig));
  }
  return out;
}

LogicalResult mlir::oflow::verifyNdSbpSignature(
    SbpSignatureOpInterface op, MeshAttr mesh, ArrayRef<NdSbpAttr> operands,
    ArrayRef<NdSbpAttr> results, function_ref<InFlightDiagnostic()> emitError) {
  for (auto [axis, size] : llvm::enumerate(mesh.getShape())) {
    SbpSignature used;
    for (NdSbpAttr ndSbp : operands)
      used.operands.push_back(ndSbp.getEntries()[axis]);
    for (NdSbpAttr ndSbp : results)
      used.results.push_back(ndSbp.getEntries()[axis]);
    bool found = llvm::any_of(getSbpSignatures(op, size), [&](const SbpSignature &sig) {
      return sig.operands == used.operands && sig.results == used.results;
    });
    if (!found)
      return emitError() << "has no SBP signature " << used.str() << " on mesh axis "
                         << mesh.getAxisDisplayName(axis) << " (size " << size << ")";
  }
  return success();
}
