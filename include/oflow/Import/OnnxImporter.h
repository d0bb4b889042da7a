//===- OnnxImporter.h - ONNX models into the oflow dialect ------*- C++ -*-===//
#ifndef OFLOW_IMPORT_ONNXIMPORTER_H
#define OFLOW_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oflow {

struct ImportOptions {
  /// Fixes the leading dynamic dimension of every graph input (`--batch`).
  std::optional<int64_t> batch;
  /// Full static shapes for named graph inputs (`--shape NAME=d0,d1`).
  std::map<std::string, std::vector<int64_t>> shapes;
  /// When set, receives the original model serialized with the data of every
  /// initializer that became an `oflow.weight` removed: the executable embeds
  /// it and fills in the trained values for `--export`.
  std::string *exportTemplate = nullptr;
};

/// Imports an ONNX model (`.onnx` protobuf or `.onnxtext` text format) as a
/// module holding one `func.func @main`: graph inputs become arguments, graph
/// outputs results (both named by `oflow.name`), initializers `oflow.weight`
/// ops, every node one or more oflow ops located at the node's name.
///
/// The model is checked (`onnx::checker`), shapes are inferred (ONNX shape
/// inference), and every problem is reported as one diagnostic: an unreadable
/// file, a failed check, every unsupported node at once, a dynamic dimension
/// without an override, external data outside the model's folder. Returns
/// null after reporting.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &context, const std::string &path,
               const ImportOptions &options);

} // namespace oflow

#endif
