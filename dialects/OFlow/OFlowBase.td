//===- OFlowBase.td - the oflow dialect ---------------------*- tablegen -*-===//
//
// The oflow dialect: a training graph over ranked tensors, written for one
// logical device. Placement (a device mesh) and nd-SBP layouts are attributes.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_BASE_TD
#define OFLOW_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def OFlow_Dialect : Dialect {
  let name = "oflow";
  let cppNamespace = "::mlir::oflow";
  let summary = "Graph IR of the oflow distributed-training compiler";
  let description = [{
    Ops on ranked tensors for MLPs, CNNs and Transformers, with ONNX
    semantics (broadcasting, axes, attribute defaults). Every op infers its
    result types through `InferTypeOpInterface`, so passes create ops without
    computing shapes by hand, and the verifier re-checks them.

    The module carries the device mesh as `oflow.mesh`; values may carry an
    nd-SBP layout (`oflow.sbp`), one SBP entry per mesh axis.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Discardable attribute names understood by the dialect.
    static constexpr ::llvm::StringLiteral kMeshAttrName = "oflow.mesh";
    static constexpr ::llvm::StringLiteral kSbpAttrName = "oflow.sbp";
    static constexpr ::llvm::StringLiteral kNameAttrName = "oflow.name";
    /// On an op, from SBP choice until boxing: the nd-SBP each operand must
    /// arrive in (one per operand).
    static constexpr ::llvm::StringLiteral kOperandSbpAttrName = "oflow.operand_sbp";
    /// On the module after `oflow-partition`: types are per-rank local shapes.
    static constexpr ::llvm::StringLiteral kPartitionedAttrName = "oflow.partitioned";
    /// Set by autodiff on the `oflow.weight`s it trains.
    static constexpr ::llvm::StringLiteral kTrainableAttrName = "oflow.trainable";
    /// On a generated entry function: "train", "grads" or "infer".
    static constexpr ::llvm::StringLiteral kEntryAttrName = "oflow.entry";
    /// On the train entry: the optimizer and schedule hyper-parameters.
    static constexpr ::llvm::StringLiteral kOptimizerAttrName = "oflow.optimizer";
    /// On an entry's argument/result: a runtime scalar (lr, step, lr_used).
    static constexpr ::llvm::StringLiteral kScalarAttrName = "oflow.scalar";
    /// On a grads entry's result: the parameter it is the gradient of.
    static constexpr ::llvm::StringLiteral kGradOfAttrName = "oflow.grad_of";
    /// On a variable or a grads entry's result stored flat
    /// (`oflow-flatten-state`): the tensor's own shape.
    static constexpr ::llvm::StringLiteral kViewAttrName = "oflow.view";
  private:
    void registerAttributes();
  public:
  }];
}

class OFlow_Op<string mnemonic, list<Trait> traits = []>
    : Op<OFlow_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// The graph is fully static (the importer fixes dynamic dims from --batch /
// --shape), which is what static memory planning and SPMD partitioning need.
def OFlow_Tensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger, AnyUnsignedInteger]>;
def OFlow_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def OFlow_NumericTensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger, AnyUnsignedInteger]>;
def OFlow_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def OFlow_BoolTensor : StaticShapeTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def OFlow_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "element-wise comparison", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::oflow";
}

def OFlow_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula: exact (erf) or tanh approximation", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::oflow";
}

def OFlow_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss reduces over samples (ONNX `reduction`)", [
      I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"none", 2>]> {
  let cppNamespace = "::mlir::oflow";
}

#endif // OFLOW_BASE_TD
