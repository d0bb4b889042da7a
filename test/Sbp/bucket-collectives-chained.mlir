// oflow-bucket-collectives on a 2x2 mesh whose plan all-reduces each gradient
// on axis 1 and then axis 0 (what H200s with IB across nodes and NVLink
// inside choose for the MLP). Fusing the axis-0 bucket joins the loss's
// all-reduce with the label count's, so the count, and every gradient
// computed from it, now waits for the loss's axis-1 all-reduce: that one
// and the fc3 weight gradient's can no longer share a bucket (they did,
// and the fused op read a value defined after it).
//
// RUN: oflow-opt %s -oflow-bucket-collectives -oflow-verify-sbp | FileCheck %s

// CHECK-LABEL: func.func @oflow_train_step(
// CHECK: %[[LOSS:.*]] = oflow.all_reduce %{{.*}} {mesh_axis = 1 : i64
// CHECK: oflow.all_reduce %{{.*}}, %[[LOSS]] {mesh_axis = 0 : i64
// CHECK: %[[W3:.*]] = oflow.all_reduce %{{.*}} {mesh_axis = 1 : i64{{.*}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK: %[[REST:.*]]:5 = oflow.all_reduce {{.*}}mesh_axis = 1 : i64
// CHECK: oflow.all_reduce %[[W3]], %[[REST]]#0, {{.*}}mesh_axis = 0 : i64

module attributes {oflow.mesh = #oflow.mesh<2x2, links = [ib, nvlink]>} {
  oflow.variable @fc1.weight param : tensor<64x32xf32> {model_name = "fc1.weight", sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @fc1.bias param : tensor<64xf32> {model_name = "fc1.bias", sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @fc2.weight param : tensor<64x64xf32> {model_name = "fc2.weight", sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @fc2.bias param : tensor<64xf32> {model_name = "fc2.bias", sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @fc3.weight param : tensor<8x64xf32> {model_name = "fc3.weight", sbp = #oflow.nd_sbp<[B, B]>}
  oflow.variable @fc3.bias param : tensor<8xf32> {model_name = "fc3.bias", sbp = #oflow.nd_sbp<[B, B]>}
  func.func @oflow_train_step(%arg0: tensor<32x32xf32> {oflow.name = "x", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}, %arg1: tensor<32xi64> {oflow.name = "y", oflow.sbp = #oflow.nd_sbp<[S(0), S(0)]>}, %arg2: tensor<f32> {oflow.sbp = #oflow.nd_sbp<[B, B]>, oflow.scalar = "lr"}, %arg3: tensor<i64> {oflow.sbp = #oflow.nd_sbp<[B, B]>, oflow.scalar = "step"}) -> (tensor<f32> {oflow.name = "loss", oflow.sbp = #oflow.nd_sbp<[B, B]>}, tensor<f32> {oflow.sbp = #oflow.nd_sbp<[B, B]>, oflow.scalar = "lr_used"}) attributes {oflow.entry = "train", oflow.optimizer = {clip_grad_norm = 0.000000e+00 : f64, dampening = 0.000000e+00 : f64, kind = "sgd", lr = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, nesterov = false, schedule = "constant", weight_decay = 0.000000e+00 : f64}} {
    %0 = oflow.constant dense<-100> : tensor<i64> {oflow.sbp = [#oflow.nd_sbp<[B, B]>]}
    %1 = oflow.constant dense<0.000000e+00> : tensor<f32> {oflow.sbp = [#oflow.nd_sbp<[B, B]>]}
    %2 = oflow.constant dense<1.000000e+00> : tensor<f32> {oflow.sbp = [#oflow.nd_sbp<[B, B]>]}
    %3 = oflow.read_variable @fc1.weight {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<64x32xf32>
    %4 = oflow.read_variable @fc1.bias {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<64xf32>
    %5 = oflow.read_variable @fc2.weight {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<64x64xf32>
    %6 = oflow.read_variable @fc2.bias {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<64xf32>
    %7 = oflow.read_variable @fc3.weight {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<8x64xf32>
    %8 = oflow.read_variable @fc3.bias {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<8xf32>
    %9 = oflow.gemm %arg0, %3, %4 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>], transpose_b} : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %10 = oflow.relu %9 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : tensor<32x64xf32>
    %11 = oflow.gemm %10, %5, %6 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>], transpose_b} : (tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
    %12 = oflow.relu %11 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : tensor<32x64xf32>
    %13 = oflow.gemm %12, %7, %8 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>], transpose_b} : (tensor<32x64xf32>, tensor<8x64xf32>, tensor<8xf32>) -> tensor<32x8xf32>
    %14 = oflow.compare ne %arg1, %0 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32xi64>, tensor<i64>) -> tensor<32xi1>
    %15 = oflow.cast %14 to f32 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : tensor<32xi1>
    %16 = oflow.all_gather %15 {axis = 0 : i64, mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), B]>]} : (tensor<32xf32>) -> tensor<32xf32>
    %17 = oflow.reduce_sum %16 {axes = array<i64: 0>, keepdims = false, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<32xf32>) -> tensor<f32>
    %18 = oflow.softmax_cross_entropy sum %13, %arg1 {ignore_index = -100 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
    %19 = oflow.all_reduce %18 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<f32>) -> tensor<f32>
    %20 = oflow.all_reduce %19 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<f32>) -> tensor<f32>
    %21 = oflow.all_reduce %17 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<f32>) -> tensor<f32>
    %22 = oflow.div %20, %21 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %23 = oflow.div %2, %21 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %24 = oflow.softmax_cross_entropy_backward sum %13, %arg1, %23 {ignore_index = -100 : i64, oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x8xf32>, tensor<32xi64>, tensor<f32>) -> tensor<32x8xf32>
    %25 = oflow.matmul %24, %7 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x8xf32>, tensor<8x64xf32>) -> tensor<32x64xf32>
    %26 = oflow.matmul %24, %12 {oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>], transpose_a} : (tensor<32x8xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
    %27 = oflow.reduce_sum %24 {axes = array<i64: 0>, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<32x8xf32>) -> tensor<1x8xf32>
    %28 = oflow.all_reduce %27 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %29 = oflow.all_reduce %28 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %30 = oflow.reshape %29 [8] {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x8xf32>) -> tensor<8xf32>
    %31 = oflow.compare gt %12, %1 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x64xf32>, tensor<f32>) -> tensor<32x64xi1>
    %32 = oflow.where %31, %25, %1 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x64xi1>, tensor<32x64xf32>, tensor<f32>) -> tensor<32x64xf32>
    %33 = oflow.matmul %32, %5 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %34 = oflow.matmul %32, %10 {oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>], transpose_a} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %35 = oflow.reduce_sum %32 {axes = array<i64: 0>, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<32x64xf32>) -> tensor<1x64xf32>
    %36 = oflow.all_reduce %35 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %37 = oflow.all_reduce %36 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %38 = oflow.reshape %37 [64] {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x64xf32>) -> tensor<64xf32>
    %39 = oflow.compare gt %10, %1 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x64xf32>, tensor<f32>) -> tensor<32x64xi1>
    %40 = oflow.where %39, %33, %1 {oflow.sbp = [#oflow.nd_sbp<[S(0), S(0)]>]} : (tensor<32x64xi1>, tensor<32x64xf32>, tensor<f32>) -> tensor<32x64xf32>
    %41 = oflow.matmul %40, %arg0 {oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>], transpose_a} : (tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
    %42 = oflow.reduce_sum %40 {axes = array<i64: 0>, oflow.sbp = [#oflow.nd_sbp<[P(sum), P(sum)]>]} : (tensor<32x64xf32>) -> tensor<1x64xf32>
    %43 = oflow.all_reduce %42 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %44 = oflow.all_reduce %43 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x64xf32>) -> tensor<1x64xf32>
    %45 = oflow.reshape %44 [64] {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<1x64xf32>) -> tensor<64xf32>
    %46 = oflow.cast %arg2 to f64 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<f32>
    %47 = oflow.cast %46 to f32 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : tensor<f64>
    %48 = oflow.all_reduce %41 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %49 = oflow.all_reduce %48 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %50 = oflow.mul %49, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
    %51 = oflow.sub %3, %50 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %52 = oflow.mul %45, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
    %53 = oflow.sub %4, %52 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %54 = oflow.all_reduce %34 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %55 = oflow.all_reduce %54 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %56 = oflow.mul %55, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
    %57 = oflow.sub %5, %56 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %58 = oflow.mul %38, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
    %59 = oflow.sub %6, %58 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %60 = oflow.all_reduce %26 {mesh_axis = 1 : i64, oflow.sbp = [#oflow.nd_sbp<[P(sum), B]>]} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %61 = oflow.all_reduce %60 {mesh_axis = 0 : i64, oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %62 = oflow.mul %61, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
    %63 = oflow.sub %7, %62 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    %64 = oflow.mul %30, %47 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    %65 = oflow.sub %8, %64 {oflow.sbp = [#oflow.nd_sbp<[B, B]>]} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    oflow.write_variable @fc1.weight, %51 : tensor<64x32xf32>
    oflow.write_variable @fc1.bias, %53 : tensor<64xf32>
    oflow.write_variable @fc2.weight, %57 : tensor<64x64xf32>
    oflow.write_variable @fc2.bias, %59 : tensor<64xf32>
    oflow.write_variable @fc3.weight, %63 : tensor<8x64xf32>
    oflow.write_variable @fc3.bias, %65 : tensor<8xf32>
    return %22, %47 : tensor<f32>, tensor<f32>
  }
}
