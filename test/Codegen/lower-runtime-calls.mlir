// oflow-lower-runtime-calls: each call of a placeholder
// __oflow_rt_<kind>_<dtype> becomes a call of oflow_rt_<kind> with the
// buffers passed as addresses (aligned base pointer + offset * element
// bytes, looking through the cast to the dynamic memref type); integer
// arguments pass through; the placeholder declarations are removed.
//
// RUN: oflow-opt %s -oflow-lower-runtime-calls | FileCheck %s

// CHECK-LABEL: func.func @f(
// f32 buffers in the arena: 4 bytes per element of the view's offset.
// CHECK: %[[IN:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<96xf32>
// CHECK: %[[OUT:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<96xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[N:.*]] = arith.constant 96 : i64
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[IN]] : memref<96xf32>
// CHECK-NEXT: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[OFF]], %[[FOUR]] : index
// CHECK-NEXT: %[[A:.*]] = arith.addi %[[PTR]], %[[BYTES]] : index
// CHECK: memref.extract_strided_metadata %[[OUT]]
// CHECK: %[[B:.*]] = arith.addi
// CHECK-NEXT: call @oflow_rt_all_reduce(%[[ZERO]], %[[ZERO]], %[[A]], %[[B]], %[[N]], %[[ZERO]]) : (i64, i64, index, index, i64, i64) -> ()
// i8 buffers: 1 byte per element.
// CHECK: %[[X:.*]] = memref.alloc() : memref<24xi8>
// CHECK: memref.extract_strided_metadata %[[X]] : memref<24xi8>
// CHECK: arith.constant 1 : index
// CHECK: call @oflow_rt_all_gather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, index, index, i64, i64, i64) -> ()
// CHECK-NEXT: return
// Other calls are left alone.
// CHECK: call @other(
// The runtime functions are declared, the placeholders gone.
// CHECK-NOT: __oflow_rt_
// CHECK-DAG: func.func private @oflow_rt_all_reduce(i64, i64, index, index, i64, i64)
// CHECK-DAG: func.func private @oflow_rt_all_gather(i64, index, index, i64, i64, i64)
// CHECK-NOT: __oflow_rt_
module {
  func.func private @__oflow_rt_all_reduce_f32(i64, i64, memref<?xf32>, memref<?xf32>, i64, i64)
  func.func private @__oflow_rt_all_gather_i8(i64, memref<?xi8>, memref<?xi8>, i64, i64, i64)
  func.func @f(%arena: memref<?xi8>) {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %in = memref.view %arena[%c0][] : memref<?xi8> to memref<96xf32>
    %out = memref.view %arena[%c512][] : memref<?xi8> to memref<96xf32>
    %i0 = arith.constant 0 : i64
    %i96 = arith.constant 96 : i64
    %a = memref.cast %in : memref<96xf32> to memref<?xf32>
    %b = memref.cast %out : memref<96xf32> to memref<?xf32>
    call @__oflow_rt_all_reduce_f32(%i0, %i0, %a, %b, %i96, %i0) : (i64, i64, memref<?xf32>, memref<?xf32>, i64, i64) -> ()
    %x = memref.alloc() : memref<24xi8>
    %y = memref.alloc() : memref<96xi8>
    %xc = memref.cast %x : memref<24xi8> to memref<?xi8>
    %yc = memref.cast %y : memref<96xi8> to memref<?xi8>
    %i4 = arith.constant 4 : i64
    %i24 = arith.constant 24 : i64
    %i1 = arith.constant 1 : i64
    call @__oflow_rt_all_gather_i8(%i4, %xc, %yc, %i1, %i24, %i0) : (i64, memref<?xi8>, memref<?xi8>, i64, i64, i64) -> ()
    return
  }
  func.func private @other(memref<?xf32>)
  func.func @g(%m: memref<?xf32>) {
    call @other(%m) : (memref<?xf32>) -> ()
    return
  }
}
