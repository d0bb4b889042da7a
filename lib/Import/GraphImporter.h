//===- GraphImporter.h - state of one ONNX graph import ---------*- C++ -*-===//
//
// Internal to lib/Import. A GraphImporter walks the nodes of a checked,
// shape-inferred ONNX graph in order and emits oflow ops. Node converters
// (OnnxOpConverters.cpp) see it through NodeContext.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_LIB_IMPORT_GRAPHIMPORTER_H
#define OFLOW_LIB_IMPORT_GRAPHIMPORTER_H

#include "OFlow/OFlowOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace oflow::import {

/// The MLIR element type of an ONNX tensor element type, or null.
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);
/// "FLOAT", "INT64", ... for messages.
std::string onnxTypeName(int32_t onnxType);

/// Why an external-data `location` may not be read (empty, absolute, or
/// leaving the model's folder through ".."), or "" when it is acceptable as
/// far as its text goes. Links are resolved when the data is read.
std::string checkExternalLocation(llvm::StringRef location);

/// Reads a TensorProto (inline or external data) into an elements attribute.
/// `asResource` stores the data as a dense resource blob named `blobName`
/// (weights); otherwise a DenseElementsAttr (small constants). External data
/// must lie inside `modelDir`. On failure returns null and sets `error`.
mlir::ElementsAttr readTensor(mlir::MLIRContext *ctx,
                              const onnx::TensorProto &tensor,
                              const std::string &modelDir, bool asResource,
                              llvm::StringRef blobName, std::string &error);

/// A compile-time integer tensor, for the shape arithmetic that exporters
/// emit (Shape -> Gather -> Concat -> Reshape): folded in the importer so
/// that the oflow graph has static shapes only.
struct IntTensor {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> data;
  mlir::Type elementType; // i1, i32, i64, ...
};

class GraphImporter;

/// What NodeContext::create returns: the op, or null when the node's
/// operands were invalid. As a Value it is the op's only result, or a null
/// Value (a null op converted through the op's own result accessor would
/// read through a null pointer: found by the importer's fuzzer).
template <typename OpT>
class Created {
public:
  Created(OpT op) : op(op) {}
  operator OpT() const { return op; }
  operator mlir::Operation *() const {
    return op ? op.getOperation() : nullptr;
  }
  operator mlir::Value() const {
    return op ? mlir::Value(op->getResult(0)) : mlir::Value();
  }
  explicit operator bool() const { return static_cast<bool>(op); }
  OpT operator->() const { return op; }

private:
  mutable OpT op; // OpState accessors are not const
};

/// What a node converter sees: the node, its operands, attributes, and the
/// way to define its outputs.
class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node,
              int64_t opset);

  const onnx::NodeProto &node() const { return node_; }
  int64_t opset() const { return opset_; }
  mlir::OpBuilder &builder();
  mlir::MLIRContext *ctx();
  mlir::Location loc() const { return loc_; }

  /// Whether input `i` is present (ONNX optional inputs may be "").
  bool hasInput(int i) const;
  int numInputs() const { return node_.input_size(); }
  /// Input `i` as an SSA value (constants are materialized on demand).
  mlir::Value input(int i);
  mlir::RankedTensorType inputType(int i);
  /// Input `i` as compile-time integers, or failure (reported) when it is
  /// not a constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constInts(int i,
                                                       llvm::StringRef what);
  /// The DenseElementsAttr of a constant input, or null.
  mlir::DenseElementsAttr constValue(int i);
  const IntTensor *constIntTensor(int i);

  bool hasAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  float floatAttr(llvm::StringRef name, float dflt) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef dflt) const;
  llvm::SmallVector<int64_t> intsAttr(llvm::StringRef name) const;
  const onnx::AttributeProto *attr(llvm::StringRef name) const;

  /// Whether output `i` is used (named and consumed or a graph output).
  bool outputUsed(int i) const;
  int numOutputs() const { return node_.output_size(); }
  void setOutput(int i, mlir::Value v);
  void setConstOutput(int i, mlir::DenseElementsAttr value);
  void setIntOutput(int i, IntTensor value);

  /// Records a problem with this node; returns failure for convenience.
  mlir::LogicalResult unsupported(const llvm::Twine &why);

  /// Builds an oflow op with inferred types; on invalid operands records the
  /// inference's message against this node and returns null.
  template <typename OpT>
  Created<OpT> create(mlir::ValueRange operands,
                      llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    // An omitted optional input (an empty name) where the op needs one.
    for (auto [i, v] : llvm::enumerate(operands))
      if (!v) {
        (void)unsupported("operand " + llvm::Twine(i) + " of " +
                          OpT::getOperationName() +
                          " would be an omitted (empty-named) input, which it needs");
        return OpT();
      }
    OpT op = mlir::oflow::tryCreate<OpT>(builder(), loc_, operands, attrs);
    // Operand type constraints (e.g. float-only ops) are checked now, so the
    // message is attributed to this node.
    if (op && mlir::failed(mlir::verify(op, /*verifyRecursively=*/false))) {
      op->erase();
      return OpT();
    }
    return op;
  }
  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return mlir::NamedAttribute(mlir::StringAttr::get(ctx(), name), value);
  }
  /// Normalizes a possibly negative axis against `rank`; reports if invalid.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");

private:
  GraphImporter &importer_;
  const onnx::NodeProto &node_;
  int64_t opset_;
  mlir::Location loc_;
};

using NodeConverter = mlir::LogicalResult (*)(NodeContext &);

/// The converter for (domain, op type), or null when unsupported.
NodeConverter lookupConverter(llvm::StringRef domain, llvm::StringRef opType);

/// The values of a float constant: an oflow.constant, or an initializer (a
/// weight whose data is a resource blob); nullopt for anything else.
std::optional<llvm::SmallVector<double>> constantFloats(mlir::Value v);

/// Einsum as transposes, reshapes and batched matrix products (Einsum.cpp).
mlir::LogicalResult convertEinsum(NodeContext &c);

/// Resize and Upsample as matrix products (Resize.cpp).
mlir::LogicalResult convertResize(NodeContext &c);
mlir::LogicalResult convertUpsample(NodeContext &c);

/// Tries to fold a node whose inputs are all compile-time integer tensors.
/// Returns true when it did (outputs set).
bool tryFoldIntegerNode(NodeContext &ctx);

} // namespace oflow::import

#endif
