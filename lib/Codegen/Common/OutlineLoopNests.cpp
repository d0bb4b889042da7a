//===- OutlineLoopNests.cpp - the entries' loop nests in small functions --===//
//
// See Passes.td (oflow-outline-loop-nests): compile time linear in the
// number of loop nests, since every later pass and LLVM see small functions.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "oflow/Codegen/FunctionDedup.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace oflow {
#define GEN_PASS_DEF_OUTLINELOOPNESTS
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// A unit of work: a loop nest, or (host code of the CUDA target) a kernel
/// launch or a runtime call with its argument setup.
bool isNest(Operation *op) {
  return isa<scf::ForOp, scf::ParallelOp, scf::IfOp, scf::WhileOp,
             scf::ExecuteRegionOp, gpu::LaunchFuncOp, func::CallOp>(op);
}

/// Side-effect-free and region-free: stays in the entry (where the next
/// groups may need it too) and is recomputed in every function using it.
bool isPureLeaf(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

class Outliner {
public:
  Outliner(func::FuncOp entry, SymbolTable &symbols)
      : entry(entry), symbols(symbols), after(entry) {}

  /// Whether `v` can be recomputed from constants and the entry's arguments
  /// by pure leaves.
  bool rematerializable(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    memo[v] = false;
    bool ok = isa<BlockArgument>(v);
    if (!ok) {
      Operation *def = v.getDefiningOp();
      ok = isPureLeaf(def) &&
           llvm::all_of(def->getOperands(), [&](Value o) { return rematerializable(o); });
    }
    return memo[v] = ok;
  }

  /// Moves `group` (entry ops in order; side effects, regions, or pure
  /// leaves depending on them) into a new function called where the last
  /// one was.
  void outline(ArrayRef<Operation *> group) {
    llvm::SmallPtrSet<Operation *, 32> inGroup(group.begin(), group.end());
    auto fromGroup = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && inGroup.contains(def);
    };
    llvm::SetVector<Value> used;
    for (Operation *op : group) {
      for (Value v : op->getOperands())
        used.insert(v);
      getUsedValuesDefinedAbove(op->getRegions(), used);
    }
    llvm::SetVector<Operation *> recompute;
    llvm::SetVector<Value> args;
    for (Value v : used) {
      if (fromGroup(v))
        continue;
      if (rematerializable(v))
        collect(v, recompute, args);
      else
        args.insert(v);
    }
    SmallVector<Value> results;
    for (Operation *op : group)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              return !inGroup.contains(entry.getBody().front().findAncestorOpInBlock(*user));
            }))
          results.push_back(r);

    OpBuilder b(entry);
    b.setInsertionPointAfter(after);
    SmallVector<Type> argTypes, resultTypes;
    for (Value a : args)
      argTypes.push_back(a.getType());
    for (Value r : results)
      resultTypes.push_back(r.getType());
    auto fn = func::FuncOp::create(b, group.front()->getLoc(),
                                   (entry.getName() + "_nest" + Twine(count++)).str(),
                                   b.getFunctionType(argTypes, resultTypes));
    fn.setPrivate();
    symbols.insert(fn);
    after = fn;
    Block *body = fn.addEntryBlock();
    IRMapping map;
    for (auto [a, barg] : llvm::zip(args, body->getArguments()))
      map.map(a, barg);
    OpBuilder inner = OpBuilder::atBlockBegin(body);
    for (Operation *op : recompute)
      inner.clone(*op, map);
    for (Operation *op : group)
      inner.clone(*op, map);
    SmallVector<Value> returned;
    for (Value r : results)
      returned.push_back(map.lookup(r));
    func::ReturnOp::create(inner, group.back()->getLoc(), returned);

    OpBuilder at(group.back());
    at.setInsertionPointAfter(group.back());
    auto call = func::CallOp::create(at, group.back()->getLoc(), fn, args.getArrayRef());
    call.setNoInline(true);
    outlined.push_back({fn, call});
    for (auto [r, c] : llvm::zip(results, call.getResults()))
      r.replaceAllUsesWith(c);
    for (Operation *op : llvm::reverse(group))
      op->erase();
  }

private:
  /// The pure leaves computing `v` (operands first) and the entry
  /// arguments they read.
  void collect(Value v, llvm::SetVector<Operation *> &ops, llvm::SetVector<Value> &args) {
    if (isa<BlockArgument>(v)) {
      args.insert(v);
      return;
    }
    Operation *def = v.getDefiningOp();
    if (ops.contains(def))
      return;
    for (Value o : def->getOperands())
      collect(o, ops, args);
    ops.insert(def);
  }

public:
  /// The functions made, each with its one call.
  SmallVector<std::pair<func::FuncOp, func::CallOp>> outlined;

private:
  func::FuncOp entry;
  SymbolTable &symbols;
  Operation *after;
  unsigned count = 0;
  DenseMap<Value, bool> memo;
};

/// At most this many offsets become parameters of one function.
constexpr unsigned kMaxOffsetParams = 256;

/// Makes each outlined function's view offsets parameters its call passes,
/// then lets calls of functions with equal text share the first one: a
/// deep model's layers (and the train and gradient entries, which run the
/// same forward and backward nests) repeat their nests with their buffers
/// elsewhere, and LLVM's time grows with the code it is given.
void dedupNests(ArrayRef<std::pair<func::FuncOp, func::CallOp>> outlined,
                SymbolTable &symbols) {
  llvm::StringMap<func::FuncOp> firstOf;
  for (auto [fn, call] : outlined) {
    if (auto offsets = parameterizeViewOffsets(fn, kMaxOffsetParams)) {
      OpBuilder b(call);
      for (int64_t offset : *offsets)
        call.getOperandsMutable().append(
            arith::ConstantIndexOp::create(b, call.getLoc(), offset).getResult());
    }
    auto [first, inserted] = firstOf.try_emplace(functionBodyKey(fn), fn);
    if (inserted)
      continue;
    call.setCallee(first->second.getName());
    symbols.erase(fn);
  }
}

struct OutlineLoopNestsPass : impl::OutlineLoopNestsBase<OutlineLoopNestsPass> {
  using OutlineLoopNestsBase::OutlineLoopNestsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::FuncOp, func::CallOp>> outlined;
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : functions) {
      if (fn.isExternal() || !fn.getBody().hasOneBlock())
        continue;
      Block &block = fn.getBody().front();
      if (static_cast<unsigned>(llvm::count_if(block, [](Operation &op) {
            return isNest(&op);
          })) < minNests)
        continue;
      // Groups of consecutive ops holding up to `nests-per-function` nests
      // (a group ends where the next would start).
      SmallVector<SmallVector<Operation *>> groups(1);
      llvm::SmallPtrSet<Operation *, 32> grouped;
      unsigned nests = 0;
      for (Operation &op : block.without_terminator()) {
        bool dependsOnGroup = llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && grouped.contains(def);
        });
        if (isPureLeaf(&op) && !dependsOnGroup)
          continue;
        if (isNest(&op) && nests == nestsPerFunction) {
          groups.emplace_back();
          grouped.clear();
          nests = 0;
        }
        groups.back().push_back(&op);
        grouped.insert(&op);
        nests += isNest(&op);
      }
      Outliner outliner(fn, symbols);
      for (ArrayRef<Operation *> group : groups)
        if (!group.empty())
          outliner.outline(group);
      outlined.append(outliner.outlined);
    }
    if (dedup)
      dedupNests(outlined, symbols);
  }
};

} // namespace
} // namespace oflow
