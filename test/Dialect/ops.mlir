// Round trip of every oflow op: the custom form prints and parses back
// (twice), and the generic form parses back. Each function is one case; the
// result types written here are the ones inference derives, so the verifier
// (which re-infers them) accepts them.
//
// RUN: oflow-opt %s -split-input-file | oflow-opt -split-input-file | FileCheck %s
// RUN: oflow-opt %s -split-input-file --mlir-print-op-generic | oflow-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @constant_int(
// CHECK: %0 = oflow.constant dense<[2, 8]> : tensor<2xi64>
func.func @constant_int() -> tensor<2xi64> {
  %0 = oflow.constant dense<[2, 8]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @constant_splat_and_scalar(
// CHECK: %0 = oflow.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %1 = oflow.constant dense<5.000000e-01> : tensor<f32>
func.func @constant_splat_and_scalar() -> (tensor<4x8xf32>, tensor<f32>) {
  %0 = oflow.constant dense<1.0> : tensor<4x8xf32>
  %1 = oflow.constant dense<5.000000e-01> : tensor<f32>
  return %0, %1 : tensor<4x8xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @weight_resource(
// CHECK: %0 = oflow.weight "fc1.weight", dense_resource<fc1.weight> : tensor<64x32xf32>
func.func @weight_resource() -> tensor<64x32xf32> {
  %0 = oflow.weight "fc1.weight", dense_resource<fc1.weight> : tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// Weights drawn by the executable from a recipe (native IR, no data).
// CHECK-LABEL: func.func @weight_recipes(
// CHECK: oflow.weight "h0.w", #oflow.init<normal(0.000000e+00, 2.000000e-02), seed = 7> : tensor<64x32xf32>
// CHECK: oflow.weight "h0.b", #oflow.init<zeros> : tensor<32xf32>
// CHECK: oflow.weight "ln.g", #oflow.init<ones> : tensor<32xf64>
// CHECK: oflow.weight "u", #oflow.init<uniform(-1.000000e-01, 1.000000e-01), seed = 3> : tensor<4xf32>
// CHECK: oflow.weight "t", #oflow.init<truncated_normal(0.000000e+00, 1.000000e+00), seed = 1> : tensor<4xf32>
// CHECK: oflow.weight "c", #oflow.init<constant(2.500000e-01)> : tensor<4xf32>
func.func @weight_recipes() -> (tensor<64x32xf32>, tensor<32xf32>, tensor<32xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = oflow.weight "h0.w", #oflow.init<normal(0.0, 0.02), seed = 7> : tensor<64x32xf32>
  %1 = oflow.weight "h0.b", #oflow.init<zeros> : tensor<32xf32>
  %2 = oflow.weight "ln.g", #oflow.init<ones> : tensor<32xf64>
  %3 = oflow.weight "u", #oflow.init<uniform(-0.1, 0.1), seed = 3> : tensor<4xf32>
  %4 = oflow.weight "t", #oflow.init<truncated_normal(0.0, 1.0), seed = 1> : tensor<4xf32>
  %5 = oflow.weight "c", #oflow.init<constant(0.25)> : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<64x32xf32>, tensor<32xf32>, tensor<32xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @weight_dense(
// CHECK: %0 = oflow.weight "bn.running_mean", dense<0.000000e+00> : tensor<8xf32>
func.func @weight_dense() -> tensor<8xf32> {
  %0 = oflow.weight "bn.running_mean", dense<0.0> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @neg(
// CHECK: %0 = oflow.neg %arg0 : tensor<4x8xf32>
// CHECK-NEXT: %1 = oflow.neg %arg1 : tensor<3xi32>
func.func @neg(%a: tensor<4x8xf32>, %b: tensor<3xi32>) -> (tensor<4x8xf32>, tensor<3xi32>) {
  %0 = oflow.neg %a : tensor<4x8xf32>
  %1 = oflow.neg %b : tensor<3xi32>
  return %0, %1 : tensor<4x8xf32>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @exp(
// CHECK: %0 = oflow.exp %arg0 : tensor<4x8xf32>
func.func @exp(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = oflow.exp %a : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @log(
// CHECK: %0 = oflow.log %arg0 : tensor<4x8xf16>
func.func @log(%a: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = oflow.log %a : tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @sqrt(
// CHECK: %0 = oflow.sqrt %arg0 : tensor<f32>
func.func @sqrt(%a: tensor<f32>) -> tensor<f32> {
  %0 = oflow.sqrt %a : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @rsqrt(
// CHECK: %0 = oflow.rsqrt %arg0 : tensor<8x1xf32>
func.func @rsqrt(%a: tensor<8x1xf32>) -> tensor<8x1xf32> {
  %0 = oflow.rsqrt %a : tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

// CHECK-LABEL: func.func @reciprocal(
// CHECK: %0 = oflow.reciprocal %arg0 : tensor<16xbf16>
func.func @reciprocal(%a: tensor<16xbf16>) -> tensor<16xbf16> {
  %0 = oflow.reciprocal %a : tensor<16xbf16>
  return %0 : tensor<16xbf16>
}

// -----

// CHECK-LABEL: func.func @tanh(
// CHECK: %0 = oflow.tanh %arg0 : tensor<2x3x4xf32>
func.func @tanh(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = oflow.tanh %a : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @sigmoid(
// CHECK: %0 = oflow.sigmoid %arg0 : tensor<4x8xf64>
func.func @sigmoid(%a: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %0 = oflow.sigmoid %a : tensor<4x8xf64>
  return %0 : tensor<4x8xf64>
}

// -----

// CHECK-LABEL: func.func @relu(
// CHECK: %0 = oflow.relu %arg0 : tensor<4x8xf32>
// CHECK-NEXT: %1 = oflow.relu %arg1 : tensor<5xi64>
func.func @relu(%a: tensor<4x8xf32>, %b: tensor<5xi64>) -> (tensor<4x8xf32>, tensor<5xi64>) {
  %0 = oflow.relu %a : tensor<4x8xf32>
  %1 = oflow.relu %b : tensor<5xi64>
  return %0, %1 : tensor<4x8xf32>, tensor<5xi64>
}

// -----

// CHECK-LABEL: func.func @erf(
// CHECK: %0 = oflow.erf %arg0 : tensor<4x8xf32>
func.func @erf(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = oflow.erf %a : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @abs(
// CHECK: %0 = oflow.abs %arg0 : tensor<4x8xf32>
// CHECK-NEXT: %1 = oflow.abs %arg1 : tensor<7xi32>
func.func @abs(%a: tensor<4x8xf32>, %b: tensor<7xi32>) -> (tensor<4x8xf32>, tensor<7xi32>) {
  %0 = oflow.abs %a : tensor<4x8xf32>
  %1 = oflow.abs %b : tensor<7xi32>
  return %0, %1 : tensor<4x8xf32>, tensor<7xi32>
}

// -----

// CHECK-LABEL: func.func @not(
// CHECK: %0 = oflow.not %arg0 : tensor<64x64xi1>
func.func @not(%a: tensor<64x64xi1>) -> tensor<64x64xi1> {
  %0 = oflow.not %a : tensor<64x64xi1>
  return %0 : tensor<64x64xi1>
}

// -----

// CHECK-LABEL: func.func @gelu(
// CHECK: %0 = oflow.gelu none %arg0 : tensor<8x256xf32>
// CHECK-NEXT: %1 = oflow.gelu tanh %arg0 : tensor<8x256xf32>
func.func @gelu(%a: tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>) {
  %0 = oflow.gelu none %a : tensor<8x256xf32>
  %1 = oflow.gelu tanh %a : tensor<8x256xf32>
  return %0, %1 : tensor<8x256xf32>, tensor<8x256xf32>
}

// -----

// CHECK-LABEL: func.func @add_same_shape(
// CHECK: %0 = oflow.add %arg0, %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @add_same_shape(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = oflow.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @add_broadcast_rank(
// CHECK: %0 = oflow.add %arg0, %arg1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @add_broadcast_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = oflow.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @add_broadcast_scalar(
// CHECK: %0 = oflow.add %arg0, %arg1 : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @add_broadcast_scalar(%a: tensor<f32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = oflow.add %a, %b : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @add_broadcast_both(
// CHECK: %0 = oflow.add %arg0, %arg1 : (tensor<4x1xi32>, tensor<1x8xi32>) -> tensor<4x8xi32>
func.func @add_broadcast_both(%a: tensor<4x1xi32>, %b: tensor<1x8xi32>) -> tensor<4x8xi32> {
  %0 = oflow.add %a, %b : (tensor<4x1xi32>, tensor<1x8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

// CHECK-LABEL: func.func @sub(
// CHECK: %0 = oflow.sub %arg0, %arg1 : (tensor<8x4x1x64xf32>, tensor<64x1xf32>) -> tensor<8x4x64x64xf32>
func.func @sub(%a: tensor<8x4x1x64xf32>, %b: tensor<64x1xf32>) -> tensor<8x4x64x64xf32> {
  %0 = oflow.sub %a, %b : (tensor<8x4x1x64xf32>, tensor<64x1xf32>) -> tensor<8x4x64x64xf32>
  return %0 : tensor<8x4x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @mul(
// CHECK: %0 = oflow.mul %arg0, %arg1 : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
func.func @mul(%a: tensor<2x3xi64>, %b: tensor<i64>) -> tensor<2x3xi64> {
  %0 = oflow.mul %a, %b : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @div(
// CHECK: %0 = oflow.div %arg0, %arg1 : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
func.func @div(%a: tensor<8x64xf32>, %b: tensor<8x1xf32>) -> tensor<8x64xf32> {
  %0 = oflow.div %a, %b : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @pow(
// CHECK: %0 = oflow.pow %arg0, %arg1 : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
func.func @pow(%a: tensor<8x64xf32>, %b: tensor<f32>) -> tensor<8x64xf32> {
  %0 = oflow.pow %a, %b : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @max(
// CHECK: %0 = oflow.max %arg0, %arg1 : (tensor<3x1x5xf32>, tensor<4x1xf32>) -> tensor<3x4x5xf32>
func.func @max(%a: tensor<3x1x5xf32>, %b: tensor<4x1xf32>) -> tensor<3x4x5xf32> {
  %0 = oflow.max %a, %b : (tensor<3x1x5xf32>, tensor<4x1xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @min(
// CHECK: %0 = oflow.min %arg0, %arg1 : (tensor<5xui8>, tensor<5xui8>) -> tensor<5xui8>
func.func @min(%a: tensor<5xui8>, %b: tensor<5xui8>) -> tensor<5xui8> {
  %0 = oflow.min %a, %b : (tensor<5xui8>, tensor<5xui8>) -> tensor<5xui8>
  return %0 : tensor<5xui8>
}

// -----

// CHECK-LABEL: func.func @compare_predicates(
// CHECK: %0 = oflow.compare eq %arg0, %arg1 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
// CHECK-NEXT: %1 = oflow.compare ne %arg1, %arg0 : (tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xi1>
// CHECK-NEXT: %2 = oflow.compare lt %arg0, %arg0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
// CHECK-NEXT: %3 = oflow.compare le %arg2, %arg2 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
// CHECK-NEXT: %4 = oflow.compare gt %arg0, %arg1 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
// CHECK-NEXT: %5 = oflow.compare ge %arg0, %arg1 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
func.func @compare_predicates(%a: tensor<4x4xf32>, %b: tensor<f32>, %c: tensor<4xi64>) {
  %0 = oflow.compare eq %a, %b : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  %1 = oflow.compare ne %b, %a : (tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %2 = oflow.compare lt %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %3 = oflow.compare le %c, %c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %4 = oflow.compare gt %a, %b : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  %5 = oflow.compare ge %a, %b : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
  return
}

// -----

// CHECK-LABEL: func.func @where(
// CHECK: %0 = oflow.where %arg0, %arg1, %arg2 : (tensor<1x1x64x64xi1>, tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64x64xf32>
func.func @where(%m: tensor<1x1x64x64xi1>, %x: tensor<8x4x64x64xf32>, %y: tensor<f32>) -> tensor<8x4x64x64xf32> {
  %0 = oflow.where %m, %x, %y : (tensor<1x1x64x64xi1>, tensor<8x4x64x64xf32>, tensor<f32>) -> tensor<8x4x64x64xf32>
  return %0 : tensor<8x4x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @where_cond_widens(
// CHECK: %0 = oflow.where %arg0, %arg1, %arg2 : (tensor<3x4xi1>, tensor<4xi32>, tensor<1xi32>) -> tensor<3x4xi32>
func.func @where_cond_widens(%m: tensor<3x4xi1>, %x: tensor<4xi32>, %y: tensor<1xi32>) -> tensor<3x4xi32> {
  %0 = oflow.where %m, %x, %y : (tensor<3x4xi1>, tensor<4xi32>, tensor<1xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}

// -----

// CHECK-LABEL: func.func @cast(
// CHECK: %0 = oflow.cast %arg0 to f32 : tensor<8xi64>
// CHECK-NEXT: %1 = oflow.cast %arg1 to i32 : tensor<2x3xf32>
// CHECK-NEXT: %2 = oflow.cast %arg1 to bf16 : tensor<2x3xf32>
// CHECK-NEXT: %3 = oflow.cast %arg2 to f16 : tensor<4xi1>
// CHECK-NEXT: %4 = oflow.cast %arg1 to i1 : tensor<2x3xf32>
func.func @cast(%i: tensor<8xi64>, %f: tensor<2x3xf32>, %b: tensor<4xi1>) {
  %0 = oflow.cast %i to f32 : tensor<8xi64>
  %1 = oflow.cast %f to i32 : tensor<2x3xf32>
  %2 = oflow.cast %f to bf16 : tensor<2x3xf32>
  %3 = oflow.cast %b to f16 : tensor<4xi1>
  %4 = oflow.cast %f to i1 : tensor<2x3xf32>
  return
}

// -----

// CHECK-LABEL: func.func @dropout_identity(
// CHECK: %0 = oflow.dropout %arg0 {ratio = 0.000000e+00 : f64} : tensor<8x64xf32>
func.func @dropout_identity(%a: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = oflow.dropout %a {ratio = 0.0 : f64} : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_seeded(
// CHECK: %0 = oflow.dropout %arg0 {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
func.func @dropout_seeded(%a: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = oflow.dropout %a {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// In a train entry (the step), and a rank's piece after partitioning.
// CHECK-LABEL: func.func @dropout_step(
// CHECK: %0 = oflow.dropout %arg0 step %arg1 {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
// CHECK: %1 = oflow.dropout %arg0 step %arg1 offsets(%arg2, %arg3) {global_shape = array<i64: 16, 64>, ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
func.func @dropout_step(%a: tensor<8x64xf32>, %s: tensor<i64>, %o0: tensor<i64>, %o1: tensor<i64>) -> tensor<8x64xf32> {
  %0 = oflow.dropout %a step %s {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
  %1 = oflow.dropout %a step %s offsets(%o0, %o1) {global_shape = array<i64: 16, 64>, ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @matmul(
// CHECK: %0 = oflow.matmul %arg0, %arg1 : (tensor<32x16xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
func.func @matmul(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.matmul %a, %b : (tensor<32x16xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_int(
// CHECK: %0 = oflow.matmul %arg0, %arg1 : (tensor<3x5xi32>, tensor<5x2xi32>) -> tensor<3x2xi32>
func.func @matmul_int(%a: tensor<3x5xi32>, %b: tensor<5x2xi32>) -> tensor<3x2xi32> {
  %0 = oflow.matmul %a, %b : (tensor<3x5xi32>, tensor<5x2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @matmul_batched(
// CHECK: %0 = oflow.matmul %arg0, %arg1 : (tensor<8x64x16xf32>, tensor<16x32xf32>) -> tensor<8x64x32xf32>
func.func @matmul_batched(%a: tensor<8x64x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x64x32xf32> {
  %0 = oflow.matmul %a, %b : (tensor<8x64x16xf32>, tensor<16x32xf32>) -> tensor<8x64x32xf32>
  return %0 : tensor<8x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_broadcast_batch(
// CHECK: %0 = oflow.matmul %arg0, %arg1 : (tensor<8x1x64x16xf32>, tensor<4x16x32xf32>) -> tensor<8x4x64x32xf32>
func.func @matmul_broadcast_batch(%a: tensor<8x1x64x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<8x4x64x32xf32> {
  %0 = oflow.matmul %a, %b : (tensor<8x1x64x16xf32>, tensor<4x16x32xf32>) -> tensor<8x4x64x32xf32>
  return %0 : tensor<8x4x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_a(
// CHECK: %0 = oflow.matmul %arg0, %arg1 {transpose_a} : (tensor<16x32xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
func.func @matmul_transpose_a(%a: tensor<16x32xf32>, %b: tensor<16x64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.matmul %a, %b {transpose_a} : (tensor<16x32xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_b(
// CHECK: %0 = oflow.matmul %arg0, %arg1 {transpose_b} : (tensor<8x4x64x16xf32>, tensor<8x4x48x16xf32>) -> tensor<8x4x64x48xf32>
func.func @matmul_transpose_b(%q: tensor<8x4x64x16xf32>, %k: tensor<8x4x48x16xf32>) -> tensor<8x4x64x48xf32> {
  %0 = oflow.matmul %q, %k {transpose_b} : (tensor<8x4x64x16xf32>, tensor<8x4x48x16xf32>) -> tensor<8x4x64x48xf32>
  return %0 : tensor<8x4x64x48xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_both(
// CHECK: %0 = oflow.matmul %arg0, %arg1 {transpose_a, transpose_b} : (tensor<2x16x32xf32>, tensor<64x16xf32>) -> tensor<2x32x64xf32>
func.func @matmul_transpose_both(%a: tensor<2x16x32xf32>, %b: tensor<64x16xf32>) -> tensor<2x32x64xf32> {
  %0 = oflow.matmul %a, %b {transpose_a, transpose_b} : (tensor<2x16x32xf32>, tensor<64x16xf32>) -> tensor<2x32x64xf32>
  return %0 : tensor<2x32x64xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_no_c(
// CHECK: %0 = oflow.gemm %arg0, %arg1 : (tensor<32x16xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
func.func @gemm_no_c(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.gemm %a, %b : (tensor<32x16xf32>, tensor<16x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_linear(
// CHECK: %0 = oflow.gemm %arg0, %arg1, %arg2 {transpose_b} : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
func.func @gemm_linear(%x: tensor<32x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.gemm %x, %w, %b {transpose_b} : (tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_full_c(
// CHECK: %0 = oflow.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transpose_a, transpose_b} : (tensor<16x32xf32>, tensor<64x16xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
func.func @gemm_full_c(%a: tensor<16x32xf32>, %b: tensor<64x16xf32>, %c: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = oflow.gemm %a, %b, %c {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transpose_a, transpose_b} : (tensor<16x32xf32>, tensor<64x16xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_c_column_and_scalar(
// CHECK: %0 = oflow.gemm %arg0, %arg1, %arg2 : (tensor<4x3xf64>, tensor<3x5xf64>, tensor<4x1xf64>) -> tensor<4x5xf64>
// CHECK-NEXT: %1 = oflow.gemm %arg0, %arg1, %arg3 {beta = 0.000000e+00 : f32} : (tensor<4x3xf64>, tensor<3x5xf64>, tensor<f64>) -> tensor<4x5xf64>
func.func @gemm_c_column_and_scalar(%a: tensor<4x3xf64>, %b: tensor<3x5xf64>, %c: tensor<4x1xf64>, %s: tensor<f64>) {
  %0 = oflow.gemm %a, %b, %c : (tensor<4x3xf64>, tensor<3x5xf64>, tensor<4x1xf64>) -> tensor<4x5xf64>
  %1 = oflow.gemm %a, %b, %s {beta = 0.000000e+00 : f32} : (tensor<4x3xf64>, tensor<3x5xf64>, tensor<f64>) -> tensor<4x5xf64>
  return
}

// -----

// CHECK-LABEL: func.func @reduce_sum(
// CHECK: %0 = oflow.reduce_sum %arg0 {axes = array<i64: 1>} : (tensor<8x16x32xf32>) -> tensor<8x1x32xf32>
// CHECK-NEXT: %1 = oflow.reduce_sum %arg0 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<8x16x32xf32>) -> tensor<16xf32>
// CHECK-NEXT: %2 = oflow.reduce_sum %arg0 {axes = array<i64: 2, 0, 1>, keepdims = false} : (tensor<8x16x32xf32>) -> tensor<f32>
func.func @reduce_sum(%x: tensor<8x16x32xf32>) {
  %0 = oflow.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x16x32xf32>) -> tensor<8x1x32xf32>
  %1 = oflow.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<8x16x32xf32>) -> tensor<16xf32>
  %2 = oflow.reduce_sum %x {axes = array<i64: 2, 0, 1>, keepdims = false} : (tensor<8x16x32xf32>) -> tensor<f32>
  return
}

// -----

// CHECK-LABEL: func.func @reduce_mean(
// CHECK: %0 = oflow.reduce_mean %arg0 {axes = array<i64: 1>} : (tensor<8x64xf32>) -> tensor<8x1xf32>
// CHECK-NEXT: %1 = oflow.reduce_mean %arg0 {axes = array<i64: 0, 1>} : (tensor<8x64xf32>) -> tensor<1x1xf32>
// CHECK-NEXT: %2 = oflow.reduce_mean %arg0 {axes = array<i64: 0>, keepdims = false} : (tensor<8x64xf32>) -> tensor<64xf32>
func.func @reduce_mean(%x: tensor<8x64xf32>) {
  %0 = oflow.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<8x64xf32>) -> tensor<8x1xf32>
  %1 = oflow.reduce_mean %x {axes = array<i64: 0, 1>} : (tensor<8x64xf32>) -> tensor<1x1xf32>
  %2 = oflow.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<8x64xf32>) -> tensor<64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @reduce_max(
// CHECK: %0 = oflow.reduce_max %arg0 {axes = array<i64: 3>, keepdims = false} : (tensor<2x3x4x5xi32>) -> tensor<2x3x4xi32>
// CHECK-NEXT: %1 = oflow.reduce_max %arg0 {axes = array<i64: 1, 3>} : (tensor<2x3x4x5xi32>) -> tensor<2x1x4x1xi32>
func.func @reduce_max(%x: tensor<2x3x4x5xi32>) {
  %0 = oflow.reduce_max %x {axes = array<i64: 3>, keepdims = false} : (tensor<2x3x4x5xi32>) -> tensor<2x3x4xi32>
  %1 = oflow.reduce_max %x {axes = array<i64: 1, 3>} : (tensor<2x3x4x5xi32>) -> tensor<2x1x4x1xi32>
  return
}

// -----

// CHECK-LABEL: func.func @softmax(
// CHECK: %0 = oflow.softmax %arg0 {axis = 3 : i64} : tensor<8x4x64x64xf32>
func.func @softmax(%x: tensor<8x4x64x64xf32>) -> tensor<8x4x64x64xf32> {
  %0 = oflow.softmax %x {axis = 3 : i64} : tensor<8x4x64x64xf32>
  return %0 : tensor<8x4x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax(
// CHECK: %0 = oflow.log_softmax %arg0 {axis = 1 : i64} : tensor<32x10xf32>
// CHECK-NEXT: %1 = oflow.log_softmax %0 {axis = 0 : i64} : tensor<32x10xf32>
func.func @log_softmax(%x: tensor<32x10xf32>) -> tensor<32x10xf32> {
  %0 = oflow.log_softmax %x {axis = 1 : i64} : tensor<32x10xf32>
  %1 = oflow.log_softmax %0 {axis = 0 : i64} : tensor<32x10xf32>
  return %1 : tensor<32x10xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm(
// CHECK: %0 = oflow.layer_norm %arg0, %arg1, %arg2 {axis = 2 : i64} : (tensor<8x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x64xf32>
func.func @layer_norm(%x: tensor<8x64x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64x64xf32> {
  %0 = oflow.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<8x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x64xf32>
  return %0 : tensor<8x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_no_bias(
// CHECK: %0 = oflow.layer_norm %arg0, %arg1 {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<8x16x32xf32>, tensor<16x32xf32>) -> tensor<8x16x32xf32>
func.func @layer_norm_no_bias(%x: tensor<8x16x32xf32>, %g: tensor<16x32xf32>) -> tensor<8x16x32xf32> {
  %0 = oflow.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<8x16x32xf32>, tensor<16x32xf32>) -> tensor<8x16x32xf32>
  return %0 : tensor<8x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_inference(
// CHECK: %0 = oflow.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32x8x16x16xf32>
func.func @batch_norm_inference(%x: tensor<32x8x16x16xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<32x8x16x16xf32> {
  %0 = oflow.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32} : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32x8x16x16xf32>
  return %0 : tensor<32x8x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_inference_2d(
// CHECK: %0 = oflow.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32x8xf32>
func.func @batch_norm_inference_2d(%x: tensor<32x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<32x8xf32> {
  %0 = oflow.batch_norm_inference %x, %s, %b, %m, %v : (tensor<32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_statistics(
// CHECK: %mean, %variance = oflow.batch_norm_statistics %arg0 : (tensor<32x8x16x16xf32>) -> (tensor<8xf64>, tensor<8xf64>)
func.func @batch_norm_statistics(%x: tensor<32x8x16x16xf32>) -> (tensor<8xf64>, tensor<8xf64>) {
  %m, %v = oflow.batch_norm_statistics %x : (tensor<32x8x16x16xf32>) -> (tensor<8xf64>, tensor<8xf64>)
  return %m, %v : tensor<8xf64>, tensor<8xf64>
}

// -----

// CHECK-LABEL: func.func @batch_norm_training(
// CHECK: %output, %new_running_mean, %new_running_var = oflow.batch_norm_training %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @batch_norm_training(%x: tensor<32x8x16x16xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32} : (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y, %rm, %rv : tensor<32x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_training_momentum(
// CHECK: %output, %new_running_mean, %new_running_var = oflow.batch_norm_training %arg0, %arg1, %arg2, %arg3, %arg4 {momentum = 0.000000e+00 : f32} : (tensor<4x3x10xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x10xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @batch_norm_training_momentum(%x: tensor<4x3x10xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<4x3x10xf32> {
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v {momentum = 0.000000e+00 : f32} : (tensor<4x3x10xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x10xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<4x3x10xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d(
// CHECK: %0 = oflow.conv2d %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<32x1x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<32x8x16x16xf32>
func.func @conv2d(%x: tensor<32x1x16x16xf32>, %w: tensor<8x1x3x3xf32>, %b: tensor<8xf32>) -> tensor<32x8x16x16xf32> {
  %0 = oflow.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<32x1x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<32x8x16x16xf32>
  return %0 : tensor<32x8x16x16xf32>
}

// -----

// H: (15 + 1 + 0 - 3) / 2 + 1 = 7; W: (17 + 2 + 1 - 5) / 3 + 1 = 6.
// CHECK-LABEL: func.func @conv2d_strides_pads(
// CHECK: %0 = oflow.conv2d %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 2, 0, 1>, strides = array<i64: 2, 3>} : (tensor<2x4x15x17xf32>, tensor<8x4x3x5xf32>) -> tensor<2x8x7x6xf32>
func.func @conv2d_strides_pads(%x: tensor<2x4x15x17xf32>, %w: tensor<8x4x3x5xf32>) -> tensor<2x8x7x6xf32> {
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 2, 0, 1>, strides = array<i64: 2, 3>} : (tensor<2x4x15x17xf32>, tensor<8x4x3x5xf32>) -> tensor<2x8x7x6xf32>
  return %0 : tensor<2x8x7x6xf32>
}

// -----

// The dilated 3x3 window spans 5: 16 - 5 + 1 = 12 (H); 16 - 9 + 1 = 8 (W, dilation 4).
// CHECK-LABEL: func.func @conv2d_dilations(
// CHECK: %0 = oflow.conv2d %arg0, %arg1 {dilations = array<i64: 2, 4>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x16x16xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x12x8xf32>
func.func @conv2d_dilations(%x: tensor<1x2x16x16xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x12x8xf32> {
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 2, 4>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x16x16xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x12x8xf32>
  return %0 : tensor<1x4x12x8xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d_groups(
// CHECK: %0 = oflow.conv2d %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, groups = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x2x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
func.func @conv2d_groups(%x: tensor<1x8x10x10xf32>, %w: tensor<16x2x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %0 = oflow.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, groups = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x2x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %0 : tensor<1x16x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d_depthwise(
// CHECK: %0 = oflow.conv2d %arg0, %arg1 {dilations = array<i64: 1, 1>, groups = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32>
func.func @conv2d_depthwise(%x: tensor<1x8x10x10xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32> {
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x5x5xf32>
  return %0 : tensor<1x8x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool2d(
// CHECK: %0 = oflow.max_pool2d %arg0 {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<32x8x16x16xf32>) -> tensor<32x8x8x8xf32>
func.func @max_pool2d(%x: tensor<32x8x16x16xf32>) -> tensor<32x8x8x8xf32> {
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<32x8x16x16xf32>) -> tensor<32x8x8x8xf32>
  return %0 : tensor<32x8x8x8xf32>
}

// -----

// The 3x3 window with dilation 2 spans 5: (12 + 1 + 1 - 5) / 1 + 1 = 10 (H),
// (12 - 5) / 2 + 1 = 4 (W).
// CHECK-LABEL: func.func @max_pool2d_dilations(
// CHECK: %0 = oflow.max_pool2d %arg0 {dilations = array<i64: 2, 2>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 2>} : (tensor<1x3x12x12xf32>) -> tensor<1x3x10x4xf32>
func.func @max_pool2d_dilations(%x: tensor<1x3x12x12xf32>) -> tensor<1x3x10x4xf32> {
  %0 = oflow.max_pool2d %x {dilations = array<i64: 2, 2>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 2>} : (tensor<1x3x12x12xf32>) -> tensor<1x3x10x4xf32>
  return %0 : tensor<1x3x10x4xf32>
}

// -----

// ceil_mode rounds (5 - 2) / 2 up: 3 windows instead of 2.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode(
// CHECK: %0 = oflow.max_pool2d %arg0 {ceil_mode, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK-NEXT: %1 = oflow.max_pool2d %arg0 {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
func.func @max_pool2d_ceil_mode(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) {
  %0 = oflow.max_pool2d %x {ceil_mode, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %1 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
}

// -----

// ceil_mode never adds a window that starts in the right padding: on 6 + 1
// (bottom/right pad) the 4th window would start at 6, past the input.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode_right_pad(
// CHECK: %0 = oflow.max_pool2d %arg0 {ceil_mode, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
func.func @max_pool2d_ceil_mode_right_pad(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32> {
  %0 = oflow.max_pool2d %x {ceil_mode, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @avg_pool2d(
// CHECK: %0 = oflow.avg_pool2d %arg0 {count_include_pad, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x16x8x8xf32>) -> tensor<4x16x8x8xf32>
// CHECK-NEXT: %1 = oflow.avg_pool2d %arg0 {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<4x16x8x8xf32>) -> tensor<4x16x4x4xf32>
func.func @avg_pool2d(%x: tensor<4x16x8x8xf32>) -> (tensor<4x16x8x8xf32>, tensor<4x16x4x4xf32>) {
  %0 = oflow.avg_pool2d %x {count_include_pad, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<4x16x8x8xf32>) -> tensor<4x16x8x8xf32>
  %1 = oflow.avg_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<4x16x8x8xf32>) -> tensor<4x16x4x4xf32>
  return %0, %1 : tensor<4x16x8x8xf32>, tensor<4x16x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @avg_pool2d_ceil_mode(
// CHECK: %0 = oflow.avg_pool2d %arg0 {ceil_mode, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 3>} : (tensor<1x2x7x9xf32>) -> tensor<1x2x3x3xf32>
func.func @avg_pool2d_ceil_mode(%x: tensor<1x2x7x9xf32>) -> tensor<1x2x3x3xf32> {
  %0 = oflow.avg_pool2d %x {ceil_mode, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 3>} : (tensor<1x2x7x9xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @global_avg_pool(
// CHECK: %0 = oflow.global_avg_pool %arg0 : (tensor<32x16x4x4xf32>) -> tensor<32x16x1x1xf32>
// CHECK-NEXT: %1 = oflow.global_avg_pool %arg1 : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
func.func @global_avg_pool(%x: tensor<32x16x4x4xf32>, %y: tensor<2x3x7xf32>) -> (tensor<32x16x1x1xf32>, tensor<2x3x1xf32>) {
  %0 = oflow.global_avg_pool %x : (tensor<32x16x4x4xf32>) -> tensor<32x16x1x1xf32>
  %1 = oflow.global_avg_pool %y : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
  return %0, %1 : tensor<32x16x1x1xf32>, tensor<2x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @reshape(
// CHECK: %0 = oflow.reshape %arg0 [8, 64, 4, 16] : (tensor<8x64x64xf32>) -> tensor<8x64x4x16xf32>
// CHECK-NEXT: %1 = oflow.reshape %arg1 [] : (tensor<1x1xi64>) -> tensor<i64>
func.func @reshape(%x: tensor<8x64x64xf32>, %s: tensor<1x1xi64>) -> (tensor<8x64x4x16xf32>, tensor<i64>) {
  %0 = oflow.reshape %x [8, 64, 4, 16] : (tensor<8x64x64xf32>) -> tensor<8x64x4x16xf32>
  %1 = oflow.reshape %s [] : (tensor<1x1xi64>) -> tensor<i64>
  return %0, %1 : tensor<8x64x4x16xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @flatten(
// CHECK: %0 = oflow.flatten %arg0 : (tensor<32x16x2x2xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: %1 = oflow.flatten %arg0 {axis = 0 : i64} : (tensor<32x16x2x2xf32>) -> tensor<1x2048xf32>
// CHECK-NEXT: %2 = oflow.flatten %arg0 {axis = 2 : i64} : (tensor<32x16x2x2xf32>) -> tensor<512x4xf32>
// CHECK-NEXT: %3 = oflow.flatten %arg0 {axis = 4 : i64} : (tensor<32x16x2x2xf32>) -> tensor<2048x1xf32>
func.func @flatten(%x: tensor<32x16x2x2xf32>) {
  %0 = oflow.flatten %x : (tensor<32x16x2x2xf32>) -> tensor<32x64xf32>
  %1 = oflow.flatten %x {axis = 0 : i64} : (tensor<32x16x2x2xf32>) -> tensor<1x2048xf32>
  %2 = oflow.flatten %x {axis = 2 : i64} : (tensor<32x16x2x2xf32>) -> tensor<512x4xf32>
  %3 = oflow.flatten %x {axis = 4 : i64} : (tensor<32x16x2x2xf32>) -> tensor<2048x1xf32>
  return
}

// -----

// CHECK-LABEL: func.func @transpose(
// CHECK: %0 = oflow.transpose %arg0 [0, 2, 1, 3] : (tensor<8x64x4x16xf32>) -> tensor<8x4x64x16xf32>
// CHECK-NEXT: %1 = oflow.transpose %arg1 [1, 0] : (tensor<3x5xi64>) -> tensor<5x3xi64>
func.func @transpose(%x: tensor<8x64x4x16xf32>, %y: tensor<3x5xi64>) -> (tensor<8x4x64x16xf32>, tensor<5x3xi64>) {
  %0 = oflow.transpose %x [0, 2, 1, 3] : (tensor<8x64x4x16xf32>) -> tensor<8x4x64x16xf32>
  %1 = oflow.transpose %y [1, 0] : (tensor<3x5xi64>) -> tensor<5x3xi64>
  return %0, %1 : tensor<8x4x64x16xf32>, tensor<5x3xi64>
}

// -----

// CHECK-LABEL: func.func @squeeze(
// CHECK: %0 = oflow.squeeze %arg0 [1] : (tensor<8x1x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT: %1 = oflow.squeeze %arg1 [3, 0] : (tensor<1x3x1x1xi1>) -> tensor<3x1xi1>
func.func @squeeze(%x: tensor<8x1x64xf32>, %y: tensor<1x3x1x1xi1>) -> (tensor<8x64xf32>, tensor<3x1xi1>) {
  %0 = oflow.squeeze %x [1] : (tensor<8x1x64xf32>) -> tensor<8x64xf32>
  %1 = oflow.squeeze %y [3, 0] : (tensor<1x3x1x1xi1>) -> tensor<3x1xi1>
  return %0, %1 : tensor<8x64xf32>, tensor<3x1xi1>
}

// -----

// CHECK-LABEL: func.func @unsqueeze(
// CHECK: %0 = oflow.unsqueeze %arg0 [0, 1] : (tensor<64x64xi1>) -> tensor<1x1x64x64xi1>
// CHECK-NEXT: %1 = oflow.unsqueeze %arg0 [3, 1] : (tensor<64x64xi1>) -> tensor<64x1x64x1xi1>
// CHECK-NEXT: %2 = oflow.unsqueeze %arg1 [0] : (tensor<f32>) -> tensor<1xf32>
func.func @unsqueeze(%x: tensor<64x64xi1>, %y: tensor<f32>) -> (tensor<1x1x64x64xi1>, tensor<64x1x64x1xi1>, tensor<1xf32>) {
  %0 = oflow.unsqueeze %x [0, 1] : (tensor<64x64xi1>) -> tensor<1x1x64x64xi1>
  %1 = oflow.unsqueeze %x [3, 1] : (tensor<64x64xi1>) -> tensor<64x1x64x1xi1>
  %2 = oflow.unsqueeze %y [0] : (tensor<f32>) -> tensor<1xf32>
  return %0, %1, %2 : tensor<1x1x64x64xi1>, tensor<64x1x64x1xi1>, tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @expand(
// CHECK: %0 = oflow.expand %arg0 [8, 64] : (tensor<1x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT: %1 = oflow.expand %arg0 [2, 1, 1] : (tensor<1x64xf32>) -> tensor<2x1x64xf32>
// CHECK-NEXT: %2 = oflow.expand %arg1 [3] : (tensor<4x1xi64>) -> tensor<4x3xi64>
func.func @expand(%x: tensor<1x64xf32>, %y: tensor<4x1xi64>) -> (tensor<8x64xf32>, tensor<2x1x64xf32>, tensor<4x3xi64>) {
  %0 = oflow.expand %x [8, 64] : (tensor<1x64xf32>) -> tensor<8x64xf32>
  %1 = oflow.expand %x [2, 1, 1] : (tensor<1x64xf32>) -> tensor<2x1x64xf32>
  %2 = oflow.expand %y [3] : (tensor<4x1xi64>) -> tensor<4x3xi64>
  return %0, %1, %2 : tensor<8x64xf32>, tensor<2x1x64xf32>, tensor<4x3xi64>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK: %0 = oflow.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<8x16xf32>, tensor<8x48xf32>) -> tensor<8x64xf32>
// CHECK-NEXT: %1 = oflow.concat %arg0, %arg2, %arg0 {axis = 0 : i64} : (tensor<8x16xf32>, tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<18x16xf32>
// CHECK-NEXT: %2 = oflow.concat %arg2 {axis = 1 : i64} : (tensor<2x16xf32>) -> tensor<2x16xf32>
func.func @concat(%a: tensor<8x16xf32>, %b: tensor<8x48xf32>, %c: tensor<2x16xf32>) {
  %0 = oflow.concat %a, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<8x48xf32>) -> tensor<8x64xf32>
  %1 = oflow.concat %a, %c, %a {axis = 0 : i64} : (tensor<8x16xf32>, tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<18x16xf32>
  %2 = oflow.concat %c {axis = 1 : i64} : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @slice(
// CHECK: %0 = oflow.slice %arg0 {offsets = array<i64: 0, 0>, sizes = array<i64: 64, 64>, strides = array<i64: 1, 1>} : (tensor<128x128xf32>) -> tensor<64x64xf32>
func.func @slice(%x: tensor<128x128xf32>) -> tensor<64x64xf32> {
  %0 = oflow.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 64, 64>, strides = array<i64: 1, 1>} : (tensor<128x128xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// Reverse the first dim, take every third column from 1, and nothing of the last.
// CHECK-LABEL: func.func @slice_negative_stride(
// CHECK: %0 = oflow.slice %arg0 {offsets = array<i64: 7, 1, 0>, sizes = array<i64: 8, 3, 0>, strides = array<i64: -1, 3, 1>} : (tensor<8x10x4xf32>) -> tensor<8x3x0xf32>
func.func @slice_negative_stride(%x: tensor<8x10x4xf32>) -> tensor<8x3x0xf32> {
  %0 = oflow.slice %x {offsets = array<i64: 7, 1, 0>, sizes = array<i64: 8, 3, 0>, strides = array<i64: -1, 3, 1>} : (tensor<8x10x4xf32>) -> tensor<8x3x0xf32>
  return %0 : tensor<8x3x0xf32>
}

// -----

// CHECK-LABEL: func.func @split(
// CHECK: %0:3 = oflow.split %arg0 {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<8x64x192xf32>) -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>)
func.func @split(%qkv: tensor<8x64x192xf32>) -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>) {
  %q, %k, %v = oflow.split %qkv {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<8x64x192xf32>) -> (tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>)
  return %q, %k, %v : tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @split_uneven(
// CHECK: %0:3 = oflow.split %arg0 {axis = 0 : i64, sizes = array<i64: 2, 0, 8>} : (tensor<10x3xi32>) -> (tensor<2x3xi32>, tensor<0x3xi32>, tensor<8x3xi32>)
// CHECK-NEXT: %1 = oflow.split %arg0 {axis = 0 : i64, sizes = array<i64: 10>} : (tensor<10x3xi32>) -> tensor<10x3xi32>
func.func @split_uneven(%x: tensor<10x3xi32>) -> (tensor<2x3xi32>, tensor<0x3xi32>, tensor<8x3xi32>, tensor<10x3xi32>) {
  %a, %b, %c = oflow.split %x {axis = 0 : i64, sizes = array<i64: 2, 0, 8>} : (tensor<10x3xi32>) -> (tensor<2x3xi32>, tensor<0x3xi32>, tensor<8x3xi32>)
  %d = oflow.split %x {axis = 0 : i64, sizes = array<i64: 10>} : (tensor<10x3xi32>) -> tensor<10x3xi32>
  return %a, %b, %c, %d : tensor<2x3xi32>, tensor<0x3xi32>, tensor<8x3xi32>, tensor<10x3xi32>
}

// -----

// CHECK-LABEL: func.func @gather(
// CHECK: %0 = oflow.gather %arg0, %arg1 : (tensor<104x64xf32>, tensor<8x64xi64>) -> tensor<8x64x64xf32>
// CHECK-NEXT: %1 = oflow.gather %arg0, %arg2 {axis = 1 : i64} : (tensor<104x64xf32>, tensor<5xi32>) -> tensor<104x5xf32>
// CHECK-NEXT: %2 = oflow.gather %arg0, %arg3 : (tensor<104x64xf32>, tensor<i64>) -> tensor<64xf32>
func.func @gather(%wte: tensor<104x64xf32>, %tokens: tensor<8x64xi64>, %idx: tensor<5xi32>, %one: tensor<i64>) {
  %0 = oflow.gather %wte, %tokens : (tensor<104x64xf32>, tensor<8x64xi64>) -> tensor<8x64x64xf32>
  %1 = oflow.gather %wte, %idx {axis = 1 : i64} : (tensor<104x64xf32>, tensor<5xi32>) -> tensor<104x5xf32>
  %2 = oflow.gather %wte, %one : (tensor<104x64xf32>, tensor<i64>) -> tensor<64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @trilu(
// CHECK: %0 = oflow.trilu %arg0 : tensor<64x64xf32>
// CHECK-NEXT: %1 = oflow.trilu %arg0 {k = -1 : i64, upper = false} : tensor<64x64xf32>
// CHECK-NEXT: %2 = oflow.trilu %arg1 {k = 2 : i64} : tensor<2x3x4x5xi1>
func.func @trilu(%x: tensor<64x64xf32>, %y: tensor<2x3x4x5xi1>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x3x4x5xi1>) {
  %0 = oflow.trilu %x : tensor<64x64xf32>
  %1 = oflow.trilu %x {k = -1 : i64, upper = false} : tensor<64x64xf32>
  %2 = oflow.trilu %y {k = 2 : i64, upper = true} : tensor<2x3x4x5xi1>
  return %0, %1, %2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x3x4x5xi1>
}

// -----

// CHECK-LABEL: func.func @softmax_cross_entropy(
// CHECK: %0 = oflow.softmax_cross_entropy mean %arg0, %arg1 : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
// CHECK-NEXT: %1 = oflow.softmax_cross_entropy sum %arg0, %arg1 : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
// CHECK-NEXT: %2 = oflow.softmax_cross_entropy none %arg0, %arg1 : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<32xf32>
func.func @softmax_cross_entropy(%logits: tensor<32x8xf32>, %labels: tensor<32xi64>) {
  %0 = oflow.softmax_cross_entropy mean %logits, %labels : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
  %1 = oflow.softmax_cross_entropy sum %logits, %labels : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
  %2 = oflow.softmax_cross_entropy none %logits, %labels : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<32xf32>
  return
}

// -----

// CHECK-LABEL: func.func @softmax_cross_entropy_spatial(
// CHECK: %0 = oflow.softmax_cross_entropy mean %arg0, %arg1 {ignore_index = -100 : i64} : (tensor<4x10x8x8xf16>, tensor<4x8x8xi32>) -> tensor<f16>
// CHECK-NEXT: %1 = oflow.softmax_cross_entropy none %arg0, %arg1 {ignore_index = 0 : i64} : (tensor<4x10x8x8xf16>, tensor<4x8x8xi32>) -> tensor<4x8x8xf16>
func.func @softmax_cross_entropy_spatial(%logits: tensor<4x10x8x8xf16>, %labels: tensor<4x8x8xi32>) {
  %0 = oflow.softmax_cross_entropy mean %logits, %labels {ignore_index = -100 : i64} : (tensor<4x10x8x8xf16>, tensor<4x8x8xi32>) -> tensor<f16>
  %1 = oflow.softmax_cross_entropy none %logits, %labels {ignore_index = 0 : i64} : (tensor<4x10x8x8xf16>, tensor<4x8x8xi32>) -> tensor<4x8x8xf16>
  return
}

// -----

// CHECK-LABEL: func.func @nll_loss(
// CHECK: %0 = oflow.nll_loss mean %arg0, %arg1 : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
// CHECK-NEXT: %1 = oflow.nll_loss sum %arg0, %arg1 {ignore_index = 3 : i64} : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
// CHECK-NEXT: %2 = oflow.nll_loss none %arg2, %arg3 : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> tensor<2x7xf32>
func.func @nll_loss(%logp: tensor<32x8xf32>, %labels: tensor<32xi64>, %lp3: tensor<2x5x7xf32>, %l3: tensor<2x7xi64>) {
  %0 = oflow.nll_loss mean %logp, %labels : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
  %1 = oflow.nll_loss sum %logp, %labels {ignore_index = 3 : i64} : (tensor<32x8xf32>, tensor<32xi64>) -> tensor<f32>
  %2 = oflow.nll_loss none %lp3, %l3 : (tensor<2x5x7xf32>, tensor<2x7xi64>) -> tensor<2x7xf32>
  return
}

// -----

// CHECK-LABEL: func.func @mse_loss(
// CHECK: %0 = oflow.mse_loss mean %arg0, %arg1 : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<f32>
// CHECK-NEXT: %1 = oflow.mse_loss sum %arg0, %arg1 : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<f32>
// CHECK-NEXT: %2 = oflow.mse_loss none %arg0, %arg1 : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<32x1xf32>
func.func @mse_loss(%pred: tensor<32x1xf32>, %target: tensor<32x1xf32>) {
  %0 = oflow.mse_loss mean %pred, %target : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<f32>
  %1 = oflow.mse_loss sum %pred, %target : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<f32>
  %2 = oflow.mse_loss none %pred, %target : (tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<32x1xf32>
  return
}

// -----

// CHECK-LABEL: func.func @attention(
// CHECK: %output, %logsumexp = oflow.attention %arg0, %arg1, %arg2 {causal, operand_type = bf16, scale = 1.250000e-01 : f32} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8xf32>)
// CHECK-NEXT: %grad_query, %grad_key, %grad_value = oflow.attention_backward %arg0, %arg1, %arg2, %output, %logsumexp, %arg3 {causal, operand_type = bf16, scale = 1.250000e-01 : f32}
// CHECK-NEXT: %output_0, %logsumexp_1 = oflow.attention %arg4, %arg5, %arg5 {operand_type = f16, scale = 1.000000e+00 : f32} : (tensor<5x32xf32>, tensor<7x32xf32>, tensor<7x32xf32>) -> (tensor<5x32xf32>, tensor<5xf32>)
func.func @attention(%q: tensor<2x3x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>, %do: tensor<2x3x8x16xf32>, %q2: tensor<5x32xf32>, %kv2: tensor<7x32xf32>) {
  %o, %lse = oflow.attention %q, %k, %v {causal, operand_type = bf16, scale = 0.125 : f32} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8xf32>)
  %dq, %dk, %dv = oflow.attention_backward %q, %k, %v, %o, %lse, %do {causal, operand_type = bf16, scale = 0.125 : f32} : (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8x16xf32>) -> (tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>)
  %o2, %lse2 = oflow.attention %q2, %kv2, %kv2 {operand_type = f16, scale = 1.0 : f32} : (tensor<5x32xf32>, tensor<7x32xf32>, tensor<7x32xf32>) -> (tensor<5x32xf32>, tensor<5xf32>)
  return
}
