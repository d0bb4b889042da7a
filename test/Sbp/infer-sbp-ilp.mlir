// oflow-infer-sbp{planner=ilp}: the whole function as one integer program
// (ExactPlanner.h), started from the greedy plan.
//
// RUN: oflow-opt %s -split-input-file -oflow-infer-sbp | FileCheck %s --check-prefix=GREEDY
// RUN: oflow-opt %s -split-input-file -oflow-infer-sbp='planner=ilp' | FileCheck %s
// RUN: oflow-opt %s -split-input-file -oflow-infer-sbp='planner=ilp' -oflow-insert-boxing -oflow-verify-sbp | FileCheck %s --check-prefix=BOX
// RUN: not oflow-opt %s -split-input-file -oflow-infer-sbp='planner=exhaustive' 2>&1 | FileCheck %s --check-prefix=BAD

// Tiny tensors on 4 devices. Greedy keeps the batch split through the second
// layer (its look-ahead sees one op ahead), then pays an all-reduce of the
// weight gradient and an all-gather of the returned y. The program sees that
// one all-gather of the 8x32 hidden values, then computing the rest whole,
// costs less.
// GREEDY-LABEL: func.func @myopic(
// GREEDY: oflow.relu {{.*}}oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// GREEDY: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[P(sum)]>], transpose_a

// CHECK-LABEL: func.func @myopic(
// CHECK-SAME: oflow.planner = {greedy_seconds = {{.*}}, ops = 5 : i64, optimal = true, seconds = {{.*}}, solver_edges = 0 : i64, solver_ops = 0 : i64, solver_variables = 0 : i64, tied_groups = 0 : i64}
// CHECK: oflow.matmul %arg0, {{.*}}oflow.sbp = [#oflow.nd_sbp<[S(0)]>]
// CHECK: oflow.relu {{.*}}oflow.operand_sbp = [#oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[B]>]
// CHECK: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[B]>]
// CHECK: oflow.matmul {{.*}}oflow.sbp = [#oflow.nd_sbp<[B]>], transpose_a

// BOX-LABEL: func.func @myopic(
// BOX: oflow.matmul
// BOX-NEXT: oflow.all_gather
// BOX-NOT: oflow.all_reduce
// BOX: return
module attributes {oflow.mesh = #oflow.mesh<4>} {
  oflow.variable @w1 param : tensor<64x32xf32>
  oflow.variable @w2 param : tensor<32x64xf32>
  func.func @myopic(%x: tensor<8x64xf32> {oflow.name = "x"}) -> tensor<8x64xf32> attributes {oflow.entry = "train"} {
    %w1 = oflow.read_variable @w1 : tensor<64x32xf32>
    %h = oflow.matmul %x, %w1 : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32> loc("/fc1/matmul")
    %r = oflow.relu %h : tensor<8x32xf32> loc("/act/relu")
    %w2 = oflow.read_variable @w2 : tensor<32x64xf32>
    %y = oflow.matmul %r, %w2 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32> loc("/fc2/matmul")
    %gw2 = oflow.matmul %r, %y {transpose_a} : (tensor<8x32xf32>, tensor<8x64xf32>) -> tensor<32x64xf32> loc("/fc2/matmul")
    %nw2 = oflow.sub %w2, %gw2 : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> loc("/fc2/update")
    oflow.write_variable @w2, %nw2 : tensor<32x64xf32>
    return %y : tensor<8x64xf32>
  }
}

// -----

// Repeated layers: the same op of /blocks.0 and /blocks.1 (names equal up to
// the layer index, same types) is tied, one group per op; the weights'
// names (blocks.N.fc.weight) too.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: tied_groups = 3 : i64
module attributes {oflow.mesh = #oflow.mesh<2x2>} {
  oflow.variable @w0 param : tensor<64x64xf32>
  oflow.variable @w1 param : tensor<64x64xf32>
  func.func @layers(%x: tensor<8x64xf32> {oflow.name = "x"}) -> tensor<8x64xf32> attributes {oflow.entry = "train"} {
    %w0 = oflow.read_variable @w0 : tensor<64x64xf32>
    %h0 = oflow.matmul %x, %w0 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("/blocks.0/fc/matmul")
    %r0 = oflow.relu %h0 : tensor<8x64xf32> loc("/blocks.0/act/relu")
    %w1 = oflow.read_variable @w1 : tensor<64x64xf32>
    %h1 = oflow.matmul %r0, %w1 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("/blocks.1/fc/matmul")
    %r1 = oflow.relu %h1 : tensor<8x64xf32> loc("/blocks.1/act/relu")
    %s0 = oflow.mul %w0, %w0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("blocks.0.fc.weight")
    %s1 = oflow.mul %w1, %w1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("blocks.1.fc.weight")
    oflow.write_variable @w0, %s0 : tensor<64x64xf32>
    oflow.write_variable @w1, %s1 : tensor<64x64xf32>
    return %r1 : tensor<8x64xf32>
  }
}

// -----

// BAD: unknown planner 'exhaustive' (greedy or ilp)
module attributes {oflow.mesh = #oflow.mesh<2>} {
}
