// RUN: oflow-opt %s --oflow-plan-memory | FileCheck %s --check-prefix=STEPS
// RUN: oflow-opt %s --oflow-plan-memory=by-level=true | FileCheck %s --check-prefix=LEVELS

// Two independent chains: %a is filled and copied into io, then %b. In
// program steps %a is dead when %b is made, so %b takes its bytes; that
// write-after-read would make the second chain wait for the first, which
// oflow-fuse-launches could otherwise run beside it (the two fills share a
// level, and so do the two copies). Counted in dependence levels too, the
// lifetimes overlap and %b gets bytes of its own.
// STEPS-LABEL: func.func @oflow_infer
// STEPS-SAME: peak = 1024 : i64
// STEPS: %[[A:.*]] = memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
// STEPS: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<256xf32>)
// STEPS: %[[B:.*]] = memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
// STEPS: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<256xf32>)
// LEVELS-LABEL: func.func @oflow_infer
// LEVELS-SAME: peak = 2048 : i64
// LEVELS: %[[A:.*]] = memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
// LEVELS: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<256xf32>)
// LEVELS: %[[B:.*]] = memref.view %arg2[%c1024{{.*}}][] : memref<?xi8> to memref<256xf32>
// LEVELS: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<256xf32>)
// Sharing stays where both orders agree: %c is made after the second
// chain's copy in steps and in levels (it reads what that copy wrote), so it
// takes %b's bytes; not %a's, whose chain runs level by level beside it (as
// late as possible, %a's fill and copy are at the last two levels).
// LEVELS: %[[C:.*]] = memref.view %arg2[%c1024{{.*}}][] : memref<?xi8> to memref<256xf32>
// LEVELS: linalg.copy ins(%{{.*}} : memref<256xf32>) outs(%[[C]] : memref<256xf32>)
module {
  func.func @oflow_infer(%state: memref<?xi8>, %io: memref<?xi8>, %arena: memref<?xi8>) attributes {oflow.entry = "infer"} {
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c2048 = arith.constant 2048 : index
    %x = memref.view %io[%c0][] : memref<?xi8> to memref<256xf32>
    %y = memref.view %io[%c1024][] : memref<?xi8> to memref<256xf32>
    %z = memref.view %io[%c2048][] : memref<?xi8> to memref<256xf32>
    %a = memref.alloc() : memref<256xf32>
    linalg.fill ins(%one : f32) outs(%a : memref<256xf32>)
    linalg.copy ins(%a : memref<256xf32>) outs(%x : memref<256xf32>)
    %b = memref.alloc() : memref<256xf32>
    linalg.fill ins(%two : f32) outs(%b : memref<256xf32>)
    linalg.copy ins(%b : memref<256xf32>) outs(%y : memref<256xf32>)
    %c = memref.alloc() : memref<256xf32>
    linalg.copy ins(%y : memref<256xf32>) outs(%c : memref<256xf32>)
    linalg.copy ins(%c : memref<256xf32>) outs(%z : memref<256xf32>)
    return
  }
}
