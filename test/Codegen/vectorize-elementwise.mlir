// oflow-vectorize-elementwise: an f32 generic on buffers whose innermost
// extent divides by 16 becomes loops over vector tiles: 1x16 tiles when the
// innermost loop is parallel, 1xC tiles of a row (C <= 256) when it is the
// only reduction loop; others stay as they are. i1 inputs are read through
// i8 twins of their buffers.
//
// RUN: oflow-opt %s -pass-pipeline="builtin.module(oflow-vectorize-elementwise)" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#bcast = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_bias
// CHECK: scf.for %[[I:.*]] = 
// CHECK: scf.for %[[J:.*]] = {{.*}} step %{{.*}} {
// CHECK: %[[X:.*]] = memref.subview %arg0[%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK: %[[B:.*]] = memref.subview %arg1[%[[J]]] [16] [1]
// CHECK: %[[O:.*]] = memref.subview %arg2[%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK: %[[XV:.*]] = vector.transfer_read %[[X]]{{.*}} vector<1x16xf32>
// CHECK: %[[BV:.*]] = vector.transfer_read %[[B]]{{.*}} vector<1x16xf32>
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<1x16xf32>
// CHECK: vector.transfer_write %[[S]], %[[O]]
// CHECK-NOT: linalg.generic
func.func @add_bias(%x: memref<4x32xf32>, %b: memref<32xf32>, %out: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x32xf32>, memref<32xf32>) outs(%out : memref<4x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}
// Rows of 8 (small feature maps): 1x8 tiles.
// CHECK-LABEL: func.func @rows_of_8
// CHECK: vector.transfer_read {{.*}} vector<1x8xf32>
// CHECK: arith.mulf {{.*}} : vector<1x8xf32>
// CHECK-NOT: linalg.generic
func.func @rows_of_8(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}
// 10 columns divide by neither 16 nor 8, and neither do 3 x 10 elements:
// left for convert-linalg-to-loops.
// CHECK-LABEL: func.func @odd
// CHECK-NOT: collapse_shape
// CHECK: linalg.generic
func.func @odd(%x: memref<3x10xf32>, %out: memref<3x10xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x10xf32>) outs(%out : memref<3x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// 4 x 10 elements do divide by 8: the two loops become one over the
// contiguous buffers, in tiles of 8.
// CHECK-LABEL: func.func @odd_rows_collapsed
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<4x10xf32> into memref<40xf32>
// CHECK: %[[O:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1]] : memref<4x10xf32> into memref<40xf32>
// CHECK: scf.for {{.*}} = %c0 to %c40 step %c8
// CHECK: vector.transfer_read {{.*}} vector<8xf32>
// CHECK-NOT: linalg.generic
func.func @odd_rows_collapsed(%x: memref<4x10xf32>, %out: memref<4x10xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x10xf32>) outs(%out : memref<4x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// A 3x3 convolution weight's SGD update, in place, the learning rate a
// rank-0 buffer: one loop over the weight's 288 elements.
#w4 = affine_map<(o, i, h, w) -> (o, i, h, w)>
#lr = affine_map<(o, i, h, w) -> ()>
// CHECK-LABEL: func.func @weight_update
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : memref<8x4x3x3xf32> into memref<288xf32>
// CHECK: scf.for {{.*}} = %c0 to %c288 step %c16
// CHECK: vector.transfer_read {{.*}} vector<16xf32>
func.func @weight_update(%w: memref<8x4x3x3xf32>, %g: memref<8x4x3x3xf32>, %lr: memref<f32>) {
  linalg.generic {indexing_maps = [#w4, #w4, #lr, #w4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w, %g, %lr : memref<8x4x3x3xf32>, memref<8x4x3x3xf32>, memref<f32>)
      outs(%w : memref<8x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %p = arith.mulf %b, %r : f32
    %s = arith.subf %a, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A per-channel scale over 4x4 feature maps: only the spatial loops join
// (the scale is indexed by the channel), 16 elements per (n, c).
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
// CHECK-LABEL: func.func @channel_scale
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<2x3x4x4xf32> into memref<2x3x16xf32>
// CHECK-NOT: collapse_shape %arg1
// CHECK: vector.transfer_read {{.*}} vector<1x1x16xf32>
func.func @channel_scale(%x: memref<2x3x4x4xf32>, %s: memref<3xf32>, %out: memref<2x3x4x4xf32>) {
  linalg.generic {indexing_maps = [#nchw, #ch, #nchw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<2x3x4x4xf32>, memref<3xf32>) outs(%out : memref<2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// A strided view (a column slice) is not contiguous along the rows: left
// alone.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: collapse_shape
// CHECK: linalg.generic
func.func @strided(%x: memref<4x10xf32, strided<[20, 1]>>, %out: memref<4x10xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x10xf32, strided<[20, 1]>>) outs(%out : memref<4x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// A softmax-style row reduction: sum over rows of 64, one tile per row,
// folded by vector.multi_reduction into the accumulator read from the output.
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for {{.*}} = %c0 to %c4 step
// CHECK: scf.for {{.*}} = %{{.*}} to %c64{{.*}} step %c64
// CHECK: %[[X:.*]] = vector.transfer_read {{.*}} : memref<1x64xf32, {{.*}}>, vector<1x64xf32>
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : memref<1xf32, {{.*}}>, vector<1xf32>
// CHECK: %[[E:.*]] = math.exp %[[X]] : vector<1x64xf32>
// CHECK: %[[S:.*]] = vector.multi_reduction <add>, %[[E]], %[[ACC]] [1] : vector<1x64xf32> to vector<1xf32>
// CHECK: vector.transfer_write %[[S]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    %s = arith.addf %o, %e : f32
    linalg.yield %s : f32
  }
  return
}

// A row of 512 is reduced in two tiles of 256.
// CHECK-LABEL: func.func @long_row_max
// CHECK: scf.for {{.*}} = %c0 to %c2 step
// CHECK: scf.for {{.*}} = %{{.*}} to %c512 step %c256
// CHECK: vector.multi_reduction <maximumf>, {{.*}} [1] : vector<1x256xf32> to vector<1xf32>
func.func @long_row_max(%x: memref<2x512xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x512xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %o, %a : f32
    linalg.yield %m : f32
  }
  return
}

// A bias gradient (reduction over the outer loop): 1x16 tiles of outputs,
// each added to once per row.
// CHECK-LABEL: func.func @bias_grad
// CHECK: scf.for {{.*}} = %c0 to %c8 step
// CHECK: scf.for {{.*}} = %{{.*}} to %c32 step %c16
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [0] : vector<1x16xf32> to vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @bias_grad(%dy: memref<8x32xf32>, %db: memref<32xf32>) {
  linalg.generic {indexing_maps = [#id, #bcast], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<8x32xf32>) outs(%db : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}

// A constant i1 mask is read through an i8 twin of its global (LLVM would
// read a vector of i1 as packed bits) and truncated in the tile.
// CHECK: memref.global "private" constant @mask_i8 : memref<2x16xi8> = dense<{{\[\[}}1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0], [0, 1,
// CHECK-LABEL: func.func @masked
// CHECK: %[[M:.*]] = memref.get_global @mask_i8 : memref<2x16xi8>
// CHECK: %[[MV:.*]] = vector.transfer_read {{.*}} vector<1x16xi8>
// CHECK: %[[B:.*]] = arith.trunci %[[MV]] : vector<1x16xi8> to vector<1x16xi1>
// CHECK: arith.select %[[B]], {{.*}} : vector<1x16xi1>, vector<1x16xf32>
memref.global "private" constant @mask : memref<2x16xi1> = dense<[[true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false], [false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true]]>
func.func @masked(%x: memref<2x16xf32>, %out: memref<2x16xf32>) {
  %m = memref.get_global @mask : memref<2x16xi1>
  %ninf = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : memref<2x16xi1>, memref<2x16xf32>) outs(%out : memref<2x16xf32>) {
  ^bb0(%b: i1, %a: f32, %o: f32):
    %s = arith.select %b, %a, %ninf : f32
    linalg.yield %s : f32
  }
  return
}

// An i1 function argument has no buffer to re-type: stays scalar.
// CHECK-LABEL: func.func @bool_argument
// CHECK: linalg.generic
func.func @bool_argument(%m: memref<2x16xi1>, %x: memref<2x16xf32>, %out: memref<2x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : memref<2x16xi1>, memref<2x16xf32>) outs(%out : memref<2x16xf32>) {
  ^bb0(%b: i1, %a: f32, %o: f32):
    %s = arith.select %b, %a, %ninf : f32
    linalg.yield %s : f32
  }
  return
}

// A count (a value that does not vary along the row) folded into the
// accumulator: linalg::vectorize would add it once per tile, not once per
// element, so it stays scalar.
// CHECK-LABEL: func.func @count
// CHECK: linalg.generic
func.func @count(%labels: memref<32xi64>, %out: memref<f32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%labels : memref<32xi64>) outs(%out : memref<f32>) {
  ^bb0(%l: i64, %o: f32):
    %s = arith.addf %o, %one : f32
    linalg.yield %s : f32
  }
  return
}

// A body that reads memory (the picked logit of a cross-entropy): stays
// scalar.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
func.func @gather(%labels: memref<32xi64>, %logits: memref<32x4xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%labels : memref<32xi64>) outs(%out : memref<f32>) {
  ^bb0(%l: i64, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %l : i64 to index
    %v = memref.load %logits[%i, %c] : memref<32x4xf32>
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  }
  return
}

// Labels compared with the column index (a one-hot cross-entropy gradient):
// integer inputs and linalg.index vectorize.
// CHECK-LABEL: func.func @one_hot
// CHECK: vector.transfer_read {{.*}} vector<1x16xi64>
// CHECK: vector.step
// CHECK-NOT: linalg.generic
func.func @one_hot(%labels: memref<4xi64>, %p: memref<4x32xf32>, %out: memref<4x32xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%labels, %p : memref<4xi64>, memref<4x32xf32>) outs(%out : memref<4x32xf32>) {
  ^bb0(%l: i64, %a: f32, %o: f32):
    %j = linalg.index 1 : index
    %c = arith.index_cast %l : i64 to index
    %hit = arith.cmpi eq, %c, %j : index
    %t = arith.select %hit, %one, %zero : f32
    %d = arith.subf %a, %t : f32
    linalg.yield %d : f32
  }
  return
}
