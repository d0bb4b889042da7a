//===- BindProgramInterface.cpp - state/io layout of the entry functions --===//
//
// The runtime sees a program as three byte buffers (abi.h). This pass decides
// where every variable, input, output and scalar lives in them and rewrites
// each entry function to take the buffers, so that nothing after it needs to
// know about variables or named inputs.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "OFlow/OFlowOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <map>

namespace oflow {
#define GEN_PASS_DEF_BINDPROGRAMINTERFACE
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {

int64_t elementBytes(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8); // i1: one byte
}

static int64_t alignUp(int64_t v) { return llvm::alignTo(v, kBufferAlignment); }

static int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

namespace {

/// What the consumers of an integer input accept: values in [lo, hi), plus
/// a loss's ignore_index.
struct IntRange {
  int64_t lo = 0, hi = 0;
  std::optional<int64_t> ignore;
};

/// One slot of the io buffer, shared by every entry that uses the name.
struct IoSlot {
  std::string kind; // input | output | grad | scalar
  std::string name;
  RankedTensorType type;
  int64_t offset = 0;
  std::optional<IntRange> intRange;
  /// On a mesh: the layout of the value (type is its local piece).
  mlir::oflow::NdSbpAttr sbp;
  /// A gradient returned flat (oflow-flatten-state): its parameter's shape.
  DenseI64ArrayAttr view;
};

class IoLayout {
public:
  IoSlot &slot(StringRef kind, StringRef name, RankedTensorType type) {
    std::string key = (kind + ":" + name).str();
    auto [it, inserted] = slots.insert({key, IoSlot{}});
    if (inserted) {
      it->second = IoSlot{kind.str(), name.str(), type, alignUp(bytes)};
      bytes = it->second.offset + tensorBytes(type);
    }
    return it->second;
  }
  /// The slot of `name` for `func`'s argument or result of `type`: every
  /// entry that uses a name shares its slot, so the types must agree.
  FailureOr<IoSlot *> claim(func::FuncOp func, StringRef kind, StringRef name,
                            RankedTensorType type) {
    if (type.getElementType().isBF16()) {
      func.emitOpError("'") << name
                            << "' is bfloat16, which the executable's data "
                               "files (.npy, .pb) cannot hold yet; cast it to "
                               "float32 in the model";
      return failure();
    }
    IoSlot &s = slot(kind, name, type);
    if (s.type != type) {
      func.emitOpError("io slot '")
          << name << "' is used as " << s.type << " and " << type;
      return failure();
    }
    return &s;
  }
  int64_t size() const { return alignUp(bytes); }
  llvm::MapVector<std::string, IoSlot, std::map<std::string, unsigned>> slots;

private:
  int64_t bytes = 0;
};

/// Narrows `range` to what `value`'s consumers accept, looking through ops
/// that only move elements (reshape, transpose, ...): gather rows, class
/// labels.
void collectIntRange(Value value, std::optional<IntRange> &range) {
  auto narrow = [&](int64_t hi, std::optional<int64_t> ignore) {
    if (!range)
      range = IntRange{0, hi, ignore};
    range->hi = std::min(range->hi, hi);
    if (ignore)
      range->ignore = ignore;
  };
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto gather = dyn_cast<mlir::oflow::GatherOp>(user)) {
      if (use.getOperandNumber() == 1)
        narrow(cast<RankedTensorType>(gather.getData().getType())
                   .getDimSize(gather.getAxis()),
               std::nullopt);
    } else if (auto sce = dyn_cast<mlir::oflow::SoftmaxCrossEntropyOp>(user)) {
      if (use.getOperandNumber() == 1)
        narrow(cast<RankedTensorType>(sce.getLogits().getType()).getDimSize(1),
               sce.getIgnoreIndex());
    } else if (auto nll = dyn_cast<mlir::oflow::NllLossOp>(user)) {
      if (use.getOperandNumber() == 1)
        narrow(cast<RankedTensorType>(nll.getInput().getType()).getDimSize(1),
               nll.getIgnoreIndex());
    } else if (isa<mlir::oflow::ReshapeOp, mlir::oflow::FlattenOp,
                   mlir::oflow::TransposeOp, mlir::oflow::SqueezeOp,
                   mlir::oflow::UnsqueezeOp, mlir::oflow::ExpandOp,
                   mlir::oflow::SliceOp>(user)) {
      collectIntRange(user->getResult(0), range);
    }
  }
}

struct BindProgramInterfacePass
    : impl::BindProgramInterfaceBase<BindProgramInterfacePass> {
  void runOnOperation() override;
  LogicalResult bindEntry(func::FuncOp func, IoLayout &io,
                          const llvm::StringMap<int64_t> &stateOffsets);
};

} // namespace

/// `memref.view %buffer[offset]` as a `type`-shaped memref.
static Value viewOf(OpBuilder &b, Location loc, Value buffer, int64_t offset,
                    RankedTensorType type) {
  Value shift = arith::ConstantIndexOp::create(b, loc, offset);
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return memref::ViewOp::create(b, loc, memrefType, buffer, shift, ValueRange{});
}

LogicalResult BindProgramInterfacePass::bindEntry(
    func::FuncOp func, IoLayout &io,
    const llvm::StringMap<int64_t> &stateOffsets) {
  MLIRContext *ctx = func.getContext();
  Block &body = func.getBody().front();
  auto bytes = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
  Location loc = func.getLoc();
  unsigned numOld = body.getNumArguments();
  // state, io, arena (the arena is used by the memory planner).
  if (failed(func.insertArguments({numOld, numOld, numOld}, {bytes, bytes, bytes},
                                  {DictionaryAttr(), DictionaryAttr(),
                                   DictionaryAttr()},
                                  {loc, loc, loc})))
    return failure();
  Value state = body.getArgument(numOld), ioBuf = body.getArgument(numOld + 1);
  OpBuilder b = OpBuilder::atBlockBegin(&body);

  // Arguments -> read-only tensors of io views.
  for (unsigned i = 0; i < numOld; ++i) {
    BlockArgument arg = body.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitOpError("entry argument ") << i << " is not a tensor";
    StringRef kind = "input";
    auto name = func.getArgAttrOfType<StringAttr>(i, "oflow.scalar");
    if (name)
      kind = "scalar";
    else
      name = func.getArgAttrOfType<StringAttr>(i, "oflow.name");
    if (!name)
      return func.emitOpError("entry argument ")
             << i << " has neither `oflow.name` nor `oflow.scalar`";
    FailureOr<IoSlot *> claimed = io.claim(func, kind, name.getValue(), type);
    if (failed(claimed))
      return failure();
    IoSlot &slot = **claimed;
    slot.sbp = func.getArgAttrOfType<mlir::oflow::NdSbpAttr>(i, "oflow.sbp");
    if (kind == "input" && type.getElementType().isInteger() &&
        !type.getElementType().isInteger(1))
      collectIntRange(arg, slot.intRange);
    Value view = viewOf(b, loc, ioBuf, slot.offset, type);
    Value tensor = bufferization::ToTensorOp::create(b, loc, type, view,
                                                     /*restrict=*/true,
                                                     /*writable=*/false);
    arg.replaceAllUsesWith(tensor);
  }

  // Variable reads -> one read-only tensor per variable (a second
  // `to_tensor restrict` of the same buffer would be invalid).
  llvm::StringMap<Value> reads;
  SmallVector<Operation *> toErase;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (auto read = dyn_cast<mlir::oflow::ReadVariableOp>(op)) {
      StringRef name = read.getVariable();
      Value &tensor = reads[name];
      if (!tensor) {
        auto type = cast<RankedTensorType>(read.getType());
        Value view = viewOf(b, read.getLoc(), state, stateOffsets.lookup(name),
                            type);
        tensor = bufferization::ToTensorOp::create(b, read.getLoc(), type, view,
                                                   /*restrict=*/true,
                                                   /*writable=*/false);
      }
      read.replaceAllUsesWith(tensor);
      toErase.push_back(read);
    } else if (auto write = dyn_cast<mlir::oflow::WriteVariableOp>(op)) {
      OpBuilder wb(write);
      auto type = cast<RankedTensorType>(write.getValue().getType());
      Value view = viewOf(wb, write.getLoc(), state,
                          stateOffsets.lookup(write.getVariable()), type);
      auto store = bufferization::MaterializeInDestinationOp::create(
          wb, write.getLoc(), write.getValue(), view);
      store.setWritable(true);
      toErase.push_back(write);
    } else if (isa<mlir::oflow::GradientOp>(op)) {
      return op->emitOpError(
          "is left in an entry function: run the optimizer pass "
          "(oflow-build-train-step) before binding the program interface");
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (Operation *op : toErase)
    op->erase();

  // Results -> materialized into io views.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return func.emitOpError("entry result ") << i << " is not a tensor";
    StringRef kind = "output";
    auto name = func.getResultAttrOfType<StringAttr>(i, "oflow.scalar");
    if (name)
      kind = "scalar";
    else if ((name = func.getResultAttrOfType<StringAttr>(i, "oflow.grad_of")))
      kind = "grad";
    else
      name = func.getResultAttrOfType<StringAttr>(i, "oflow.name");
    if (!name)
      return func.emitOpError("entry result ")
             << i << " has no `oflow.name`, `oflow.scalar` or `oflow.grad_of`";
    FailureOr<IoSlot *> slot = io.claim(func, kind, name.getValue(), type);
    if (failed(slot))
      return failure();
    (*slot)->sbp =
        func.getResultAttrOfType<mlir::oflow::NdSbpAttr>(i, "oflow.sbp");
    (*slot)->view = func.getResultAttrOfType<DenseI64ArrayAttr>(i, "oflow.view");
    Value view = viewOf(b, loc, ioBuf, (*slot)->offset, type);
    auto store =
        bufferization::MaterializeInDestinationOp::create(b, loc, value, view);
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  ret.erase();

  llvm::BitVector oldArgs(body.getNumArguments());
  oldArgs.set(0, numOld);
  if (failed(func.eraseArguments(oldArgs)))
    return failure();
  llvm::BitVector results(func.getNumResults(), true);
  if (failed(func.eraseResults(results)))
    return failure();
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  return success();
}

void BindProgramInterfacePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);

  llvm::StringMap<int64_t> stateOffsets;
  int64_t stateBytes = 0;
  for (auto var : module.getOps<mlir::oflow::VariableOp>()) {
    auto type = cast<RankedTensorType>(var.getType());
    // A piece smaller than the alignment is aligned to the power of two
    // that holds it: every vector access within it stays aligned, and a
    // split over 1024 devices (ZeRO-3's few elements per bias) is not
    // mostly padding.
    int64_t bytes = tensorBytes(type);
    int64_t align = std::min<int64_t>(
        kBufferAlignment,
        std::max<int64_t>(llvm::PowerOf2Ceil(std::max<int64_t>(bytes, 1)),
                          elementBytes(type.getElementType())));
    int64_t offset = llvm::alignTo(stateBytes, align);
    stateOffsets[var.getSymName()] = offset;
    var->setAttr(kStateOffsetAttr, b.getI64IntegerAttr(offset));
    stateBytes = offset + tensorBytes(type);
  }

  IoLayout io;
  // The checking-mode flag is read by the memory planner's poisoning code.
  io.slot("scalar", "poison",
          RankedTensorType::get({}, IntegerType::get(ctx, 8)));
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (!func->hasAttr(kEntryAttr))
      continue;
    if (failed(bindEntry(func, io, stateOffsets)))
      return signalPassFailure();
  }

  auto mesh = module->getAttrOfType<mlir::oflow::MeshAttr>("oflow.mesh");
  if (mesh && mesh.getNumDevices() == 1)
    mesh = nullptr;
  SmallVector<Attribute> slots;
  for (auto &[key, slot] : io.slots) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("kind", b.getStringAttr(slot.kind)),
        b.getNamedAttr("name", b.getStringAttr(slot.name)),
        b.getNamedAttr("type", TypeAttr::get(slot.type)),
        b.getNamedAttr("offset", b.getI64IntegerAttr(slot.offset))};
    if (slot.sbp && mesh) {
      fields.push_back(b.getNamedAttr("sbp", slot.sbp));
      fields.push_back(b.getNamedAttr(
          "global_type",
          TypeAttr::get(RankedTensorType::get(
              mlir::oflow::getGlobalShape(mesh, slot.sbp, slot.type.getShape()),
              slot.type.getElementType()))));
    }
    if (slot.view)
      fields.push_back(b.getNamedAttr("view", slot.view));
    if (slot.intRange) {
      fields.push_back(b.getNamedAttr(
          "int_range",
          b.getDenseI64ArrayAttr({slot.intRange->lo, slot.intRange->hi})));
      if (slot.intRange->ignore)
        fields.push_back(b.getNamedAttr(
            "ignore_index", b.getI64IntegerAttr(*slot.intRange->ignore)));
    }
    slots.push_back(b.getDictionaryAttr(fields));
  }
  module->setAttr(kIoLayoutAttr, b.getArrayAttr(slots));
  module->setAttr(kIoBytesAttr, b.getI64IntegerAttr(io.size()));
  module->setAttr(kStateBytesAttr, b.getI64IntegerAttr(alignUp(stateBytes)));
}

} // namespace oflow
