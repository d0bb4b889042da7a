// oflow-lower-parallel-calls: each call of a parallel nest becomes a frame
// on the caller's stack holding the nest's other arguments, handed with a
// task that unpacks it to oflow_rt_parallel_for.
//
// RUN: oflow-opt %s -split-input-file -oflow-lower-parallel-calls -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @step(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[S:[^:]*]]: f32)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[FRAME:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32)> {alignment = 8 : i64}
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[FRAME]][0, 0]
// CHECK: llvm.store %[[P]], %[[F0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[FRAME]][0, 1]
// CHECK: llvm.store %[[S]], %[[F1]] : f32, !llvm.ptr
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @nest_task
// CHECK: %[[N:.*]] = llvm.mlir.constant(1000 : i64)
// CHECK: %[[G:.*]] = llvm.mlir.constant(10 : i64)
// CHECK: llvm.call @oflow_rt_parallel_for(%[[TASK]], %[[FRAME]], %[[N]], %[[G]])
// CHECK-NOT: llvm.call @nest(
// CHECK: llvm.func @nest(%{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: f32)
// CHECK-NOT: oflow.parallel
// CHECK: llvm.func internal @nest_task(%[[CTX:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK: %[[A0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> f32
// CHECK: llvm.call @nest(%[[B]], %[[E]], %[[V0]], %[[V1]])
// CHECK: llvm.func @oflow_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
llvm.func @step(%p: !llvm.ptr, %s: f32) {
  %b = llvm.mlir.constant(0 : i64) : i64
  %e = llvm.mlir.constant(1000 : i64) : i64
  llvm.call @nest(%b, %e, %p, %s) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}
llvm.func @nest(%begin: i64, %end: i64, %p: !llvm.ptr, %s: f32) attributes {oflow.parallel_iterations = 1000 : i64, oflow.parallel_grain = 10 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{a parallel nest must take (i64 begin, i64 end, ...) and return nothing}}
llvm.func @nest(%p: !llvm.ptr) attributes {oflow.parallel_iterations = 8 : i64, oflow.parallel_grain = 1 : i64} {
  llvm.return
}
