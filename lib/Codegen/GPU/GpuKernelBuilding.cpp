//===- GpuKernelBuilding.cpp - pieces shared by the kernel strategies -----===//
//
// The launch every strategy creates, and the index arithmetic and reduction
// combination they build their kernels with (GpuKernels.h).
//
//===----------------------------------------------------------------------===//
#include "GpuKernels.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace oflow {

constexpr StringLiteral kKernelModule = "oflow_kernels";

gpu::LaunchOp createKernelLaunch(OpBuilder &b, Location loc, StringRef name,
                                 Value grid, Value block, TypeRange workgroup) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  MLIRContext *ctx = b.getContext();
  auto launch = gpu::LaunchOp::create(
      b, loc, grid, one, one, block, one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, workgroup,
      /*privateAttributions=*/{}, nullptr, nullptr, nullptr,
      FlatSymbolRefAttr::get(ctx, kKernelModule), FlatSymbolRefAttr::get(ctx, name));
  OpBuilder inner = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(inner, loc);
  return launch;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> extents) {
  SmallVector<Value> out(extents.size());
  Value rest = linear;
  for (int i = static_cast<int>(extents.size()) - 1; i >= 0; --i) {
    if (extents[i] == 1) {
      out[i] = arith::ConstantIndexOp::create(b, loc, 0);
      continue;
    }
    if (i == 0) {
      out[i] = rest;
      break;
    }
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[i]);
    out[i] = arith::RemUIOp::create(b, loc, rest, extent);
    rest = arith::DivUIOp::create(b, loc, rest, extent);
  }
  return out;
}

SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      out.push_back(ivs[d.getPosition()]);
      continue;
    }
    out.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), ivs));
  }
  return out;
}

SmallVector<Value> stridedLoops(OpBuilder &b, Location loc, Value first, int64_t count,
                                int64_t stride, ValueRange inits,
                                function_ref<StridedStep(Value index)> load) {
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto emitLoop = [&](Value lb, int64_t ub, int64_t unroll, ValueRange iters) {
    Value upper = constant(ub);
    Value step = constant(unroll * stride);
    auto loop = scf::ForOp::create(b, loc, lb, upper, step, iters);
    if (iters.empty()) // the builder added an empty yield
      loop.getBody()->getTerminator()->erase();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<StridedStep> steps;
    for (int64_t u = 0; u < unroll; ++u) {
      Value index = loop.getInductionVar();
      if (u)
        index = arith::AddIOp::create(b, loc, index, constant(u * stride));
      steps.push_back(load(index));
    }
    SmallVector<Value> carried(loop.getRegionIterArgs());
    for (StridedStep &step : steps)
      carried = step(carried);
    scf::YieldOp::create(b, loc, carried);
    return SmallVector<Value>(loop.getResults());
  };
  int64_t mainEnd = count / (kUnroll * stride) * (kUnroll * stride);
  SmallVector<Value> results(inits);
  if (mainEnd > 0)
    results = emitLoop(first, mainEnd, kUnroll, results);
  if (mainEnd < count) {
    Value lb = mainEnd ? arith::AddIOp::create(b, loc, first, constant(mainEnd)) : first;
    results = emitLoop(lb, count, 1, results);
  }
  return results;
}

std::optional<SmallVector<Value>> bodyReads(linalg::GenericOp op) {
  SmallVector<Value> reads;
  WalkResult walk = op.getRegion().walk([&](Operation *inner) {
    if (isMemoryEffectFree(inner))
      return WalkResult::advance();
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      reads.push_back(load.getMemRef());
      return WalkResult::advance();
    }
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return reads;
}

Operation *floatCombiner(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  BlockArgument acc = op.getRegionOutputArgs()[0];
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1 || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != combiners[0] ||
      !arith::getNeutralElement(combiners[0]))
    return nullptr;
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiners[0]))
    return nullptr;
  return combiners[0];
}

Value combine(OpBuilder &b, Operation *combiner, unsigned accPosition, Value acc,
              Value value) {
  Operation *c = b.clone(*combiner);
  c->setOperand(accPosition, acc);
  c->setOperand(1 - accPosition, value);
  return c->getResult(0);
}

} // namespace oflow
