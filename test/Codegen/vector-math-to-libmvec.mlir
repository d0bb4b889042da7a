// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=avx512 | FileCheck %s
// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=avx2 | FileCheck %s --check-prefix=AVX2
// RUN: oflow-opt %s --oflow-vector-math-to-libmvec=isa=none | FileCheck %s --check-prefix=NONE

// exp: lanes below ln(FLT_MIN) (-inf of a masked softmax) would send the
// whole vector down libmvec's scalar fallback; they are halved, clamped and
// their results squared instead.
// CHECK-LABEL: func.func @tile
//       CHECK:   %[[FLAT:.*]] = vector.shape_cast %{{.*}} : vector<1x16xf32> to vector<16xf32>
//       CHECK:   %[[BOUND:.*]] = arith.constant dense<-87.336{{.*}}> : vector<16xf32>
//       CHECK:   %[[TINY:.*]] = arith.cmpf olt, %[[FLAT]], %[[BOUND]]
//       CHECK:   %[[HALF:.*]] = arith.mulf %[[FLAT]], %{{.*}} : vector<16xf32>
//       CHECK:   %[[H:.*]] = arith.select %[[TINY]], %[[HALF]], %[[FLAT]]
//       CHECK:   %[[C:.*]] = arith.maxnumf %[[H]], %[[BOUND]]
//       CHECK:   %[[ARG:.*]] = arith.select %[[TINY]], %[[C]], %[[FLAT]]
//       CHECK:   %[[E:.*]] = call @_ZGVeN16v_expf(%[[ARG]]) : (vector<16xf32>) -> vector<16xf32>
//       CHECK:   %[[SQ:.*]] = arith.mulf %[[E]], %[[E]]
//       CHECK:   %[[R:.*]] = arith.select %[[TINY]], %[[SQ]], %[[E]]
//       CHECK:   vector.shape_cast %[[R]] : vector<16xf32> to vector<1x16xf32>
//       CHECK:   call @_ZGVeN16v_erff(%{{.*}}) : (vector<16xf32>) -> vector<16xf32>
//       CHECK:   call @_ZGVdN8v_tanhf(%{{.*}}) : (vector<8xf32>) -> vector<8xf32>
//       CHECK:   call @_ZGVbN4v_logf(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// A row of 48: three calls on slices of 16.
//       CHECK:   %[[S0:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [16], strides = [1]} : vector<48xf32> to vector<16xf32>
//       CHECK:   %[[L0:.*]] = call @_ZGVeN16v_logf(%[[S0]])
//       CHECK:   vector.insert_strided_slice %[[L0]], %{{.*}} {offsets = [0], strides = [1]} : vector<16xf32> into vector<48xf32>
//       CHECK:   vector.extract_strided_slice %{{.*}} {offsets = [16]
//       CHECK:   vector.extract_strided_slice %{{.*}} {offsets = [32]
//   CHECK-NOT:   vector.extract_strided_slice
// Not f32, no width divides the row, or not a row: left to LLVM.
//       CHECK:   math.exp %{{.*}} : vector<16xf64>
//       CHECK:   math.log %{{.*}} : vector<6xf32>
//       CHECK:   math.exp %{{.*}} : vector<2x16xf32>
//       CHECK:   math.exp %{{.*}} : f32
// CHECK-DAG: func.func private @_ZGVeN16v_expf(vector<16xf32>) -> vector<16xf32>
// CHECK-DAG: func.func private @_ZGVeN16v_erff(vector<16xf32>) -> vector<16xf32>

// AVX2-LABEL: func.func @tile
//  AVX2-NOT:   _ZGVe
//      AVX2:   call @_ZGVdN8v_expf
//      AVX2:   call @_ZGVdN8v_expf
//      AVX2:   call @_ZGVdN8v_erff
//      AVX2:   call @_ZGVdN8v_erff
//      AVX2:   call @_ZGVdN8v_tanhf

// NONE-NOT: call
func.func @tile(%a: vector<1x16xf32>, %b: vector<16xf32>, %c: vector<8xf32>,
                %d: vector<4xf32>, %f: vector<48xf32>, %e: vector<16xf64>,
                %odd: vector<6xf32>, %g: vector<2x16xf32>, %h: f32)
    -> (vector<1x16xf32>, vector<16xf32>, vector<8xf32>, vector<4xf32>,
        vector<48xf32>, vector<16xf64>, vector<6xf32>, vector<2x16xf32>, f32) {
  %0 = math.exp %a : vector<1x16xf32>
  %1 = math.erf %b : vector<16xf32>
  %2 = math.tanh %c : vector<8xf32>
  %3 = math.log %d : vector<4xf32>
  %5 = math.log %f : vector<48xf32>
  %4 = math.exp %e : vector<16xf64>
  %8 = math.log %odd : vector<6xf32>
  %6 = math.exp %g : vector<2x16xf32>
  %7 = math.exp %h : f32
  return %0, %1, %2, %3, %5, %4, %8, %6, %7
      : vector<1x16xf32>, vector<16xf32>, vector<8xf32>, vector<4xf32>,
        vector<48xf32>, vector<16xf64>, vector<6xf32>, vector<2x16xf32>, f32
}
