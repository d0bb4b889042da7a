//===- OFlowAttrs.td - mesh and SBP attributes --------------*- tablegen -*-===//
#ifndef OFLOW_ATTRS_TD
#define OFLOW_ATTRS_TD

include "OFlow/OFlowBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class OFlow_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<OFlow_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def OFlow_MeshAttr : OFlow_Attr<"Mesh", "mesh"> {
  let summary = "a logical device mesh";
  let description = [{
    The devices the program runs on, as an n-d grid. Rank r has mesh
    coordinates in row-major order: the last axis varies fastest, so
    consecutive ranks (one node's GPUs) form the last axis.

    Each axis may carry a name and a link kind (`nvlink`, `pcie`, `ib`,
    `ethernet`, `local`) that the cost model uses for its bandwidth.

    ```mlir
    #oflow.mesh<8x4>
    #oflow.mesh<8x4, names = [node, gpu], links = [ib, nvlink]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$axisNames,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$links);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape), [{
      return $_get($_ctxt, shape, ::llvm::ArrayRef<::mlir::StringAttr>(),
                   ::llvm::ArrayRef<::mlir::StringAttr>());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Number of devices (the product of the axis sizes).
    int64_t getNumDevices() const;
    int64_t getNumAxes() const { return getShape().size(); }
    /// Mesh coordinates of `rank` (row-major, last axis fastest).
    ::llvm::SmallVector<int64_t> getCoordinates(int64_t rank) const;
    /// The rank at the given mesh coordinates.
    int64_t getRank(::llvm::ArrayRef<int64_t> coords) const;
    /// Display name of an axis: its declared name or "axis<i>".
    std::string getAxisDisplayName(unsigned axis) const;
    /// Known link kinds, fastest first.
    static ::llvm::ArrayRef<::llvm::StringLiteral> getKnownLinkKinds();
  }];
}

def OFlow_SbpAttr : OFlow_Attr<"Sbp", "sbp"> {
  let summary = "SBP layout of a tensor on one mesh axis";
  let description = [{
    `S(i)`: split along tensor axis i; `B`: broadcast; `P` or `P(sum)`:
    partial sum; `P(max)`: partial max.

    ```mlir
    #oflow.sbp<S(0)>  #oflow.sbp<B>  #oflow.sbp<P(sum)>  #oflow.sbp<P(max)>
    ```
  }];
  let parameters = (ins "::mlir::oflow::SbpKind":$kind, "int64_t":$axis);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static SbpAttr getSplit(::mlir::MLIRContext *ctx, int64_t axis);
    static SbpAttr getBroadcast(::mlir::MLIRContext *ctx);
    static SbpAttr getPartialSum(::mlir::MLIRContext *ctx);
    static SbpAttr getPartialMax(::mlir::MLIRContext *ctx);
    bool isSplit() const { return getKind() == SbpKind::Split; }
    bool isBroadcast() const { return getKind() == SbpKind::Broadcast; }
    bool isPartial() const {
      return getKind() == SbpKind::PartialSum || getKind() == SbpKind::PartialMax;
    }
    /// `S(0)`, `B`, `P(sum)`, `P(max)`.
    std::string str() const;
    /// Print/parse the bare form used inside `#oflow.nd_sbp<[...]>`.
    void printBare(::mlir::AsmPrinter &printer) const;
    static SbpAttr parseBare(::mlir::AsmParser &parser);
  }];
}

def OFlow_NdSbpAttr : OFlow_Attr<"NdSbp", "nd_sbp"> {
  let summary = "nd-SBP: one SBP per mesh axis";
  let description = [{
    ```mlir
    #oflow.nd_sbp<[S(0), B]>   // on an 8x4 mesh: rows split the batch, columns replicate
    ```
    Whether it fits a tensor and a mesh (entry count, split axis in range,
    divisibility per mesh axis and by the product where several mesh axes
    split one tensor axis) is checked by `verifyFor`.
  }];
  let parameters = (ins ArrayRefParameter<"SbpAttr">:$entries);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    int64_t getNumMeshAxes() const { return getEntries().size(); }
    /// Checks this layout against `mesh` and a tensor of `shape`; reports the
    /// first problem through `emitError`, naming the mesh axis.
    ::llvm::LogicalResult
    verifyFor(MeshAttr mesh, ::llvm::ArrayRef<int64_t> shape,
              ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
    /// Per-device shape of a tensor of global `shape` (requires verifyFor).
    ::llvm::SmallVector<int64_t> getLocalShape(MeshAttr mesh,
                                               ::llvm::ArrayRef<int64_t> shape) const;
    /// `[S(0), B]`.
    std::string str() const;
  }];
}

def OFlow_InitAttr : OFlow_Attr<"Init", "init", [TypedAttrInterface]> {
  let summary = "an initializer recipe: a weight drawn at start, not stored";
  let description = [{
    Replaces a weight's data (a 7B model's ONNX file is 28 GB; training
    from scratch needs none of it). The executable draws the values when it
    starts, each rank its own piece: element i (the global row-major index)
    of the variable named N comes from Philox4x32-10 with counter
    (i mod 2^32, i div 2^32, attempt, 0) and key (seed, FNV-1a-32 of N), so
    every mesh and plan starts from the same values as one device.

    ```mlir
    #oflow.init<zeros> : tensor<768xf32>
    #oflow.init<ones> : tensor<768xf32>
    #oflow.init<constant(0.5)> : tensor<768xf32>
    #oflow.init<normal(0.0, 0.02), seed = 7> : tensor<768x2304xf32>
    #oflow.init<uniform(-0.1, 0.1), seed = 7> : tensor<64x32xf32>
    #oflow.init<truncated_normal(0.0, 0.02), seed = 7> : tensor<64x32xf32>
    ```

    normal: Box-Muller on words 0-3 (two 53-bit uniforms); uniform: word
    pair 0-1 as a 53-bit fraction of [low, high); truncated_normal: normal
    draws, attempt 0, 1, ... until within mean +- 2 std. Computed in f64,
    rounded once to the element type (f32 or f64).
  }];
  let parameters = (ins StringRefParameter<"the recipe">:$kind,
                        APFloatParameter<"first argument">:$a,
                        APFloatParameter<"second argument">:$b, "uint64_t":$seed,
                        AttributeSelfTypeParameter<"">:$type);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// How many numbers the recipe `kind` takes (-1: not a recipe).
    static int getNumArgs(::llvm::StringRef kind);
    /// The manifest's form: `KIND:a:b:seed`.
    std::string manifestText() const;
  }];
}

#endif // OFLOW_ATTRS_TD
