//===- MergePointwise.cpp - runs of same-shape elementwise ops -> one op --===//
//
// On the GPU every elementwise linalg op becomes a kernel launch. Elementwise
// fusion on tensors joins producers into consumers, but not ops whose
// results all stay live: an optimizer's moment, second moment and parameter
// updates write three buffers over the same elements, three launches per
// parameter. Here consecutive all-parallel generics over the same loops are
// merged into one generic when every thread can do all of them at its point
// in program order (see Passes.td); a value a later member reads from an
// earlier member's output at the same point is forwarded, not re-read.
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace oflow {
#define GEN_PASS_DEF_MERGEPOINTWISE
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Whether `map`'s results are all of its loops, each once.
bool isPermutationOfLoops(AffineMap map) {
  return map.getNumResults() == map.getNumDims() && map.isPermutation();
}

bool isPointwise(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
           return isPermutationOfLoops(op.getMatchingIndexingMap(&out));
         });
}

struct Access {
  Value memref;
  AffineMap map;
  bool write;
  BufferBytes bytes;
};

/// A run of pointwise generics over the same loops.
class Run {
public:
  explicit Run(linalg::GenericOp first) : ranges(first.getStaticLoopRanges()) {}

  bool tryAdd(linalg::GenericOp op) {
    if (!isPointwise(op) || op.getStaticLoopRanges() != ArrayRef<int64_t>(ranges))
      return false;
    SmallVector<Access> mine;
    // What the body reads at computed indices: anywhere (a null map).
    std::optional<SmallVector<Value>> reads = bodyReads(op);
    if (!reads)
      return false;
    for (Value read : *reads)
      mine.push_back({read, AffineMap(), false, bufferBytes(read)});
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      bool init = op.isDpsInit(&operand);
      if (!init || op.payloadUsesValueFromOperand(&operand))
        mine.push_back({operand.get(), map, false, bufferBytes(operand.get())});
      if (init)
        mine.push_back({operand.get(), map, true, bufferBytes(operand.get())});
    }
    for (const Access &a : mine)
      for (const Access &b : accesses)
        if (conflicts(a, b))
          return false;
    members.push_back(op);
    llvm::append_range(accesses, mine);
    return true;
  }

  SmallVector<int64_t> ranges;
  SmallVector<linalg::GenericOp> members;

private:
  /// Each thread runs every member at its own point: two accesses of
  /// overlapping bytes, one a write, must be the same element at the same
  /// point (same buffer, same map), and a buffer is written once.
  static bool conflicts(const Access &a, const Access &b) {
    if ((!a.write && !b.write) || !a.bytes.mayOverlap(b.bytes))
      return false;
    if (a.write && b.write)
      return true;
    return !a.map || !b.map || !sameBuffer(a.memref, b.memref) || a.map != b.map;
  }

  SmallVector<Access> accesses;
};

/// The members as one generic, placed at the last member.
void merge(Run &run) {
  linalg::GenericOp last = run.members.back();
  OpBuilder b(last);
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> inputs, outputs;
  SmallVector<AffineMap> inputMaps, outputMaps;
  // Which member writes what (for forwarding), and which input slot reads what.
  struct Written {
    Value memref;
    AffineMap map;
    unsigned member, result;
  };
  SmallVector<Written> written;
  auto findWritten = [&](Value memref, AffineMap map) -> const Written * {
    for (const Written &w : llvm::reverse(written))
      if (sameBuffer(w.memref, memref) && w.map == map)
        return &w;
    return nullptr;
  };
  // Per member, per operand: an input index, or forwarded (-1).
  SmallVector<SmallVector<int>> inputSlot(run.members.size());
  SmallVector<SmallVector<int>> outputSlot(run.members.size());
  for (auto [i, member] : llvm::enumerate(run.members)) {
    linalg::GenericOp op = member;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      if (isa<MemRefType>(in->get().getType()) && findWritten(in->get(), map)) {
        inputSlot[i].push_back(-1);
        continue;
      }
      int slot = -1;
      for (auto [j, v] : llvm::enumerate(inputs))
        if (v == in->get() && inputMaps[j] == map)
          slot = j;
      if (slot < 0) {
        slot = inputs.size();
        inputs.push_back(in->get());
        inputMaps.push_back(map);
      }
      inputSlot[i].push_back(slot);
    }
    for (auto [r, out] : llvm::enumerate(op.getDpsInitsMutable())) {
      outputSlot[i].push_back(outputs.size());
      outputs.push_back(out.get());
      outputMaps.push_back(op.getMatchingIndexingMap(&out));
      written.push_back({out.get(), outputMaps.back(), static_cast<unsigned>(i),
                         static_cast<unsigned>(r)});
    }
  }
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, outputMaps);
  SmallVector<utils::IteratorType> iterators(run.ranges.size(),
                                             utils::IteratorType::parallel);
  SmallVector<Location> locs = llvm::map_to_vector(
      run.members, [](linalg::GenericOp op) { return op->getLoc(); });
  Location loc = FusedLoc::get(ctx, locs);
  auto merged = linalg::GenericOp::create(b, loc, TypeRange{}, inputs, outputs, maps,
                                          iterators);
  Block *body = b.createBlock(&merged.getRegion());
  for (Value v : inputs)
    body->addArgument(getElementTypeOrSelf(v.getType()), loc);
  for (Value v : outputs)
    body->addArgument(getElementTypeOrSelf(v.getType()), loc);
  b.setInsertionPointToStart(body);
  // The value each output holds at this point so far: its block argument,
  // then what a member yielded into it.
  SmallVector<Value> current(body->getArguments().drop_front(inputs.size()));
  for (auto [i, member] : llvm::enumerate(run.members)) {
    linalg::GenericOp op = member;
    IRMapping mapping;
    Block *old = op.getBody();
    unsigned numIns = op.getNumDpsInputs();
    for (unsigned k = 0; k < numIns; ++k) {
      int slot = inputSlot[i][k];
      Value v;
      if (slot >= 0) {
        v = body->getArgument(slot);
      } else {
        OpOperand *in = op.getDpsInputOperand(k);
        const Written *w = findWritten(in->get(), op.getMatchingIndexingMap(in));
        // The latest writer before this member (members write in order).
        v = current[outputSlot[w->member][w->result]];
      }
      mapping.map(old->getArgument(k), v);
    }
    for (auto [r, out] : llvm::enumerate(op.getDpsInitsMutable())) {
      // An output that an earlier member wrote at this point holds that
      // value (the same element: same buffer, same map, or a conflict).
      Value v = current[outputSlot[i][r]];
      if (const Written *w = findWritten(out.get(), op.getMatchingIndexingMap(&out));
          w && w->member < i)
        v = current[outputSlot[w->member][w->result]];
      mapping.map(old->getArgument(numIns + r), v);
    }
    for (Operation &inner : old->without_terminator())
      b.clone(inner, mapping);
    for (auto [r, v] : llvm::enumerate(old->getTerminator()->getOperands()))
      current[outputSlot[i][r]] = mapping.lookupOrDefault(v);
  }
  linalg::YieldOp::create(b, loc, current);
  for (linalg::GenericOp op : run.members)
    op.erase();
}

struct MergePointwisePass : impl::MergePointwiseBase<MergePointwisePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    for (Operation *op = &body.front(); op;) {
      auto first = dyn_cast<linalg::GenericOp>(op);
      if (!first || !isPointwise(first)) {
        op = op->getNextNode();
        continue;
      }
      Run run(first);
      run.tryAdd(first);
      Operation *next = op->getNextNode();
      for (; next; next = next->getNextNode()) {
        if (isMemoryEffectFree(next))
          continue;
        auto candidate = dyn_cast<linalg::GenericOp>(next);
        if (!candidate || !run.tryAdd(candidate))
          break;
      }
      Operation *after = run.members.back()->getNextNode();
      if (run.members.size() > 1)
        merge(run);
      op = after;
    }
  }
};

} // namespace
} // namespace oflow
