// RUN: oflow-opt %s --oflow-plan-memory --split-input-file --verify-diagnostics | FileCheck %s
// RUN: oflow-opt %s --oflow-plan-memory=host-flag=true --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=HOST

// GPU targets (host-flag): the flag comes from the runtime, not the io buffer.
// HOST-LABEL: func.func @oflow_infer
// HOST: %[[FLAG:.*]] = call @oflow_rt_check_memory() : () -> i8
// HOST: %[[POISON:.*]] = arith.cmpi ne, %[[FLAG]]
// HOST: scf.if %[[POISON]] {
// HOST: func.func private @oflow_rt_check_memory() -> i8

// %a dies when %c is allocated, so %c reuses its bytes; %b overlaps both.
// Every region is poisoned (0xFF) after its last use when the io flag is set.
// CHECK: module attributes {oflow.arena_bytes = 2048 : i64
// CHECK-LABEL: func.func @oflow_infer
// CHECK-SAME: oflow.memory_plan = {buffers = 3 : i64, gathered_weights = 0 : i64, gathered_weights_peak = 0 : i64, lower_bound = 2048 : i64, naive = 3072 : i64, peak = 2048 : i64}
// CHECK: %[[FLAG:.*]] = memref.load
// CHECK: %[[POISON:.*]] = arith.cmpi ne, %[[FLAG]]
// CHECK: %[[A:.*]] = memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: %[[B:.*]] = memref.view %arg2[%c1024{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: linalg.copy ins(%[[A]] : memref<256xf32>) outs(%[[B]] : memref<256xf32>)
// CHECK-NEXT: scf.if %[[POISON]] {
// CHECK: memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xi32>
// CHECK: linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : memref<256xi32>)
// CHECK: memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
module attributes {oflow.io = [{kind = "scalar", name = "poison", offset = 0 : i64, type = tensor<i8>}]} {
  func.func @oflow_infer(%state: memref<?xi8>, %io: memref<?xi8>, %arena: memref<?xi8>) attributes {oflow.entry = "infer"} {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<256xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
    %b = memref.alloc() : memref<256xf32>
    linalg.copy ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
    %c = memref.alloc() : memref<256xf32>
    linalg.copy ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
    %c64 = arith.constant 64 : index
    %out = memref.view %io[%c64][] : memref<?xi8> to memref<256xf32>
    memref.copy %c, %out : memref<256xf32> to memref<256xf32>
    return
  }
}

// -----

module {
  func.func @oflow_infer(%state: memref<?xi8>, %io: memref<?xi8>, %arena: memref<?xi8>) attributes {oflow.entry = "infer"} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c4 step %c1 {
      // expected-error @+1 {{'memref.alloc' op inside a region cannot be planned statically}}
      %a = memref.alloc() : memref<4xf32>
    }
    return
  }
}

// -----

module {
  // expected-error @+1 {{'func.func' op is not bound to the program interface}}
  func.func @oflow_infer(%x: memref<4xf32>) attributes {oflow.entry = "infer"} {
    return
  }
}
