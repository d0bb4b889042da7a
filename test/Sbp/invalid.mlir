// The test pass refuses a mesh axis that holds no device.
//
// RUN: not oflow-opt %s -oflow-test-sbp-signatures=mesh=2,0 -o /dev/null 2>&1 | FileCheck %s

// CHECK: error: mesh axis sizes must be positive
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = oflow.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
