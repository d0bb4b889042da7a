//===- AppendLoss.cpp - make the entry's first result the loss ------------===//
//
// Autodiff differentiates result 0 of the entry. A model exported with its
// loss returns it as a scalar; a model exported without one (logits only)
// gets the loss the user names on the command line, with its labels as a
// new input.
//
//===----------------------------------------------------------------------===//
#include "oflow/Training/Passes.h"

#include "OFlow/OFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace oflow {
#define GEN_PASS_DEF_APPENDLOSS
#include "oflow/Training/Passes.h.inc"
} // namespace oflow

using namespace mlir;
using namespace ::oflow;
namespace of = ::mlir::oflow;

namespace {

bool isScalarFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 0 &&
         isa<FloatType>(tensor.getElementType());
}

/// "'name' : type" (or "#i : type" when unnamed) for result `i`.
std::string describeResult(func::FuncOp fn, unsigned i) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto name = fn.getResultAttrOfType<StringAttr>(
          i, of::OFlowDialect::kNameAttrName))
    os << "'" << name.getValue() << "'";
  else
    os << "#" << i;
  os << " : " << fn.getResultTypes()[i];
  return text;
}

/// Every result, to tell the user what there is.
std::string describeResults(func::FuncOp fn) {
  std::string text;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    text += (i ? ", " : "") + describeResult(fn, i);
  return text;
}

struct AppendLoss : ::oflow::impl::AppendLossBase<AppendLoss> {
  using AppendLossBase::AppendLossBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isExternal()) {
      module.emitError("oflow-append-loss: no function @") << entry
          << " with a body to take the loss from";
      return signalPassFailure();
    }
    if (loss != "none" && loss != "cross-entropy" && loss != "mse") {
      module.emitError("oflow-append-loss: unknown loss '")
          << loss << "' (expected none, cross-entropy or mse)";
      return signalPassFailure();
    }
    auto returnOp = cast<func::ReturnOp>(fn.getBody().back().getTerminator());

    // A scalar result is the loss the model computes itself.
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
      if (!isScalarFloat(fn.getResultTypes()[i]))
        continue;
      if (loss != "none") {
        fn.emitError("@") << entry << " already returns a scalar loss ("
                          << describeResult(fn, i) << "); --loss " << loss
                          << " does not apply";
        return signalPassFailure();
      }
      moveResultFirst(fn, returnOp, i);
      return;
    }

    if (loss == "none") {
      fn.emitError("@")
          << entry << " returns no scalar loss (outputs: "
          << describeResults(fn)
          << "); pass --loss cross-entropy|mse --label NAME to append one";
      return signalPassFailure();
    }
    if (fn.getNumResults() == 0) {
      fn.emitError("@") << entry << " has no output to put a loss on";
      return signalPassFailure();
    }
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto name =
          fn.getArgAttrOfType<StringAttr>(i, of::OFlowDialect::kNameAttrName);
      if (name && name.getValue() == label) {
        fn.emitError("the label name '")
            << label << "' is already an input of @" << entry
            << " (argument #" << i << "); choose another with --label";
        return signalPassFailure();
      }
    }
    if (failed(appendLoss(fn, returnOp)))
      return signalPassFailure();
  }

  /// Moves result `index` to the front, with its attributes.
  static void moveResultFirst(func::FuncOp fn, func::ReturnOp returnOp,
                              unsigned index) {
    if (index == 0)
      return nameLossIfUnnamed(fn);
    SmallVector<unsigned> order{index};
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      if (i != index)
        order.push_back(i);
    SmallVector<Value> operands;
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (unsigned i : order) {
      operands.push_back(returnOp.getOperand(i));
      types.push_back(fn.getResultTypes()[i]);
      attrs.push_back(fn.getResultAttrDict(i));
    }
    returnOp->setOperands(operands);
    fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(), types));
    fn.setAllResultAttrs(attrs);
    nameLossIfUnnamed(fn);
  }

  static void nameLossIfUnnamed(func::FuncOp fn) {
    if (!fn.getResultAttr(0, of::OFlowDialect::kNameAttrName))
      fn.setResultAttr(0, of::OFlowDialect::kNameAttrName,
                       StringAttr::get(fn.getContext(), "loss"));
  }

  LogicalResult appendLoss(func::FuncOp fn, func::ReturnOp returnOp) {
    MLIRContext *ctx = fn.getContext();
    Value output = returnOp.getOperand(0);
    auto outputType = cast<RankedTensorType>(output.getType());
    auto describeOutput = [&] {
      std::string text = "output #0";
      if (auto name = fn.getResultAttrOfType<StringAttr>(
              0, of::OFlowDialect::kNameAttrName))
        text += " '" + name.getValue().str() + "'";
      return text;
    };
    if (!isa<FloatType>(outputType.getElementType()))
      return fn.emitError("--loss ")
             << loss << " needs floating-point " << describeOutput()
             << ", not " << outputType;

    Type labelType = outputType;
    if (loss == "cross-entropy") {
      // Logits [N, C, d...] against class indices [N, d...].
      if (outputType.getRank() < 2)
        return fn.emitError("--loss cross-entropy needs ")
               << describeOutput() << " to be logits [N, C, d...], not "
               << outputType;
      SmallVector<int64_t> shape(outputType.getShape());
      shape.erase(shape.begin() + 1);
      labelType = RankedTensorType::get(shape, IntegerType::get(ctx, 64));
    }

    Location loc = NameLoc::get(StringAttr::get(ctx, "oflow.loss"),
                                returnOp.getLoc());
    unsigned labelIndex = fn.getNumArguments();
    auto labelAttrs = DictionaryAttr::get(
        ctx, {NamedAttribute(of::OFlowDialect::kNameAttrName,
                             StringAttr::get(ctx, label))});
    if (failed(fn.insertArgument(labelIndex, labelType, labelAttrs, loc)))
      return fn.emitError("cannot add the label argument");
    Value labels = fn.getArgument(labelIndex);

    OpBuilder builder(returnOp);
    Value lossValue;
    if (loss == "cross-entropy")
      lossValue = of::SoftmaxCrossEntropyOp::create(
          builder, loc, output, labels, of::LossReduction::mean,
          /*ignore_index=*/nullptr);
    else
      lossValue = of::MseLossOp::create(builder, loc, output, labels,
                                        of::LossReduction::mean);

    SmallVector<Value> operands{lossValue};
    llvm::append_range(operands, returnOp.getOperands());
    SmallVector<Type> types{lossValue.getType()};
    llvm::append_range(types, fn.getResultTypes());
    SmallVector<DictionaryAttr> attrs{DictionaryAttr::get(
        ctx, {NamedAttribute(of::OFlowDialect::kNameAttrName,
                             StringAttr::get(ctx, "loss"))})};
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      attrs.push_back(fn.getResultAttrDict(i));
    returnOp->setOperands(operands);
    fn.setType(FunctionType::get(ctx, fn.getArgumentTypes(), types));
    fn.setAllResultAttrs(attrs);
    return success();
  }
};

} // namespace
