//===- EmulateGpuLaunches.cpp - gpu.launch -> host scf.parallel -----------===//
//
// The CUDA pipeline turns every memory-touching op of an entry into a
// `gpu.launch`. Running those launches as host loops (and linking the CPU
// runtime) checks, on a machine without a GPU, everything the kernel
// formation decided: the index mapping, the bounds checks, which scalars were
// sunk into which kernel. Only the NVVM lowering and the CUDA runtime are left
// for a real GPU to check.
//
//===----------------------------------------------------------------------===//
#include "oflow/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace oflow {
#define GEN_PASS_DEF_EMULATEGPULAUNCHES
#include "oflow/Codegen/Passes.h.inc"
} // namespace oflow

using namespace mlir;

namespace oflow {
namespace {

/// Why `launch` cannot run as a host loop nest, or an empty string.
std::string unsupportedReason(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return "it is asynchronous";
  if (launch.hasClusterSize())
    return "it has a cluster size";
  if (launch.getDynamicSharedMemorySize())
    return "it uses dynamic shared memory";
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return "it has workgroup or private memory attributions";
  if (!launch.getBody().hasOneBlock())
    return "its body has more than one block";
  std::string reason;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::BarrierOp>(op) || op->getName().getStringRef().starts_with("gpu.shuffle") ||
        op->getName().getStringRef().starts_with("gpu.subgroup"))
      reason = "it uses " + op->getName().getStringRef().str() +
               ", which needs threads that run together";
  });
  return reason;
}

/// The value of dimension `dim` of `dims` (x, y, z).
Value component(const gpu::KernelDim3 &dims, gpu::Dimension dim) {
  switch (dim) {
  case gpu::Dimension::x: return dims.x;
  case gpu::Dimension::y: return dims.y;
  case gpu::Dimension::z: return dims.z;
  }
  return dims.x;
}

LogicalResult emulate(gpu::LaunchOp launch) {
  std::string reason = unsupportedReason(launch);
  if (!reason.empty())
    return launch.emitOpError("cannot be emulated on the host: ") << reason;
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(6, zero), steps(6, one);
  SmallVector<Value> ubs = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
  auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  ValueRange ivs = loop.getInductionVars();
  gpu::KernelDim3 blockIds{ivs[2], ivs[1], ivs[0]};
  gpu::KernelDim3 threadIds{ivs[5], ivs[4], ivs[3]};

  // The region's arguments, then the id/size ops its body may use instead.
  Block &body = launch.getBody().front();
  auto replaceDims = [](gpu::KernelDim3 from, gpu::KernelDim3 to) {
    from.x.replaceAllUsesWith(to.x);
    from.y.replaceAllUsesWith(to.y);
    from.z.replaceAllUsesWith(to.z);
  };
  replaceDims(launch.getBlockIds(), blockIds);
  replaceDims(launch.getThreadIds(), threadIds);
  replaceDims(launch.getGridSize(), grid);
  replaceDims(launch.getBlockSize(), block);
  SmallVector<Operation *> idOps;
  body.walk([&](Operation *op) {
    Value v;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      v = component(blockIds, id.getDimension());
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      v = component(threadIds, id.getDimension());
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      v = component(grid, dim.getDimension());
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      v = component(block, dim.getDimension());
    if (v) {
      op->getResult(0).replaceAllUsesWith(v);
      idOps.push_back(op);
    }
  });
  for (Operation *op : idOps)
    op->erase();

  // Everything but gpu.terminator moves into the loop, before its scf.reduce.
  Block *dst = loop.getBody();
  dst->getOperations().splice(std::prev(dst->end()), body.getOperations(),
                              body.begin(), std::prev(body.end()));
  launch.erase();
  return success();
}

struct EmulateGpuLaunchesPass
    : impl::EmulateGpuLaunchesBase<EmulateGpuLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace oflow
