// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=avx512 | FileCheck %s
// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=avx2 | FileCheck %s --check-prefix=AVX2
// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=none | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @tile
//       CHECK:   %[[FLAT:.*]] = vector.shape_cast %{{.*}} : vector<1x16xf32> to vector<16xf32>
//       CHECK:   %[[E:.*]] = call @_ZGVeN16v_expf(%[[FLAT]]) : (vector<16xf32>) -> vector<16xf32>
//       CHECK:   vector.shape_cast %[[E]] : vector<16xf32> to vector<1x16xf32>
//       CHECK:   call @_ZGVeN16v_erff(%{{.*}}) : (vector<16xf32>) -> vector<16xf32>
//       CHECK:   call @_ZGVdN8v_tanhf(%{{.*}}) : (vector<8xf32>) -> vector<8xf32>
//       CHECK:   call @_ZGVbN4v_logf(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// Not f32, not a supported width, or not a row: left to LLVM.
//       CHECK:   math.exp %{{.*}} : vector<16xf64>
//       CHECK:   math.exp %{{.*}} : vector<32xf32>
//       CHECK:   math.exp %{{.*}} : vector<2x16xf32>
//       CHECK:   math.exp %{{.*}} : f32
// CHECK-DAG: func.func private @_ZGVeN16v_expf(vector<16xf32>) -> vector<16xf32>
// CHECK-DAG: func.func private @_ZGVeN16v_erff(vector<16xf32>) -> vector<16xf32>

// AVX2-LABEL: func.func @tile
//  AVX2-NOT:   _ZGVe
//      AVX2:   math.exp %{{.*}} : vector<1x16xf32>
//      AVX2:   math.erf %{{.*}} : vector<16xf32>
//      AVX2:   call @_ZGVdN8v_tanhf

// NONE-NOT: call
func.func @tile(%a: vector<1x16xf32>, %b: vector<16xf32>, %c: vector<8xf32>,
                %d: vector<4xf32>, %e: vector<16xf64>, %f: vector<32xf32>,
                %g: vector<2x16xf32>, %h: f32)
    -> (vector<1x16xf32>, vector<16xf32>, vector<8xf32>, vector<4xf32>,
        vector<16xf64>, vector<32xf32>, vector<2x16xf32>, f32) {
  %0 = math.exp %a : vector<1x16xf32>
  %1 = math.erf %b : vector<16xf32>
  %2 = math.tanh %c : vector<8xf32>
  %3 = math.log %d : vector<4xf32>
  %4 = math.exp %e : vector<16xf64>
  %5 = math.exp %f : vector<32xf32>
  %6 = math.exp %g : vector<2x16xf32>
  %7 = math.exp %h : f32
  return %0, %1, %2, %3, %4, %5, %6, %7
      : vector<1x16xf32>, vector<16xf32>, vector<8xf32>, vector<4xf32>,
        vector<16xf64>, vector<32xf32>, vector<2x16xf32>, f32
}
