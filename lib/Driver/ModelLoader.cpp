//===- ModelLoader.cpp - any supported input into a verified module -------===//
//
// Front-ends produce oflow IR and stop there: ONNX through the importer,
// native IR through MLIR's parser. Both end the same way, with the mesh as a
// module attribute and a verified module, so nothing downstream checks
// which front-end ran.
//
//===----------------------------------------------------------------------===//
#include "oflow/Driver/Driver.h"

#include "OFlow/OFlowOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace oflow {

static OwningOpRef<ModuleOp> parseNativeIR(MLIRContext &context,
                                           const std::string &path) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (llvm::sys::fs::is_directory(path)) {
    emitError(fileLoc) << "is a directory, not a model";
    return nullptr;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    emitError(fileLoc) << "cannot open the model: "
                       << buffer.getError().message();
    return nullptr;
  }
  if ((*buffer)->getBufferSize() == 0) {
    emitError(fileLoc) << "the model file is empty";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return nullptr;
  bool hasMain = false;
  module->walk([&](func::FuncOp fn) { hasMain |= fn.getSymName() == "main"; });
  if (!hasMain) {
    emitError(module->getLoc())
        << "the module has no func.func @main (the training graph)";
    return nullptr;
  }
  return module;
}

OwningOpRef<ModuleOp> loadModel(MLIRContext &context,
                                const CompileOptions &options) {
  context.getOrLoadDialect<mlir::oflow::OFlowDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  llvm::StringRef path = options.input;
  OwningOpRef<ModuleOp> module;
  if (path.ends_with(".mlir"))
    module = parseNativeIR(context, options.input);
  else
    module = importOnnxFile(context, options.input, options.import);
  if (!module)
    return nullptr;

  auto mesh = (*module)->getAttrOfType<mlir::oflow::MeshAttr>(
      mlir::oflow::OFlowDialect::kMeshAttrName);
  if (!options.mesh.empty() || !mesh)
    mesh = mlir::oflow::MeshAttr::get(
        &context, options.mesh.empty() ? llvm::ArrayRef<int64_t>{1}
                              : llvm::ArrayRef<int64_t>(options.mesh));
  if (!options.meshNames.empty() || !options.links.empty()) {
    auto attrs = [&](const std::vector<std::string> &texts,
                     llvm::ArrayRef<StringAttr> kept) {
      SmallVector<StringAttr> r(kept.begin(), kept.end());
      if (!texts.empty()) {
        r.clear();
        for (const std::string &t : texts)
          r.push_back(StringAttr::get(&context, t));
      }
      return r;
    };
    SmallVector<StringAttr> names = attrs(options.meshNames, mesh.getAxisNames());
    SmallVector<StringAttr> links = attrs(options.links, mesh.getLinks());
    Location cli = NameLoc::get(StringAttr::get(&context, "oflow-compile"));
    mesh = mlir::oflow::MeshAttr::getChecked(
        [&] { return emitError(cli) << "--mesh-names/--links: "; }, &context,
        mesh.getShape(), ArrayRef<StringAttr>(names), ArrayRef<StringAttr>(links));
    if (!mesh)
      return nullptr;
  }
  (*module)->setAttr(mlir::oflow::OFlowDialect::kMeshAttrName, mesh);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace oflow
