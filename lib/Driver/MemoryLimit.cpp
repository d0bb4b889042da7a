//===- MemoryLimit.cpp - per-device memory against --memory-limit ---------===//
//
// A plan that cannot fit a device fails at compile time, naming what it
// needs and what dominates, instead of running out of memory on the
// cluster. Choosing a plan that fits (sharded state, recomputation) is the
// planner's next step; today the user acts on this message.
//
//===----------------------------------------------------------------------===//
#include "MemoryLimit.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Support/ByteSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>

using namespace mlir;

namespace oflow {

MemoryUse measureMemoryUse(ModuleOp module) {
  MemoryUse use;
  for (auto var : module.getOps<mlir::oflow::VariableOp>()) {
    auto type = cast<RankedTensorType>(var.getType());
    int64_t bytes = type.getNumElements() *
                    std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    switch (var.getRole()) {
    case mlir::oflow::VariableRole::param:
      use.params += bytes;
      break;
    case mlir::oflow::VariableRole::optimizer:
      use.optimizer += bytes;
      break;
    default:
      use.otherState += bytes;
      break;
    }
  }
  auto i64 = [&](StringRef name) {
    auto a = module->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  use.stateAligned = std::max(i64(kStateBytesAttr), use.params + use.optimizer + use.otherState);
  use.io = i64(kIoBytesAttr);
  for (auto fn : module.getOps<func::FuncOp>())
    if (auto plan = fn->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr)) {
      int64_t peak = plan.getAs<IntegerAttr>("peak").getInt();
      if (auto bytes = plan.getAs<IntegerAttr>("gathered_weights"))
        use.gatheredWeights = std::max(use.gatheredWeights, bytes.getInt());
      if (auto bytes = plan.getAs<IntegerAttr>("gathered_weights_peak"))
        use.gatheredWeightsPeak = std::max(use.gatheredWeightsPeak, bytes.getInt());
      if (use.arenaEntry.empty() || peak > use.arena) {
        auto entry = fn->getAttrOfType<StringAttr>(kEntryAttr);
        use.arenaEntry = entry ? entry.getValue().str() : fn.getSymName().str();
        use.arena = peak;
      }
    }
  return use;
}

MemoryLimit memoryLimitFor(const CompileOptions &options, const DeviceProfile &device) {
  if (options.memoryLimit > 0)
    return {options.memoryLimit, "--memory-limit"};
  constexpr double kReserve = 4.0 * (1 << 30);
  if (device.memoryBytes > 2 * kReserve || (device.gpu && device.memoryBytes > kReserve))
    return {static_cast<int64_t>(device.memoryBytes - kReserve),
            "the default: " + device.name + "'s " + formatByteSize(device.memoryBytes) +
                " less 4 GiB for the CUDA context, NCCL and library workspaces; set "
                "--memory-limit"};
  if (device.memoryBytes > 0) // a small device: all of it
    return {static_cast<int64_t>(device.memoryBytes),
            "the default: all of " + device.name + "'s " + formatByteSize(device.memoryBytes) +
                "; set --memory-limit"};
  return {0, ""};
}

std::string memoryLimitError(const MemoryUse &use, const MemoryLimit &limit,
                             bool sharded) {
  if (limit.bytes <= 0 || use.total() <= limit.bytes)
    return "";
  struct Part {
    const char *what;
    int64_t bytes;
  };
  Part parts[] = {{"parameters", use.params},
                  {"optimizer state", use.optimizer},
                  {"other variables", use.otherState},
                  {"inputs and outputs", use.io},
                  {"activations and temporaries", use.arena}};
  const Part &largest = *std::max_element(
      std::begin(parts), std::end(parts),
      [](const Part &a, const Part &b) { return a.bytes < b.bytes; });
  std::string text = "the plan needs " + formatByteSize(use.total()) +
                     " per device, over the memory limit of " +
                     formatByteSize(limit.bytes) + " (" + limit.source + "): ";
  bool first = true;
  for (const Part &p : parts) {
    if (!p.bytes)
      continue;
    text += (first ? "" : ", ") + std::string(p.what) + " " + formatByteSize(p.bytes);
    if (&p == &parts[4] && !use.arenaEntry.empty())
      text += " (the peak of entry '" + use.arenaEntry + "')";
    first = false;
  }
  text += "; the largest part is ";
  text += largest.what;
  if (largest.bytes == use.arena)
    text += ": use a smaller batch, or split it over more devices (--mesh)";
  else if (!sharded && (largest.bytes == use.params || largest.bytes == use.optimizer))
    text += ": split the variables over the mesh (--shard-state optimizer or all, "
            "or --sbp hints), or use more devices (--mesh)";
  else
    text += ": use more devices (--mesh) or a smaller batch";
  return text;
}

std::string describeMemoryLimit(const MemoryUse &use, const MemoryLimit &limit) {
  if (limit.bytes <= 0)
    return "memory_limit bytes=none\n";
  std::string error = memoryLimitError(use, limit, false);
  return "memory_limit bytes=" + std::to_string(limit.bytes) +
         " fits=" + (error.empty() ? "yes" : "no") + "\n" +
         (error.empty() ? "" : "# " + error + "\n");
}

} // namespace oflow
