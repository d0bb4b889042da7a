// RUN: oflow-opt %s --oflow-merge-pointwise --split-input-file | FileCheck %s

// An AdamW-like update: the moment, the second moment, then the parameter
// reading both. One generic: the parameter update takes m and v from the
// values just computed (no reload of the buffers written), every buffer is
// written once.
// CHECK-LABEL: func.func @adam
//       CHECK: linalg.generic
//  CHECK-SAME:   ins(%[[G:[a-z_0-9]+]], %[[M:[a-z_0-9]+]], %[[V:[a-z_0-9]+]] : memref<64xf32>, memref<64xf32>, memref<64xf32>)
//  CHECK-SAME:   outs(%[[M]], %[[V]], %[[P:[a-z_0-9]+]] : memref<64xf32>, memref<64xf32>, memref<64xf32>)
//       CHECK: ^bb0(%[[g:[a-z_0-9]+]]: f32, %[[m:[a-z_0-9]+]]: f32, %[[v:[a-z_0-9]+]]: f32, %{{[a-z_0-9]+}}: f32, %{{[a-z_0-9]+}}: f32, %[[p:[a-z_0-9]+]]: f32):
//       CHECK:   %[[M1:.*]] = arith.addf %[[m]], %[[g]]
//       CHECK:   %[[GG:.*]] = arith.mulf %[[g]], %[[g]]
//       CHECK:   %[[V1:.*]] = arith.addf %[[v]], %[[GG]]
//       CHECK:   %[[D:.*]] = arith.divf %[[M1]], %[[V1]]
//       CHECK:   %[[P1:.*]] = arith.subf %[[p]], %[[D]]
//       CHECK:   linalg.yield %[[M1]], %[[V1]], %[[P1]]
//   CHECK-NOT: linalg.generic
func.func @adam(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c768 = arith.constant 768 : index
  %g = memref.view %buf[%c0][] : memref<?xi8> to memref<64xf32>
  %m = memref.view %buf[%c256][] : memref<?xi8> to memref<64xf32>
  %v = memref.view %buf[%c512][] : memref<?xi8> to memref<64xf32>
  %p = memref.view %buf[%c768][] : memref<?xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%g, %m : memref<64xf32>, memref<64xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%gi: f32, %mi: f32, %o: f32):
    %r = arith.addf %mi, %gi : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%g, %v : memref<64xf32>, memref<64xf32>) outs(%v : memref<64xf32>) {
  ^bb0(%gi: f32, %vi: f32, %o: f32):
    %q = arith.mulf %gi, %gi : f32
    %r = arith.addf %vi, %q : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%m, %v : memref<64xf32>, memref<64xf32>) outs(%p : memref<64xf32>) {
  ^bb0(%mi: f32, %vi: f32, %pi: f32):
    %d = arith.divf %mi, %vi : f32
    %r = arith.subf %pi, %d : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A member reading another point's element of what an earlier member wrote
// (a transpose) cannot run in the same thread: two generics stay.
// CHECK-LABEL: func.func @transposed
//       CHECK: linalg.generic
//       CHECK: linalg.generic
func.func @transposed(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %a = memref.view %buf[%c0][] : memref<?xi8> to memref<8x8xf32>
  %b = memref.view %buf[%c256][] : memref<?xi8> to memref<8x8xf32>
  %c = memref.view %buf[%c512][] : memref<?xi8> to memref<8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Different loop extents, a reduction, or an op in between that touches
// memory end the run.
// CHECK-LABEL: func.func @not_merged
//       CHECK: linalg.generic
//       CHECK: linalg.generic
//       CHECK: linalg.copy
//       CHECK: linalg.generic
func.func @not_merged(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %a = memref.view %buf[%c0][] : memref<?xi8> to memref<8xf32>
  %b = memref.view %buf[%c64][] : memref<?xi8> to memref<16xf32>
  %c = memref.view %buf[%c128][] : memref<?xi8> to memref<8xf32>
  %d = memref.view %buf[%c256][] : memref<?xi8> to memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : memref<16xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.copy ins(%c : memref<8xf32>) outs(%d : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%d : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A buffer used directly (a function argument, no memref.view) covers all
// of its bytes: a member reading the transpose of elements another wrote
// through a view of them stays apart (such a root was once taken for a
// global, which shares no bytes with the program's buffers).
// CHECK-LABEL: func.func @argument_aliases
//       CHECK: linalg.generic
//       CHECK: linalg.generic
func.func @argument_aliases(%buf: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %v = memref.view %buf[%c0][] : memref<1024xi8> to memref<8x8xf32>
  %o = memref.view %buf[%c256][] : memref<1024xi8> to memref<8x8xf32>
  %head = memref.subview %buf[0] [64] [1] : memref<1024xi8> to memref<64xi8>
  %bytes = memref.expand_shape %head [[0, 1]] output_shape [8, 8] : memref<64xi8> into memref<8x8xi8>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%v : memref<8x8xf32>) {
  ^bb0(%x: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bytes : memref<8x8xi8>) outs(%o : memref<8x8xf32>) {
  ^bb0(%x: i8, %y: f32):
    %f = arith.sitofp %x : i8 to f32
    linalg.yield %f : f32
  }
  return
}

// -----

// A gather reads its table inside its body, at computed indices: a member
// that writes the table cannot run in the same thread before it (each
// thread would read other points not yet written). Differential tester
// finding s7-O0-320: Exp/Div in place, then a Gather of their result, read
// the buffer's previous contents.
// CHECK-LABEL: func.func @gather_of_written
//       CHECK: linalg.generic
//       CHECK: linalg.generic
func.func @gather_of_written(%buf: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %t = memref.view %buf[%c0][] : memref<?xi8> to memref<9xf32>
  %idx = memref.view %buf[%c64][] : memref<?xi8> to memref<9xi32>
  %out = memref.view %buf[%c128][] : memref<?xi8> to memref<9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%t : memref<9xf32>) {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%idx : memref<9xi32>) outs(%out : memref<9xf32>) {
  ^bb0(%j: i32, %o: f32):
    %i = arith.index_cast %j : i32 to index
    %v = memref.load %t[%i] : memref<9xf32>
    linalg.yield %v : f32
  }
  return
}
