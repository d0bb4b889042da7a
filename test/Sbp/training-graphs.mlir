// Every op of the examples' training graphs (forward, gradients, losses,
// optimizer updates, program state) lists SBP signatures: the pass fails on
// any op on tensors without them. On a 2x2 mesh, the GPT token embedding
// table ([80, 64]) may be row-split, giving a partial lookup.
//
// RUN: oflow-compile %oflow_src/examples/mlp/mlp.onnx --emit=training -o %t.mlp.mlir
// RUN: oflow-opt %t.mlp.mlir -oflow-test-sbp-signatures=mesh=2,2 -o /dev/null
// RUN: oflow-compile %oflow_src/examples/cnn/cnn.onnx --emit=training -o %t.cnn.mlir
// RUN: oflow-opt %t.cnn.mlir -oflow-test-sbp-signatures=mesh=2,2 -o /dev/null
// RUN: oflow-compile %oflow_src/examples/gpt/gpt.onnx --emit=training -o %t.gpt.mlir
// RUN: oflow-opt %t.gpt.mlir -oflow-test-sbp-signatures=mesh=2,2 \
// RUN:   -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s

// CHECK: remark: axis 0 (size 2): B, B -> B | S(0), B -> P(sum) [needs indices outside the local rows masked, offset by rank]
