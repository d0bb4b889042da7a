//===- PlanReport.cpp - --emit=plan: what is split where, what it costs ---===//
//
// Reads the program after SBP choice and boxing (global shapes, every value's
// nd-SBP, the collectives) and, after memory planning, the per-device
// buffers. Every number comes from the same cost model and planner the
// passes used. One record per line, `key=value` fields, so tests and scripts
// can read it as easily as people.
//
//===----------------------------------------------------------------------===//
#include "Pipelines.h"

#include "OFlow/OFlowOps.h"
#include "oflow/Codegen/KernelReport.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/Program.h"
#include "oflow/Sbp/BoxingPlanner.h"
#include "oflow/Sbp/CostModel.h"
#include "oflow/Sbp/SbpConversions.h"
#include "oflow/Support/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

/// Layouts without spaces, so that each record splits on blanks.
static std::string compact(const std::string &text) {
  std::string out;
  for (char c : text)
    if (c != ' ')
      out += c;
  return out;
}

using namespace mlir;
namespace of = mlir::oflow;
namespace sbp = ::oflow::sbp;

namespace oflow {

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

namespace {

/// Under --micro-batches, how many times a collective on another mesh axis
/// runs per step once oflow-unroll-micro-batches has made the step K lanes:
/// K for what runs in each lane (an operand split on the micro axis; a
/// gradient scattered as each lane makes it; a weight's all-gather chain
/// read by the lanes, which each gather their own copy), else once (the
/// gradients summed over the lanes, the update).
class MicroBatchRepeats {
public:
  MicroBatchRepeats(func::FuncOp fn, of::MeshAttr mesh) {
    microAxis = sbp::microBatchAxis(mesh);
    if (!microAxis)
      return;
    count = mesh.getShape()[*microAxis];
    auto inLane = [&](Operation *op) {
      return llvm::any_of(op->getOperands(), [&](Value v) { return splitOnMicro(v); });
    };
    fn.walk([&](Operation *op) {
      if (op->getNumResults() != 1 || inLane(op) ||
          llvm::none_of(op->getUsers(), inLane))
        return;
      for (Operation *link : of::getWeightGatherChain(op))
        gatheredPerLane.insert(link);
    });
  }

  int64_t times(Operation *collective, Value input) const {
    if (!microAxis || of::getBoxingMeshAxis(collective) == microAxis)
      return 1;
    bool perLane = splitOnMicro(input) || gatheredPerLane.contains(collective) ||
                   sbp::scattersEachMicroBatch(collective, *microAxis);
    return perLane ? count : 1;
  }

private:
  bool splitOnMicro(Value v) const {
    of::SbpAttr entry = sbp::getValueSbpOnAxis(v, *microAxis);
    return entry && entry.isSplit();
  }

  std::optional<int64_t> microAxis;
  int64_t count = 1;
  DenseSet<Operation *> gatheredPerLane;
};

} // namespace

std::string describeSbpPlan(ModuleOp module, StringRef device) {
  auto meshAttr =
      module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
  sbp::Mesh mesh = sbp::toPlanner(meshAttr);

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# oflow plan: mesh " << shapeText(meshAttr.getShape()) << " ("
     << meshAttr.getNumDevices() << " devices), compute priced on device " << device
     << "\n";
  // What each axis's collectives are priced with.
  for (int64_t a = 0, e = meshAttr.getNumAxes(); a < e; ++a) {
    sbp::Link link = mesh.link(a);
    os << "# mesh axis " << a;
    if (!meshAttr.getAxisNames().empty())
      os << " (" << meshAttr.getAxisNames()[a].getValue() << ")";
    os << ": " << meshAttr.getShape()[a] << " devices, link "
       << (meshAttr.getLinks().empty() ? StringRef("local (default)")
                                       : meshAttr.getLinks()[a].getValue())
       << llvm::format(", %.0f us + bytes / %.0f GB/s", link.alphaSeconds * 1e6,
                       link.bytesPerSecond / 1e9);
    if (link.sequential)
      os << " (--micro-batches: one device taking turns; its collectives are sums "
            "and concatenations in memory, not communication)";
    os << "\n";
  }
  std::optional<int64_t> microAxis = sbp::microBatchAxis(meshAttr);
  auto tensorLine = [&](StringRef kind, StringRef name, RankedTensorType type,
                        of::NdSbpAttr layout, DenseI64ArrayAttr view = {}) {
    sbp::NdSbp nd = sbp::toPlanner(layout);
    SmallVector<int64_t> local = sbp::localShape(mesh, type.getShape(), nd);
    int64_t bytes = elementBytes(type.getElementType());
    for (int64_t d : local)
      bytes *= d;
    os << "tensor kind=" << kind << " name=" << name
       << " global=" << shapeText(type.getShape()) << " sbp=" << compact(sbp::str(nd))
       << " local=" << shapeText(local) << " bytes_per_device=" << bytes;
    // Stored flat (oflow-flatten-state): the shape it is read in.
    if (view)
      os << " view=" << shapeText(view.asArrayRef());
    os << "\n";
  };
  for (auto var : module.getOps<of::VariableOp>())
    if (var.getSbpAttr())
      tensorLine(mlir::oflow::stringifyVariableRole(var.getRole()),
                 var.getSymName(), cast<RankedTensorType>(var.getType()),
                 var.getSbpAttr(),
                 var->getAttrOfType<DenseI64ArrayAttr>(of::OFlowDialect::kViewAttrName));

  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>(of::OFlowDialect::kEntryAttrName);
    if (!entry || fn.isDeclaration())
      continue;
    for (BlockArgument arg : fn.getArguments()) {
      auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  of::OFlowDialect::kNameAttrName);
      if (auto layout = sbp::getValueSbp(arg); name && layout)
        tensorLine("input", name.getValue(),
                   cast<RankedTensorType>(arg.getType()), layout);
    }
    // How many op results each layout got, and the collectives.
    std::map<std::string, int> layoutCounts;
    int64_t total = 0, collectives = 0, ids = 0;
    MicroBatchRepeats repeats(fn, meshAttr);
    fn.walk([&](Operation *op) {
      if (auto list = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName))
        for (Attribute a : list)
          ++layoutCounts[cast<of::NdSbpAttr>(a).str()];
      std::optional<int64_t> meshAxis = of::getBoxingMeshAxis(op);
      if (!meshAxis)
        return;
      bool inMemory = meshAxis == microAxis;
      ++ids;
      int64_t mostTimes = 0;
      for (auto [in, out] : llvm::zip(op->getOperands(), op->getResults())) {
        auto type = cast<RankedTensorType>(in.getType());
        sbp::NdSbp from = sbp::toPlanner(sbp::getValueSbp(in));
        sbp::NdSbp to = sbp::toPlanner(sbp::getValueSbp(out));
        std::optional<sbp::BoxingStep> step = sbp::planOneAxisStep(
            mesh, type.getShape(), elementBytes(type.getElementType()), from, to,
            *meshAxis);
        int64_t bytes = step ? step->bytesPerDevice : -1;
        int64_t times = repeats.times(op, in);
        mostTimes = std::max(mostTimes, times);
        if (!inMemory)
          total += std::max<int64_t>(bytes, 0) * times;
        os << "collective entry=" << entry.getValue() << " id=" << ids
           << " kind=" << (step ? sbp::str(step->kind) : StringRef("?"))
           << " mesh_axis=" << *meshAxis << " tensor="
           << shapeText(type.getShape()) << " from=" << compact(sbp::str(from))
           << " to=" << compact(sbp::str(to)) << " bytes_per_device=" << bytes
           << (times > 1 ? " per_micro_batch=yes" : "")
           << (inMemory ? " in_memory=yes" : "") << "\n";
      }
      collectives += inMemory ? 0 : mostTimes;
    });
    // --planner ilp: the integer program's seconds for its plan and the
    // greedy one's.
    if (auto planner = fn->getAttrOfType<DictionaryAttr>("oflow.planner")) {
      os << "planner entry=" << entry.getValue() << " kind=ilp";
      for (NamedAttribute field : planner) {
        os << " " << field.getName().getValue() << "=";
        if (auto f = dyn_cast<FloatAttr>(field.getValue()))
          os << llvm::format("%.6g", f.getValueAsDouble());
        else if (auto i = dyn_cast<IntegerAttr>(field.getValue()))
          os << (i.getType().isInteger(1) ? (i.getInt() ? "yes" : "no")
                                          : std::to_string(i.getInt()));
      }
      os << "\n";
    }
    for (auto &[layout, count] : layoutCounts)
      os << "layout entry=" << entry.getValue() << " sbp=" << compact(layout)
         << " values=" << count << "\n";
    os << "communication entry=" << entry.getValue()
       << " collectives=" << collectives << " bytes_per_device_per_step="
       << total << "\n";
  }
  return text;
}

llvm::json::Object describeSbpPlanJson(ModuleOp module) {
  auto meshAttr = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
  // --micro-batches' axis is not the user's mesh: written as
  // "micro_batches", left out of the mesh and the layouts.
  std::optional<int64_t> microAxis = sbp::microBatchAxis(meshAttr);
  auto text = [&](of::NdSbpAttr layout) {
    if (microAxis)
      layout = meshAttr.getNumAxes() == 1 ? sbp::broadcastNdSbp(module.getContext(), 1)
                                          : sbp::dropMeshAxis(layout, *microAxis);
    return sbp::str(sbp::toPlanner(layout));
  };
  llvm::json::Object variables, inputs;
  llvm::json::Array flat; // stored flat (oflow-flatten-state): their layouts split that view
  for (auto var : module.getOps<of::VariableOp>()) {
    if (var.getSbpAttr())
      variables[var.getSymName()] = text(var.getSbpAttr());
    if (var->hasAttr(of::OFlowDialect::kViewAttrName))
      flat.push_back(var.getSymName());
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->getAttrOfType<StringAttr>(of::OFlowDialect::kEntryAttrName) || fn.isDeclaration())
      continue;
    for (BlockArgument arg : fn.getArguments()) {
      auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  of::OFlowDialect::kNameAttrName);
      if (auto layout = sbp::getValueSbp(arg); name && layout)
        inputs[name.getValue()] = text(layout);
    }
  }
  llvm::json::Array mesh;
  for (auto [axis, d] : llvm::enumerate(meshAttr.getShape()))
    if (static_cast<int64_t>(axis) != microAxis)
      mesh.push_back(d);
  if (mesh.empty())
    mesh.push_back(1);
  llvm::json::Object plan{{"mesh", std::move(mesh)},
                          {"variables", std::move(variables)},
                          {"inputs", std::move(inputs)}};
  if (!flat.empty())
    plan["stored_flat"] = std::move(flat);
  if (microAxis) {
    plan["micro_batches"] = meshAttr.getShape()[*microAxis];
    plan["micro_batch_gradients"] =
        module->hasAttr(sbp::kScatterEachMicroBatchAttr) ? "sharded" : "whole";
  }
  return plan;
}

std::vector<EntryEstimate> estimateEntries(ModuleOp module, const DeviceProfile &profile,
                                           StringRef precision) {
  std::vector<EntryEstimate> entries;
  auto meshAttr = module->getAttrOfType<of::MeshAttr>(of::OFlowDialect::kMeshAttrName);
  if (!meshAttr)
    return entries;
  sbp::Mesh mesh = sbp::toPlanner(meshAttr);
  // --micro-batches: the micro-batches take turns on each device, so ops
  // split over them are priced whole, and the micro axis's "collectives"
  // (sums and concatenations in memory) are not communication.
  std::optional<int64_t> microAxis = sbp::microBatchAxis(meshAttr);
  sbp::Mesh computeMesh = mesh;
  if (microAxis)
    computeMesh.shape[*microAxis] = 1;
  sbp::Device device = sbp::deviceFor(profile, precision);
  auto isStatic = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>(of::OFlowDialect::kEntryAttrName);
    if (!entry || fn.isDeclaration())
      continue;
    EntryEstimate est;
    est.entry = entry.getValue().str();
    MicroBatchRepeats repeats(fn, meshAttr);
    fn.walk([&](Operation *op) {
      if (std::optional<int64_t> meshAxis = of::getBoxingMeshAxis(op)) {
        if (meshAxis == microAxis)
          return;
        // A bucket (several operands) is one collective over their bytes:
        // each member's transfer time, one latency (the largest).
        const sbp::Link link = mesh.link(*meshAxis);
        double seconds = 0, latencies = 0, latency = 0;
        int64_t bytes = 0, mostTimes = 0;
        for (auto [in, out] : llvm::zip(op->getOperands(), op->getResults())) {
          auto type = cast<RankedTensorType>(in.getType());
          std::optional<sbp::BoxingStep> step = sbp::planOneAxisStep(
              mesh, type.getShape(), elementBytes(type.getElementType()),
              sbp::toPlanner(sbp::getValueSbp(in)), sbp::toPlanner(sbp::getValueSbp(out)),
              *meshAxis);
          if (!step || step->bytesPerDevice <= 0)
            continue;
          int64_t times = repeats.times(op, in);
          double fixed = step->seconds - double(step->bytesPerDevice) / link.bytesPerSecond;
          bytes += step->bytesPerDevice * times;
          seconds += step->seconds * times;
          latencies += fixed * times;
          latency = std::max(latency, fixed * times);
          mostTimes = std::max(mostTimes, times);
        }
        if (mostTimes > 0) {
          EntryEstimate::Axis &axis = est.axes[*meshAxis];
          axis.bytes += bytes;
          axis.seconds += seconds - latencies + latency;
          axis.collectives += mostTimes;
        }
        return;
      }
      auto results = op->getAttrOfType<ArrayAttr>(of::OFlowDialect::kSbpAttrName);
      if (!results || results.size() != op->getNumResults() ||
          !llvm::all_of(op->getOperandTypes(), isStatic) ||
          !llvm::all_of(op->getResultTypes(), isStatic))
        return;
      SmallVector<of::NdSbpAttr> in, out;
      for (Value v : op->getOperands()) {
        of::NdSbpAttr layout = sbp::getValueSbp(v);
        in.push_back(layout ? layout : sbp::broadcastNdSbp(op->getContext(), mesh.rank()));
      }
      for (Attribute a : results)
        out.push_back(cast<of::NdSbpAttr>(a));
      est.computeSeconds += sbp::opComputeSeconds(op, in, out, computeMesh, device);
      ++est.ops;
    });
    entries.push_back(std::move(est));
  }
  return entries;
}

std::string formatSimulation(of::MeshAttr meshAttr, ArrayRef<EntryEstimate> entries,
                             const DeviceProfile &profile, StringRef precision) {
  std::optional<int64_t> microAxis = sbp::microBatchAxis(meshAttr);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# oflow simulate: mesh " << shapeText(meshAttr.getShape()) << " ("
     << meshAttr.getNumDevices() << " devices), device " << profile.name << ", "
     << precision << " GEMMs; compute and collectives in sequence (the runtime "
        "does not overlap them yet)\n";
  if (llvm::any_of(entries, [](const EntryEstimate &e) { return e.computeModel == "kernels"; }))
    os << "# compute_model=kernels: the entry's launches as the CUDA target lowers them, "
          "priced as --emit=kernels prices them (collectives by the links); "
          "compute_model=ops: each op priced as the planner prices it\n";
  if (microAxis)
    os << "# mesh axis " << *microAxis << ": " << meshAttr.getShape()[*microAxis]
       << " micro-batches in turn on each device (--micro-batches), not devices\n";
  for (const EntryEstimate &est : entries) {
    for (auto &[axis, v] : est.axes)
      os << "simulate entry=" << est.entry << " mesh_axis=" << axis
         << " collectives=" << v.collectives << " bytes_per_device=" << v.bytes
         << llvm::format(" seconds=%.6g", v.seconds) << "\n";
    os << "simulate entry=" << est.entry << " ops=" << est.ops;
    if (est.computeModel == "kernels")
      os << " compute_model=kernels launches=" << est.launches;
    os << llvm::format(" compute_seconds=%.6g", est.computeSeconds)
       << " collectives=" << est.collectives() << " bytes_per_device=" << est.bytes()
       << llvm::format(" comm_seconds=%.6g", est.commSeconds())
       << llvm::format(" step_seconds=%.6g", est.stepSeconds()) << "\n";
  }
  return text;
}

FailureOr<KernelCompute> kernelModelCompute(ModuleOp module, StringRef entry,
                                            const DeviceProfile &profile, TimingScope &timing) {
  OwningOpRef<ModuleOp> copy = module.clone();
  // The other entries (the gradients' dump, inference) are not the step:
  // left out, their kernels are neither formed nor priced.
  std::string symbol;
  for (auto fn : llvm::make_early_inc_range(copy->getOps<func::FuncOp>())) {
    auto name = fn->getAttrOfType<StringAttr>(kEntryAttr);
    if (!name || fn.isDeclaration())
      continue;
    if (name.getValue() == entry)
      symbol = fn.getName().str();
    else
      fn.erase();
  }
  if (symbol.empty())
    return failure();
  PassManager pm(module.getContext());
  TimingScope scope = timing.nest("kernel model: form and outline the kernels");
  pm.enableTiming(scope);
  addGpuOutlinedKernelsPipeline(pm);
  if (failed(pm.run(*copy)))
    return failure();
  scope.stop();
  TimingScope pricing = timing.nest("kernel model: price the launches");
  KernelCompute out;
  for (const EntryReport &report : analyzeProgram(*copy, profile)) {
    if (report.entry != symbol)
      continue;
    for (const KernelCost &k : report.launches)
      if (k.kind != "collective") {
        out.seconds += k.seconds;
        out.launches += k.nodes;
      }
  }
  return out;
}

double recomputeSeconds(ModuleOp module, StringRef entry, const DeviceProfile &profile,
                        StringRef precision) {
  auto recompute = module->getAttrOfType<DictionaryAttr>("oflow.recompute");
  auto counts = recompute ? recompute.getAs<DenseI64ArrayAttr>(entry) : nullptr;
  if (!counts || counts.size() != 3)
    return 0;
  return sbp::computeSeconds(sbp::deviceFor(profile, precision), counts[1], counts[2]);
}

std::string addRecomputeToSimulation(StringRef report, ModuleOp module,
                                     const DeviceProfile &profile, StringRef precision) {
  auto recompute = module->getAttrOfType<DictionaryAttr>("oflow.recompute");
  if (!recompute)
    return report.str();
  sbp::Device device = sbp::deviceFor(profile, precision);
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<StringRef> lines;
  report.split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (i + 1 == lines.size() && line.empty())
      break;
    // "simulate entry=E ops=..." (the entry's total, not a mesh axis line).
    StringRef rest = line;
    // (The kernel model prices the copies with the rest of the program.)
    auto counts = [&]() -> DenseI64ArrayAttr {
      if (!rest.consume_front("simulate entry=") || !line.contains(" ops=") ||
          line.contains(" compute_model=kernels"))
        return {};
      return recompute.getAs<DenseI64ArrayAttr>(rest.split(' ').first);
    }();
    if (!counts || counts.size() != 3) {
      os << line << "\n";
      continue;
    }
    double seconds = sbp::computeSeconds(device, counts[1], counts[2]);
    auto [head, step] = line.rsplit(" step_seconds=");
    double total = 0;
    step.getAsDouble(total);
    os << head << " recomputed_ops=" << counts[0] << " recomputed_flops=" << counts[1]
       << llvm::format(" recompute_seconds=%.6g", seconds)
       << llvm::format(" step_seconds=%.6g", total + seconds) << "\n";
  }
  return text;
}

std::string describeMemoryPlan(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto i64 = [&](StringRef name) {
    auto a = module->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  int64_t state = i64(kStateBytesAttr), io = i64(kIoBytesAttr), arena = 0;
  for (auto fn : module.getOps<func::FuncOp>())
    if (auto plan = fn->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr)) {
      int64_t peak = plan.getAs<IntegerAttr>("peak").getInt();
      os << "memory entry="
         << fn->getAttrOfType<StringAttr>(kEntryAttr).getValue()
         << " arena_peak_bytes=" << peak;
      if (auto gathered = plan.getAs<IntegerAttr>("gathered_weights");
          gathered && gathered.getInt() > 0)
        os << " gathered_weight_bytes=" << gathered.getInt()
           << " gathered_weight_peak_bytes="
           << plan.getAs<IntegerAttr>("gathered_weights_peak").getInt();
      os << "\n";
      arena = std::max(arena, peak);
    }
  os << "memory state_bytes=" << state << " io_bytes=" << io
     << " arena_bytes=" << arena << " peak_bytes_per_device="
     << state + io + arena << "\n";
  return text;
}

LogicalResult writeText(const std::string &text, const CompileOptions &options,
                        Location loc) {
  llvm::Error err = llvm::writeToOutput(
      options.output, [&](llvm::raw_ostream &os) -> llvm::Error {
        os << text;
        return llvm::Error::success();
      });
  if (err)
    return emitError(loc) << "cannot write '" << options.output
                          << "': " << llvm::toString(std::move(err));
  return success();
}

} // namespace oflow
