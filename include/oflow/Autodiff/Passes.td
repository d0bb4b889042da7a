//===- Passes.td - reverse-mode autodiff pass ---------------*- tablegen -*-===//
#ifndef OFLOW_AUTODIFF_PASSES_TD
#define OFLOW_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def OFlowAutodiff : Pass<"oflow-autodiff", "mlir::ModuleOp"> {
  let summary = "append the gradients of the loss w.r.t. the trainable weights";
  let description = [{
    The entry function returns the scalar loss (a 0-d float tensor) as its
    first result. The pass finds the trainable weights (float `oflow.weight`
    ops that a differentiable path connects to the loss, minus the frozen
    ones), marks them `oflow.trainable`, walks the function backwards applying
    one gradient rule per op, and emits, just before the return, one
    `oflow.gradient "name", %grad` per trained weight in the order of the
    weight's first appearance. Ops of a weight name used several times share
    one summed gradient. Results of the function are unchanged.

    ```mlir
    %w = oflow.weight "w", dense<...> {oflow.trainable} : tensor<4x3xf32>
    ...
    oflow.gradient "w", %dw : tensor<4x3xf32>
    return %loss : tensor<f32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "the function that returns the loss as its first result">,
    ListOption<"freeze", "freeze", "std::string",
               "weights not to train: names or regular expressions (full match)">,
  ];
  let dependentDialects = ["mlir::oflow::OFlowDialect"];
}

#endif // OFLOW_AUTODIFF_PASSES_TD
