//===- ProgramImage.cpp - manifest and initial state of a program ---------===//
#include "oflow/Codegen/Passes.h"
#include "oflow/Codegen/Program.h"

#include "OFlow/OFlowOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;

namespace oflow {

std::string escapeManifestName(StringRef name) {
  std::string out;
  for (unsigned char c : name) {
    if (llvm::isAlnum(c) || c == '.' || c == '_' || c == ':' || c == '/' ||
        c == '-')
      out += c;
    else
    {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", unsigned(c));
      out += hex;
    }
  }
  return out;
}

static std::string dtypeName(Type type) {
  if (type.isF32()) return "f32";
  if (type.isF64()) return "f64";
  if (type.isF16()) return "f16";
  if (type.isBF16()) return "bf16";
  if (type.isInteger(1)) return "bool";
  if (type.isUnsignedInteger(8)) return "u8";
  if (type.isInteger(8)) return "i8";
  if (type.isInteger(16)) return "i16";
  if (type.isInteger(32)) return "i32";
  if (type.isInteger(64)) return "i64";
  return "";
}

static std::string dims(RankedTensorType type) {
  std::string s = std::to_string(type.getRank());
  for (int64_t d : type.getShape())
    s += " " + std::to_string(d);
  return s;
}

/// Appends the bytes of `value` (row-major, one byte per i1) to `out`.
static LogicalResult appendBytes(ElementsAttr value, std::vector<uint8_t> &out) {
  auto type = cast<ShapedType>(value.getType());
  int64_t n = type.getNumElements();
  int64_t width = elementBytes(type.getElementType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != n * width)
      return failure();
    out.insert(out.end(), data.begin(), data.end());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return failure();
  if (type.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      out.push_back(b ? 1 : 0);
    return success();
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i)
      out.insert(out.end(), raw.begin(), raw.begin() + width);
  } else {
    out.insert(out.end(), raw.begin(), raw.end());
  }
  return success();
}

/// ` view=AxBxC`: the shape a tensor stored flat is read and written in
/// (oflow-flatten-state's `oflow.view`); empty without one.
static std::string viewText(Attribute view) {
  auto shape = dyn_cast_or_null<DenseI64ArrayAttr>(view);
  if (!shape)
    return "";
  std::string text = " view=";
  for (auto [i, d] : llvm::enumerate(shape.asArrayRef()))
    text += (i ? "x" : "") + std::to_string(d);
  return text;
}

FailureOr<ProgramImage> extractProgramImage(ModuleOp module,
                                            const ManifestInfo &info) {
  ProgramImage image;
  std::string text;
  llvm::raw_string_ostream os(text);
  auto i64 = [&](StringRef attr) -> int64_t {
    auto a = module->getAttrOfType<IntegerAttr>(attr);
    return a ? a.getInt() : 0;
  };
  os << "oflow-manifest 1\n"
     << "mode " << info.mode << "\n"
     << "model " << escapeManifestName(info.modelName) << "\n"
     << "batch " << info.batch << "\n"
     << "state_bytes " << i64(kStateBytesAttr) << "\n"
     << "io_bytes " << i64(kIoBytesAttr) << "\n"
     << "arena_bytes " << i64(kArenaBytesAttr) << "\n";
  // On a mesh: dims are global, offsets hold each rank's piece (abi.h).
  auto mesh = module->getAttrOfType<mlir::oflow::MeshAttr>("oflow.mesh");
  if (mesh && mesh.getNumDevices() == 1)
    mesh = nullptr;
  if (mesh) {
    os << "mesh";
    for (int64_t d : mesh.getShape())
      os << " " << d;
    os << "\n";
  }
  auto layoutOf = [&](mlir::oflow::NdSbpAttr sbp, RankedTensorType &type) {
    if (!mesh || !sbp)
      return std::string();
    type = RankedTensorType::get(
        mlir::oflow::getGlobalShape(mesh, sbp, type.getShape()),
        type.getElementType());
    return " sbp=" + mlir::oflow::getManifestSbp(sbp);
  };

  for (auto func : module.getOps<func::FuncOp>()) {
    auto entry = func->getAttrOfType<StringAttr>(kEntryAttr);
    if (!entry)
      continue;
    os << "entry " << entry.getValue() << "\n";
    if (auto plan = func->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr))
      os << "plan entry=" << entry.getValue()
         << " peak=" << plan.getAs<IntegerAttr>("peak").getInt()
         << " naive=" << plan.getAs<IntegerAttr>("naive").getInt()
         << " lower_bound=" << plan.getAs<IntegerAttr>("lower_bound").getInt()
         << " buffers=" << plan.getAs<IntegerAttr>("buffers").getInt() << "\n";
  }

  // Large models: the executable reads the initial values from the model
  // file (checked against the expected dtypes and shapes) rather than
  // carrying them.
  // Optimizer state (the loss scaler's initial scale) is never in the model
  // file: its initial values are always embedded.
  auto fromModel = [](mlir::oflow::VariableOp var) {
    return var.getModelName() &&
           var.getRole() != mlir::oflow::VariableRole::optimizer;
  };
  int64_t initBytes = 0;
  for (auto var : module.getOps<mlir::oflow::VariableOp>())
    if (var.getInitialValueAttr() && fromModel(var))
      initBytes += cast<RankedTensorType>(var.getType()).getNumElements() *
                   elementBytes(cast<RankedTensorType>(var.getType()).getElementType());
  bool fromFile = !info.weightsFile.empty() && initBytes > info.embedLimit;
  if (fromFile)
    os << "weights " << escapeManifestName(info.weightsFile) << "\n";

  SmallVector<Operation *> variables;
  for (auto var : module.getOps<mlir::oflow::VariableOp>()) {
    variables.push_back(var);
    auto type = cast<RankedTensorType>(var.getType());
    auto offset = var->getAttrOfType<IntegerAttr>(kStateOffsetAttr);
    if (!offset)
      return var.emitOpError("has no state offset: run "
                             "oflow-bind-program-interface first");
    int64_t initOffset = -1;
    auto init = var.getInitialValueAttr();
    if (fromFile && fromModel(var))
      init = nullptr; // read from the model file at start
    if (init) {
      // Zero splats need no bytes: the runtime zero-fills.
      auto dense = dyn_cast<DenseElementsAttr>(init);
      bool zeros = dense && dense.isSplat() &&
                   llvm::all_of(dense.getRawData(), [](char c) { return c == 0; });
      if (!zeros) {
        image.stateInit.resize(llvm::alignTo(image.stateInit.size(), kBufferAlignment));
        initOffset = image.stateInit.size();
        if (failed(appendBytes(init, image.stateInit)))
          return var.emitOpError("has an initial value whose bytes are not "
                                 "available (an elided or unsupported constant)");
      }
    }
    StringRef name = var.getModelName() ? *var.getModelName() : var.getSymName();
    if (var.getRole() == mlir::oflow::VariableRole::optimizer)
      name = var.getSymName();
    std::string dt = dtypeName(type.getElementType());
    if (dt.empty())
      return var.emitOpError("has an element type the runtime does not know: ")
             << type.getElementType();
    std::string sbp = layoutOf(var.getSbpAttr(), type) + viewText(var->getAttr("oflow.view"));
    // A recipe: the executable draws its piece at start (no bytes here).
    std::string recipe;
    if (auto r = var.getInitializerAttr())
      recipe = " init=" + r.manifestText();
    os << "var " << escapeManifestName(name) << " "
       << mlir::oflow::stringifyVariableRole(var.getRole()) << " " << dt << " "
       << dims(type) << " " << offset.getInt() << " " << initOffset << sbp
       << recipe << "\n";
  }

  if (auto slots = module->getAttrOfType<ArrayAttr>(kIoLayoutAttr)) {
    for (auto slot : slots.getAsRange<DictionaryAttr>()) {
      StringRef kind = slot.getAs<StringAttr>("kind").getValue();
      std::string name = escapeManifestName(slot.getAs<StringAttr>("name").getValue());
      auto type = cast<RankedTensorType>(slot.getAs<TypeAttr>("type").getValue());
      int64_t offset = slot.getAs<IntegerAttr>("offset").getInt();
      std::string dt = dtypeName(type.getElementType());
      std::string sbp;
      if (kind != "scalar")
        sbp = layoutOf(slot.getAs<mlir::oflow::NdSbpAttr>("sbp"), type);
      if (kind == "input") {
        std::string synth = "normal";
        if (auto range = slot.getAs<DenseI64ArrayAttr>("int_range")) {
          synth = "int:" + std::to_string(range[0]) + ":" + std::to_string(range[1]);
          if (auto ignore = slot.getAs<IntegerAttr>("ignore_index"))
            synth += ":ignore=" + std::to_string(ignore.getInt());
        } else if (type.getElementType().isInteger(1)) {
          synth = "int:0:2";
        } else if (type.getElementType().isInteger()) {
          // No consumer bounds it: small non-negative synthetic values, and
          // data files are not range-checked.
          synth = "int:0:2:unchecked";
        }
        os << "input " << name << " " << dt << " " << dims(type) << " " << offset
           << " " << synth << sbp << "\n";
      } else if (kind == "output") {
        os << "output " << info.mode << " " << name << " " << dt << " "
           << dims(type) << " " << offset << sbp << "\n";
      } else if (kind == "grad") {
        os << "grad " << name << " " << dt << " " << dims(type) << " " << offset
           << sbp << viewText(slot.get("view")) << "\n";
      } else {
        os << "scalar " << name << " " << dt << " " << offset;
        for (auto &[scalar, value] : info.scalarDefaults)
          if (scalar == slot.getAs<StringAttr>("name").getValue())
            os << " " << value;
        os << "\n";
      }
    }
  }
  for (const std::string &line : info.extraLines)
    os << line << "\n";
  image.manifest = std::move(text);

  // LLVM translation sees only code: drop the variables and oflow.* attrs.
  for (Operation *v : variables)
    v->erase();
  module->walk([](Operation *op) {
    SmallVector<StringAttr> drop;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (attr.getName().getValue().starts_with("oflow."))
        drop.push_back(attr.getName());
    for (StringAttr name : drop)
      op->removeDiscardableAttr(name);
  });
  return image;
}

} // namespace oflow
