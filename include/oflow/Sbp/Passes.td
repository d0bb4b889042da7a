//===- Passes.td - SBP passes ------------------------------*- tablegen -*-===//
#ifndef OFLOW_SBP_PASSES_TD
#define OFLOW_SBP_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestSbpSignatures : Pass<"oflow-test-sbp-signatures"> {
  let summary = "print each op's SBP signatures as remarks (for tests)";
  let description = [{
    For every op implementing `SbpSignatureOpInterface` and every axis of
    `mesh`, emits one remark listing the op's signatures on that axis (after
    the divisibility check against that axis's size):

    ```
    remark: axis 0 (size 2): B, B -> B | S(0), B -> S(0) | ...
    ```

    An op that computes on tensors but lists no signatures is an error, so a
    test over a whole training graph fails when an op is added without them.
  }];
  let options = [
    ListOption<"mesh", "mesh", "int64_t",
               "mesh axis sizes (one remark per axis); default: one axis of 2">,
  ];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

def VerifySbp : Pass<"oflow-verify-sbp", "::mlir::ModuleOp"> {
  let summary = "check that every op runs one of its SBP signatures";
  let description = [{
    After SBP choice every value has an nd-SBP (`oflow.sbp` on the op
    that defines it, or on the function argument) for the module's
    `oflow.mesh` (one device by default). For every op with SBP signatures,
    the entries of its operands and results on each mesh axis must form one
    of the op's signatures for that axis's size; otherwise boxing is missing.
  }];
  let dependentDialects = ["::mlir::oflow::OFlowDialect"];
}

#endif // OFLOW_SBP_PASSES_TD
