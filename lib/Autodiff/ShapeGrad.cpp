//===- ShapeGrad.cpp - gradients of shape ops, slicing and gather ---------===//
#include "GradRules.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::oflow;

namespace oflow::autodiff {
namespace {

/// Ops that only reinterpret the element order: the gradient is the result
/// gradient reshaped back.
template <typename OpT> void addReshapeLike(GradRegistry &r) {
  r.add<OpT>([](OpT op, GradArgs &a) {
    a.set(0, a.b.reshape(a.grad(), shapeOf(op.getInput())));
    return success();
  });
}

/// Zeros of `type` for the results of a multi-result op that got no gradient.
Value zerosLike(GradBuilder &b, Value v) {
  RankedTensorType type = tensorType(v);
  auto attr = DenseElementsAttr::get(
      type, ArrayRef<Attribute>{FloatAttr::get(type.getElementType(), 0.0)});
  return b.op<ConstantOp>(cast<ElementsAttr>(attr));
}

void registerLayout(GradRegistry &r) {
  addReshapeLike<ReshapeOp>(r);
  addReshapeLike<FlattenOp>(r);
  addReshapeLike<SqueezeOp>(r);
  addReshapeLike<UnsqueezeOp>(r);
  r.add<TransposeOp>([](TransposeOp op, GradArgs &a) {
    ArrayRef<int64_t> perm = op.getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = static_cast<int64_t>(i);
    a.set(0, a.b.op<TransposeOp>(a.grad(), inverse));
    return success();
  });
  r.add<ExpandOp>([](ExpandOp op, GradArgs &a) {
    a.set(0, a.b.reduceTo(a.grad(), shapeOf(op.getInput())));
    return success();
  });
  // The mask is linear: the gradient keeps the same triangle.
  r.add<TriluOp>([](TriluOp op, GradArgs &a) {
    a.set(0, a.b.op<TriluOp>(a.grad(), op.getUpperAttr(), op.getKAttr()));
    return success();
  });
}

void registerPieces(GradRegistry &r) {
  // Each input gets its slab of the result gradient.
  r.add<ConcatOp>([](ConcatOp op, GradArgs &a) {
    ArrayRef<int64_t> out = shapeOf(op.getOutput());
    int64_t axis = op.getAxis(), offset = 0;
    SmallVector<int64_t> strides(out.size(), 1);
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      ArrayRef<int64_t> in = shapeOf(input);
      if (a.needs(i)) {
        SmallVector<int64_t> offsets(out.size(), 0);
        offsets[axis] = offset;
        a.set(i, a.b.op<SliceOp>(a.grad(), offsets, in, strides));
      }
      offset += in[axis];
    }
    return success();
  });
  r.add<SplitOp>([](SplitOp op, GradArgs &a) {
    SmallVector<Value> pieces;
    for (auto [i, result] : llvm::enumerate(op.getOutputs()))
      pieces.push_back(a.grad(i) ? a.grad(i) : zerosLike(a.b, result));
    a.set(0, pieces.size() == 1 ? pieces[0]
                                : a.b.op<ConcatOp>(pieces, op.getAxisAttr()));
    return success();
  });
  r.add<SliceOp>([](SliceOp op, GradArgs &a) {
    a.set(0, a.b.op<SliceBackwardOp>(a.grad(), shapeOf(op.getInput()),
                                     op.getOffsets(), op.getSizes(),
                                     op.getStrides()));
    return success();
  });
  // Indices (operand 1) are integers: never differentiated.
  r.add<GatherOp>([](GatherOp op, GradArgs &a) {
    a.set(0, a.b.op<GatherBackwardOp>(
                 a.grad(), op.getIndices(),
                 a.b.b.getDenseI64ArrayAttr(shapeOf(op.getData())),
                 op.getAxisAttr()));
    return success();
  });
}

} // namespace

void registerShapeGradRules(GradRegistry &registry) {
  registerLayout(registry);
  registerPieces(registry);
}

} // namespace oflow::autodiff
