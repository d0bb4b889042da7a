//===- StoreResultsInPlace.cpp - compute stored results where they live ---===//
//
// The entry functions store what they compute into the program's buffers
// with `bufferization.materialize_in_destination %r in writable %view`: the
// optimizer's new parameters and moments into state, gradients and outputs
// into io. The op that computes %r writes into its own init, a
// `tensor.empty`, so bufferization gives it an arena buffer and the store is
// a copy: for AdamW three copies of every parameter per step, each a kernel
// launch on the GPU plus the arena's bytes, whose reuse chains the copies of
// different parameters one after another.
//
// This pass makes the view itself the init: it reads the view through its
// one `to_tensor` (made writable, or made when the view has none) and hands
// that tensor to the producer as the destination it overwrites, and moves
// the producer after the other readers of the old contents where its uses
// allow. One-shot bufferization then writes in place where nothing still
// reads the old contents afterwards, and otherwise falls back to a buffer of
// its own, as before. Only views that no other view of the same buffer overlaps are
// rewritten: `restrict` promises the tensor is the only way to those bytes.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace oflow {
#define GEN_PASS_DEF_STORERESULTSINPLACE
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// The bytes a `memref.view` of a function argument covers.
struct ViewBytes {
  unsigned argument;
  int64_t begin, end;
};

std::optional<ViewBytes> viewBytes(memref::ViewOp view) {
  auto arg = dyn_cast<BlockArgument>(view.getSource());
  auto type = view.getType();
  APInt shift;
  if (!arg || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
    return std::nullopt;
  int64_t bytes = type.getNumElements() *
                  llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  int64_t begin = shift.getSExtValue();
  return ViewBytes{arg.getArgNumber(), begin, begin + bytes};
}

/// The order of the ops of blocks this pass moves ops in. MLIR's own order
/// index has room for a couple of insertions between two ops, after which
/// `isBeforeInBlock` renumbers the whole block: once per store here, time
/// quadratic in the entry's length (8 s of a 7B model's compile). These
/// positions leave 2^20 between neighbours, and an op moved or made gets the
/// midpoint of its new neighbours'.
class BlockOrder {
public:
  bool before(Operation *a, Operation *b) { return index(a) < index(b); }

  /// Records `op`'s new place after a move or its creation.
  void placed(Operation *op) {
    Operation *prev = op->getPrevNode(), *next = op->getNextNode();
    int64_t lo = prev ? index(prev) : 0;
    int64_t hi = next ? index(next) : lo + 2 * kSpacing;
    if (hi - lo < 2) {
      renumber(op->getBlock());
      return;
    }
    positions[op] = lo + (hi - lo) / 2;
  }

private:
  static constexpr int64_t kSpacing = int64_t(1) << 20;

  int64_t index(Operation *op) {
    auto it = positions.find(op);
    if (it != positions.end())
      return it->second;
    renumber(op->getBlock());
    return positions.lookup(op);
  }

  void renumber(Block *block) {
    int64_t i = 0;
    for (Operation &op : *block)
      positions[&op] = ++i * kSpacing;
  }

  DenseMap<Operation *, int64_t> positions;
};

/// The calls that read `view` through casts of it (a library call's
/// operand: a convolution reads its weight straight from the state view,
/// bufferization having folded to_buffer(to_tensor(view)) to the view), or
/// none if the view has another kind of use besides `store` and to_tensor
/// ops. One-shot bufferization does not see these reads.
std::optional<SmallVector<Operation *>> callReaders(memref::ViewOp view,
                                                   Operation *store) {
  SmallVector<Operation *> calls;
  SmallVector<Value> worklist{view.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == store || isa<bufferization::ToTensorOp>(user))
        continue;
      if (auto cast = dyn_cast<memref::CastOp>(user))
        worklist.push_back(cast.getResult());
      else if (isa<func::CallOp>(user))
        calls.push_back(user);
      else
        return std::nullopt;
    }
  }
  return calls;
}

/// The last op of `producer`'s block that reads `old` (the destination's
/// contents before it) or is one of `calls`, other than the producer.
Operation *lastReader(Operation *producer, Value old, ArrayRef<Operation *> calls,
                      BlockOrder &order) {
  Block *block = producer->getBlock();
  Operation *last = nullptr;
  auto consider = [&](Operation *user) {
    Operation *op = block->findAncestorOpInBlock(*user);
    if (!op || op == producer)
      return;
    if (!last || order.before(last, op))
      last = op;
  };
  if (old)
    for (Operation *user : old.getUsers())
      consider(user);
  for (Operation *call : calls)
    consider(call);
  return last;
}

/// Whether `producer` is after `last`, or can move right after it: every
/// use of its results comes after `last`.
bool canFollow(Operation *producer, Operation *last, BlockOrder &order) {
  if (!last || order.before(last, producer))
    return true;
  Block *block = producer->getBlock();
  for (Operation *user : producer->getUsers()) {
    Operation *op = block->findAncestorOpInBlock(*user);
    if (!op || !order.before(last, op))
      return false;
  }
  return true;
}

/// Moves `producer` right after `last` where it can (canFollow). Elementwise
/// fusion recomputes a new moment inside the parameter update that also
/// stores it, from the old moment: the moment's update must then come after
/// that read to be done in place; a weight's update after the convolutions
/// that read the weight straight from its view.
void sinkPast(Operation *producer, Operation *last, BlockOrder &order) {
  if (!last || order.before(last, producer) || !canFollow(producer, last, order))
    return;
  producer->moveAfter(last);
  order.placed(producer);
}

struct StoreResultsInPlacePass
    : impl::StoreResultsInPlaceBase<StoreResultsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Views by the bytes they cover; a view with no static extent could
    // cover anything, and then no view of that argument is rewritten.
    SmallVector<std::pair<memref::ViewOp, ViewBytes>> views;
    DenseSet<unsigned> unknownArgs;
    func.walk([&](memref::ViewOp view) {
      if (std::optional<ViewBytes> bytes = viewBytes(view))
        views.push_back({view, *bytes});
      else if (auto arg = dyn_cast<BlockArgument>(view.getSource()))
        unknownArgs.insert(arg.getArgNumber());
    });
    auto overlapped = [&](memref::ViewOp view, const ViewBytes &bytes) {
      if (unknownArgs.contains(bytes.argument))
        return true;
      return llvm::any_of(views, [&](auto &other) {
        return other.first != view && other.second.argument == bytes.argument &&
               other.second.begin < bytes.end && bytes.begin < other.second.end;
      });
    };

    BlockOrder order;
    SmallVector<bufferization::MaterializeInDestinationOp> stores;
    func.walk([&](bufferization::MaterializeInDestinationOp store) {
      stores.push_back(store);
    });
    for (auto store : stores) {
      auto view = store.getDest().getDefiningOp<memref::ViewOp>();
      if (!store.getWritable() || !view)
        continue;
      std::optional<ViewBytes> bytes = viewBytes(view);
      if (!bytes || overlapped(view, *bytes))
        continue;
      // The view's only other users may be one to_tensor (its old value)
      // and calls that read it (callReaders).
      bufferization::ToTensorOp reader;
      bool plain = true;
      for (Operation *user : view->getUsers()) {
        auto toTensor = dyn_cast<bufferization::ToTensorOp>(user);
        if (!toTensor)
          continue;
        if (reader || !toTensor.getRestrict()) {
          plain = false;
          break;
        }
        reader = toTensor;
      }
      std::optional<SmallVector<Operation *>> calls = callReaders(view, store);
      if (!plain || !calls)
        continue;
      // The producer must overwrite its destination without reading it.
      auto result = dyn_cast<OpResult>(store.getSource());
      auto producer =
          result ? dyn_cast<linalg::LinalgOp>(result.getOwner()) : nullptr;
      if (!producer || !producer.hasPureTensorSemantics())
        continue;
      OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
      if (producer.payloadUsesValueFromOperand(init) ||
          init->get().getType() != store.getSource().getType())
        continue;
      // Bufferization sees the tensor readers and falls back to a copy
      // where one still needs the old contents; the calls' reads it does
      // not see, so the producer must come after them all.
      Operation *last = lastReader(producer, reader ? reader.getResult() : Value(),
                                   *calls, order);
      // A call outside the producer's block (it in a region, the call
      // after it) could not be ordered here: left to bufferization's copy.
      Block *block = producer->getBlock();
      if (!calls->empty() &&
          (!canFollow(producer, last, order) ||
           llvm::any_of(*calls, [&](Operation *call) {
             return !block->findAncestorOpInBlock(*call);
           })))
        continue;
      if (reader) {
        // It must dominate the producer: it is read before, or it is not
        // the value the function began with.
        Operation *user =
            reader->getBlock()->findAncestorOpInBlock(*producer.getOperation());
        if (!user || !order.before(reader, user))
          continue;
        reader.setWritable(true);
      } else {
        // The view is often made next to the store: move it (and its byte
        // shift, a constant) up to the producer.
        Operation *user =
            view->getBlock()->findAncestorOpInBlock(*producer.getOperation());
        if (!user)
          continue;
        if (order.before(user, view)) {
          Operation *shift = view.getByteShift().getDefiningOp();
          if (shift->getBlock() == view->getBlock() && order.before(user, shift)) {
            shift->moveBefore(user);
            order.placed(shift);
          }
          view->moveBefore(user);
          order.placed(view);
        }
        OpBuilder b(producer);
        reader = bufferization::ToTensorOp::create(
            b, store.getLoc(), store.getSource().getType(), view,
            /*restrict=*/true, /*writable=*/true);
        order.placed(reader);
      }
      init->set(reader.getResult());
      // `last` stands: the destination's new to_tensor is read by the
      // producer alone.
      sinkPast(producer, last, order);
    }
  }
};

} // namespace
} // namespace oflow
