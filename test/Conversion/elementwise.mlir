// RUN: oflow-opt %s -split-input-file --oflow-lower-to-linalg | FileCheck %s

// Broadcasting operands are read through maps with constant 0 for their
// size-1 dims (right-aligned), so elementwise fusion sees plain generics.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x5x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%[[E]] : tensor<4x5x3xf32>)
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>) -> tensor<4x5x3xf32> {
  %0 = oflow.add %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  return %0 : tensor<4x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @integer_ops
// CHECK: arith.maxsi
// CHECK: arith.divsi
// CHECK: arith.minsi
// CHECK: arith.subi
func.func @integer_ops(%a: tensor<8xi32>, %b: tensor<i32>) -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) {
  %0 = oflow.relu %a : tensor<8xi32>
  %1 = oflow.div %a, %b : (tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
  %2 = oflow.min %a, %b : (tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
  %3 = oflow.neg %a : tensor<8xi32>
  return %0, %1, %2, %3 : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>
}

// -----

// float -> int truncates toward zero (fptosi); a bool becomes 0 or 1
// (uitofp); anything non-zero is true.
// CHECK-LABEL: func.func @cast
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.cmpf une
func.func @cast(%a: tensor<8xf32>, %m: tensor<8xi1>) -> (tensor<8xi64>, tensor<8xf16>, tensor<8xf32>, tensor<8xi1>) {
  %0 = oflow.cast %a to i64 : tensor<8xf32>
  %1 = oflow.cast %a to f16 : tensor<8xf32>
  %2 = oflow.cast %m to f32 : tensor<8xi1>
  %3 = oflow.cast %a to i1 : tensor<8xf32>
  return %0, %1, %2, %3 : tensor<8xi64>, tensor<8xf16>, tensor<8xf32>, tensor<8xi1>
}

// -----

// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where_compare
// CHECK: arith.cmpf olt
// CHECK: linalg.generic {indexing_maps = [#[[C]], #{{.*}}, #[[S]], #{{.*}}]
// CHECK: arith.select
func.func @where_compare(%c: tensor<1x4xf32>, %a: tensor<3x4xf32>, %b: tensor<f32>) -> tensor<3x4xf32> {
  %m = oflow.compare lt %c, %b : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xi1>
  %0 = oflow.where %m, %a, %b : (tensor<1x4xi1>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @math
// CHECK: math.erf
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: math.powf
func.func @math(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = oflow.gelu none %a : tensor<8xf32>
  %1 = oflow.sigmoid %a : tensor<8xf32>
  %2 = oflow.gelu tanh %a : tensor<8xf32>
  %3 = oflow.pow %a, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Constants and weights keep their attribute; dropout with ratio 0 is the
// identity.
// CHECK-LABEL: func.func @constants
// CHECK-DAG: arith.constant dense<[2, 8]> : tensor<2xi64>
// CHECK-DAG: arith.constant dense_resource<w> : tensor<2xf32>
// CHECK: return %arg0
func.func @constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) {
  %0 = oflow.constant dense<[2, 8]> : tensor<2xi64>
  %1 = oflow.weight "w", dense_resource<w> : tensor<2xf32>
  %2 = oflow.dropout %x {ratio = 0.0 : f64} : tensor<4xf32>
  return %2, %0, %1 : tensor<4xf32>, tensor<2xi64>, tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Program state and gradients are left for the state lowering.
// CHECK-LABEL: func.func @state
// CHECK: oflow.read_variable @v
// CHECK: linalg.generic
// CHECK: oflow.write_variable @v
// CHECK: oflow.gradient "v"
// CHECK: oflow.variable @v param
func.func @state(%g: tensor<4xf32>) {
  %0 = oflow.read_variable @v : tensor<4xf32>
  %1 = oflow.add %0, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  oflow.write_variable @v, %1 : tensor<4xf32>
  oflow.gradient "v", %g : tensor<4xf32>
  return
}
oflow.variable @v param : tensor<4xf32>
