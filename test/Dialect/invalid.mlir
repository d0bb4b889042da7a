// Every check of the ops' verifiers (their shape inference and ODS
// constraints). An inference failure reports its reason and then
// "failed to infer returned types"; in the custom form of ops whose result type
// is inferred while parsing (`type($input)`), only the reason.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics

func.func @constant_not_tensor() {
  // expected-error @below {{'oflow.constant' op value must be a statically shaped tensor}}
  %0 = oflow.constant dense<[1, 2]> : vector<2xi64>
  return
}

// -----

func.func @weight_empty_name() {
  // expected-error @below {{'oflow.weight' op needs a non-empty name}}
  %0 = oflow.weight "", dense<0.0> : tensor<8xf32>
  return
}

// -----

func.func @weight_recipe_unknown() {
  // expected-error @below {{unknown initializer 'gamma' (zeros, ones, constant, normal, uniform, truncated_normal)}}
  %0 = oflow.weight "w", #oflow.init<gamma> : tensor<8xf32>
  return
}

// -----

func.func @weight_recipe_std() {
  // expected-error @below {{normal(0, 0): the standard deviation must be positive}}
  %0 = oflow.weight "w", #oflow.init<normal(0.0, 0.0)> : tensor<8xf32>
  return
}

// -----

func.func @weight_recipe_range() {
  // expected-error @below {{uniform(1, -1): low must be below high}}
  %0 = oflow.weight "w", #oflow.init<uniform(1.0, -1.0)> : tensor<8xf32>
  return
}

// -----

func.func @weight_recipe_type() {
  // expected-error @below {{an initializer needs a static tensor type of f32 or f64, got 'tensor<8xi64>'}}
  %0 = oflow.weight "w", #oflow.init<zeros> : tensor<8xi64>
  return
}

// -----

func.func @weight_recipe_untyped() {
  // expected-error @below {{#oflow.init needs its tensor type: #oflow.init<...> : tensor<...>}}
  %0 = oflow.weight "w", #oflow.init<zeros>
  return
}

// -----

func.func @weight_recipe_seed() {
  // expected-error @below {{seed 4294967296 does not fit 32 bits}}
  %0 = oflow.weight "w", #oflow.init<normal(0.0, 1.0), seed = 4294967296> : tensor<8xf32>
  return
}

// -----

func.func @weight_not_tensor() {
  // expected-error @below {{'oflow.weight' op value must be a statically shaped tensor}}
  %0 = oflow.weight "w", dense<0.0> : vector<8xf32>
  return
}

// -----

func.func @unary_wrong_element_type(%a: tensor<4xi32>) {
  // expected-error @below {{'oflow.exp' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = oflow.exp %a : tensor<4xi32>
  return
}

// -----

func.func @not_on_float(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.not' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = oflow.not %a : tensor<4xf32>
  return
}

// -----

func.func @unary_result_type(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.neg' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "oflow.neg"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @cast_result_type(%a: tensor<4xi32>) {
  // expected-error @below {{'oflow.cast' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf16>'}}
  // expected-error @below {{'oflow.cast' op failed to infer returned types}}
  %0 = "oflow.cast"(%a) <{to = f32}> : (tensor<4xi32>) -> tensor<4xf16>
  return
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @below {{'oflow.add' op operand element types differ: 'f32' vs 'f16'}}
  // expected-error @below {{'oflow.add' op failed to infer returned types}}
  %0 = oflow.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @binary_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @below {{'oflow.mul' op shapes [4, 3] and [4] do not broadcast}}
  // expected-error @below {{'oflow.mul' op failed to infer returned types}}
  %0 = oflow.mul %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @binary_wrong_result(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @below {{'oflow.sub' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @below {{'oflow.sub' op failed to infer returned types}}
  %0 = oflow.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @pow_on_integers(%a: tensor<4xi32>) {
  // expected-error @below {{'oflow.pow' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = oflow.pow %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @below {{'oflow.compare' op operand element types differ: 'f32' vs 'i32'}}
  // expected-error @below {{'oflow.compare' op failed to infer returned types}}
  %0 = oflow.compare eq %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error @below {{'oflow.compare' op shapes [2, 3] and [2] do not broadcast}}
  // expected-error @below {{'oflow.compare' op failed to infer returned types}}
  %0 = oflow.compare lt %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xi1>
  return
}

// -----

func.func @compare_bad_predicate(%a: tensor<2xf32>) {
  // expected-error @below {{custom op 'oflow.compare' expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = oflow.compare neq %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return
}

// -----

func.func @where_value_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @below {{'oflow.where' op operand element types differ: 'f32' vs 'f64'}}
  // expected-error @below {{'oflow.where' op failed to infer returned types}}
  %0 = oflow.where %m, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @where_cond_not_broadcastable(%m: tensor<3xi1>, %a: tensor<2x4xf32>, %b: tensor<f32>) {
  // expected-error @below {{'oflow.where' op shapes [3] and [2, 4] do not broadcast}}
  // expected-error @below {{'oflow.where' op failed to infer returned types}}
  %0 = oflow.where %m, %a, %b : (tensor<3xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @where_values_not_broadcastable(%m: tensor<i1>, %a: tensor<2x4xf32>, %b: tensor<3xf32>) {
  // expected-error @below {{'oflow.where' op shapes [2, 4] and [3] do not broadcast}}
  // expected-error @below {{'oflow.where' op failed to infer returned types}}
  %0 = oflow.where %m, %a, %b : (tensor<i1>, tensor<2x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @cast_to_index(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.cast' op cannot cast to 'index'; expected an integer or float type}}
  %0 = oflow.cast %a to index : tensor<4xf32>
  return
}

// -----

func.func @cast_to_tensor(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.cast' op cannot cast to 'tensor<4xf32>'; expected an integer or float type}}
  %0 = oflow.cast %a to tensor<4xf32> : tensor<4xf32>
  return
}

// -----

func.func @dropout_ratio_one(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.dropout' op ratio 1.000000e+00 must be in [0, 1)}}
  %0 = oflow.dropout %a {ratio = 1.0 : f64, seed = 1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_ratio_negative(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.dropout' op ratio -5.000000e-01 must be in [0, 1)}}
  // expected-error @below {{'oflow.dropout' op failed to infer returned types}}
  %0 = "oflow.dropout"(%a) <{operandSegmentSizes = array<i32: 1, 0, 0>, ratio = -5.000000e-01 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_no_seed(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.dropout' op ratio 2.500000e-01 > 0 needs a seed, so that every run and every mesh draws the same mask}}
  %0 = oflow.dropout %a {ratio = 2.500000e-01 : f64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_offsets_without_global_shape(%a: tensor<4x2xf32>, %s: tensor<i64>, %o: tensor<i64>) {
  // expected-error @below {{'oflow.dropout' op takes one offset per axis (2) and a global_shape, or neither; got 2 offsets}}
  %0 = oflow.dropout %a step %s offsets(%o, %o) {ratio = 2.500000e-01 : f64, seed = 1 : i64} : tensor<4x2xf32>
  return
}

// -----

func.func @dropout_global_smaller(%a: tensor<4x2xf32>, %s: tensor<i64>, %o: tensor<i64>) {
  // expected-error @below {{'oflow.dropout' op global_shape [2, 2] is smaller than the local shape [4, 2]}}
  %0 = oflow.dropout %a step %s offsets(%o, %o) {global_shape = array<i64: 2, 2>, ratio = 2.500000e-01 : f64, seed = 1 : i64} : tensor<4x2xf32>
  return
}

// -----

func.func @dropout_step_not_i64(%a: tensor<4xf32>, %s: tensor<i32>) {
  // expected-error @below {{'oflow.dropout' op operand #1 must be i64 scalar tensor}}
  %0 = "oflow.dropout"(%a, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>, ratio = 2.500000e-01 : f64, seed = 1 : i64}> : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_no_ratio(%a: tensor<4xf32>) {
  // expected-error @below {{'oflow.dropout' op requires attribute 'ratio'}}
  %0 = oflow.dropout %a : tensor<4xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @below {{'oflow.matmul' op operands must have rank >= 2, got 1 and 2}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<2x4xf32>, %b: tensor<4x2xbf16>) {
  // expected-error @below {{'oflow.matmul' op operand element types differ: 'f32' vs 'bf16'}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<2x4xf32>, tensor<4x2xbf16>) -> tensor<2x2xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x4xf32>, %b: tensor<5x2xf32>) {
  // expected-error @below {{'oflow.matmul' op contraction sizes differ: lhs [2, 4] gives 4, rhs [5, 2] gives 5}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<2x4xf32>, tensor<5x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @below {{'oflow.matmul' op contraction sizes differ: lhs [2, 4] gives 2, rhs [4, 3] gives 4}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b {transpose_a} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_batch_not_broadcastable(%a: tensor<3x2x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @below {{'oflow.matmul' op shapes [3] and [2] do not broadcast}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<3x2x4xf32>, tensor<2x4x5xf32>) -> tensor<3x2x5xf32>
  return
}

// -----

func.func @matmul_wrong_result_shape(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) {
  // expected-error @below {{'oflow.matmul' op inferred type(s) 'tensor<8x32xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf32>'}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @matmul_wrong_result_element(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) {
  // expected-error @below {{'oflow.matmul' op inferred type(s) 'tensor<8x32xf32>' are incompatible with return type(s) of operation 'tensor<8x32xf16>'}}
  // expected-error @below {{'oflow.matmul' op failed to infer returned types}}
  %0 = oflow.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf16>
  return
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @below {{'oflow.gemm' op A and B must be 2-D, got [2, 3, 4] and [4, 5]}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gemm_element_types(%a: tensor<3x4xf32>, %b: tensor<4x5xf64>) {
  // expected-error @below {{'oflow.gemm' op operand element types differ: 'f32' vs 'f64'}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b : (tensor<3x4xf32>, tensor<4x5xf64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gemm_contraction(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) {
  // expected-error @below {{'oflow.gemm' op contraction sizes differ: A gives 4, B gives 5}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gemm_c_not_broadcastable(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3xf32>) {
  // expected-error @below {{'oflow.gemm' op C [3] does not broadcast to [3, 5]}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gemm_c_larger(%a: tensor<1x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) {
  // expected-error @below {{'oflow.gemm' op C [3, 5] does not broadcast to [1, 5]}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b, %c : (tensor<1x4xf32>, tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<1x5xf32>
  return
}

// -----

func.func @gemm_c_rank3(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<1x3x5xf32>) {
  // expected-error @below {{'oflow.gemm' op C [1, 3, 5] does not broadcast to [3, 5]}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<1x3x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @gemm_c_element_type(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf16>) {
  // expected-error @below {{'oflow.gemm' op operand element types differ: 'f32' vs 'f16'}}
  // expected-error @below {{'oflow.gemm' op failed to infer returned types}}
  %0 = oflow.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf16>) -> tensor<3x5xf32>
  return
}

// -----

func.func @reduce_no_axes(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reduce_sum' op needs at least one axis}}
  // expected-error @below {{'oflow.reduce_sum' op failed to infer returned types}}
  %0 = oflow.reduce_sum %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reduce_mean' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.reduce_mean' op failed to infer returned types}}
  %0 = oflow.reduce_mean %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_negative_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reduce_max' op axis -1 is out of range for rank 2}}
  // expected-error @below {{'oflow.reduce_max' op failed to infer returned types}}
  %0 = oflow.reduce_max %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_duplicate_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reduce_max' op axis 1 appears twice}}
  // expected-error @below {{'oflow.reduce_max' op failed to infer returned types}}
  %0 = oflow.reduce_max %x {axes = array<i64: 1, 0, 1>} : (tensor<4x8xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @reduce_keepdims_result(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reduce_sum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @below {{'oflow.reduce_sum' op failed to infer returned types}}
  %0 = oflow.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.softmax' op axis 2 is out of range for rank 2}}
  %0 = oflow.softmax %x {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_negative_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = oflow.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @softmax_no_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.softmax' op requires attribute 'axis'}}
  %0 = oflow.softmax %x : tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @below {{'oflow.layer_norm' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.layer_norm' op failed to infer returned types}}
  %0 = oflow.layer_norm %x, %g {axis = 2 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @below {{'oflow.layer_norm' op epsilon must be non-negative}}
  // expected-error @below {{'oflow.layer_norm' op failed to infer returned types}}
  %0 = oflow.layer_norm %x, %g {axis = 1 : i64, epsilon = -1.0 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<4x8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @below {{'oflow.layer_norm' op scale and bias must have the normalized shape [8, 16], got [16]}}
  // expected-error @below {{'oflow.layer_norm' op failed to infer returned types}}
  %0 = oflow.layer_norm %x, %g {axis = 1 : i64} : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @below {{'oflow.layer_norm' op scale and bias must have the normalized shape [8], got [1, 8]}}
  // expected-error @below {{'oflow.layer_norm' op failed to infer returned types}}
  %0 = oflow.layer_norm %x, %g, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @layer_norm_element_type(%x: tensor<4x8xf32>, %g: tensor<8xf16>) {
  // expected-error @below {{'oflow.layer_norm' op operand element types differ: 'f32' vs 'f16'}}
  // expected-error @below {{'oflow.layer_norm' op failed to infer returned types}}
  %0 = oflow.layer_norm %x, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) {
  // expected-error @below {{'oflow.batch_norm_inference' op input must have rank >= 2 (N, C, ...), got 1}}
  // expected-error @below {{'oflow.batch_norm_inference' op failed to infer returned types}}
  %0 = oflow.batch_norm_inference %x, %p, %p, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x8xf32>, %p: tensor<8xf32>) {
  // expected-error @below {{'oflow.batch_norm_inference' op epsilon must be non-negative}}
  // expected-error @below {{'oflow.batch_norm_inference' op failed to infer returned types}}
  %0 = oflow.batch_norm_inference %x, %p, %p, %p, %p {epsilon = -1.000000e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @batch_norm_param_shape(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>, %v: tensor<4xf32>) {
  // expected-error @below {{'oflow.batch_norm_inference' op scale, bias, mean and variance must be [8] (the channel dim), got [4]}}
  // expected-error @below {{'oflow.batch_norm_inference' op failed to infer returned types}}
  %0 = oflow.batch_norm_inference %x, %p, %p, %p, %v : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x8x4x4xf32>
  return
}

// -----

func.func @batch_norm_param_element_type(%x: tensor<2x8xf32>, %p: tensor<8xf32>, %h: tensor<8xf16>) {
  // expected-error @below {{'oflow.batch_norm_inference' op operand element types differ: 'f32' vs 'f16'}}
  // expected-error @below {{'oflow.batch_norm_inference' op failed to infer returned types}}
  %0 = oflow.batch_norm_inference %x, %h, %p, %p, %p : (tensor<2x8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @batch_norm_training_param_shape(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>, %m: tensor<1x8xf32>) {
  // expected-error @below {{'oflow.batch_norm_training' op scale, bias, mean and variance must be [8] (the channel dim), got [1, 8]}}
  // expected-error @below {{'oflow.batch_norm_training' op failed to infer returned types}}
  %y, %rm, %rv = oflow.batch_norm_training %x, %p, %p, %m, %p : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32>, tensor<1x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_statistics_rank(%x: tensor<8xf32>) {
  // expected-error @below {{'oflow.batch_norm_statistics' op input must have rank >= 2 (N, C, ...), got 1}}
  // expected-error @below {{'oflow.batch_norm_statistics' op failed to infer returned types}}
  %m, %v = oflow.batch_norm_statistics %x : (tensor<8xf32>) -> (tensor<8xf64>, tensor<8xf64>)
  return
}

// -----

func.func @batch_norm_training_momentum(%x: tensor<2x8xf32>, %p: tensor<8xf32>) {
  // expected-error @below {{'oflow.batch_norm_training' op momentum 1.500000e+00 must be in [0, 1]}}
  // expected-error @below {{'oflow.batch_norm_training' op failed to infer returned types}}
  %y, %rm, %rv = oflow.batch_norm_training %x, %p, %p, %p, %p {momentum = 1.5 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_training_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) {
  // expected-error @below {{'oflow.batch_norm_training' op input must have rank >= 2 (N, C, ...), got 1}}
  // expected-error @below {{'oflow.batch_norm_training' op failed to infer returned types}}
  %y, %rm, %rv = oflow.batch_norm_training %x, %p, %p, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @conv2d_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op expects a 4-D NCHW input and a 4-D [M, C/groups, kH, kW] weight, got [1, 3, 8] and [4, 3, 3, 3]}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @below {{'oflow.conv2d' op operand element types differ: 'f32' vs 'f16'}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_attr_sizes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op expects 2 strides, 4 pads [top, left, bottom, right] and 2 dilations, got 2, 2 and 2}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op strides and dilations must be positive}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op strides and dilations must be positive}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op pads must be non-negative}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, -1, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_groups_divide(%x: tensor<1x6x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op groups 3 must divide the input channels 6 and the output channels 4}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_groups_zero(%x: tensor<1x6x8x8xf32>, %w: tensor<6x6x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op groups 0 must divide the input channels 6 and the output channels 6}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<6x6x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_channel_mismatch(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op weight has 3 input channels per group, expected 6 (6 channels / 1 groups)}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_group_channel_mismatch(%x: tensor<1x6x8x8xf32>, %w: tensor<4x6x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op weight has 6 input channels per group, expected 3 (6 channels / 2 groups)}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x6x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @below {{'oflow.conv2d' op bias must be [4], got [3]}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_bias_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf64>) {
  // expected-error @below {{'oflow.conv2d' op operand element types differ: 'f32' vs 'f64'}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf64>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_window_too_large(%x: tensor<1x3x8x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op spatial dim 1: the window (5) is larger than the padded input (4)}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return
}

// -----

func.func @conv2d_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @below {{'oflow.conv2d' op inferred type(s) 'tensor<1x4x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x4x6x6xf32>'}}
  // expected-error @below {{'oflow.conv2d' op failed to infer returned types}}
  %0 = oflow.conv2d %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op expects a 4-D NCHW input, got [3, 8, 8]}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.avg_pool2d' op kernel must be 2 positive sizes}}
  // expected-error @below {{'oflow.avg_pool2d' op failed to infer returned types}}
  %0 = oflow.avg_pool2d %x {kernel = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_kernel_zero(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op kernel must be 2 positive sizes}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_strides(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op expects 2 strides, 4 pads [top, left, bottom, right] and 2 dilations, got 3, 4 and 2}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_dilations(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op strides and dilations must be positive}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {dilations = array<i64: 1, -1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_negative_pads(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.avg_pool2d' op pads must be non-negative}}
  // expected-error @below {{'oflow.avg_pool2d' op failed to infer returned types}}
  %0 = oflow.avg_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, -1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_pads_not_smaller_than_window(%x: tensor<1x3x8x8xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op pads must be smaller than the window on spatial dim 1}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {kernel = array<i64: 3, 2>, pads = array<i64: 0, 2, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x9xf32>
  return
}

// -----

func.func @pool_window_too_large(%x: tensor<1x3x2x8xf32>) {
  // expected-error @below {{'oflow.avg_pool2d' op spatial dim 0: the window (3) is larger than the padded input (2)}}
  // expected-error @below {{'oflow.avg_pool2d' op failed to infer returned types}}
  %0 = oflow.avg_pool2d %x {kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x2x8xf32>) -> tensor<1x3x1x6xf32>
  return
}

// -----

func.func @pool_wrong_result(%x: tensor<1x1x5x5xf32>) {
  // expected-error @below {{'oflow.max_pool2d' op inferred type(s) 'tensor<1x1x2x2xf32>' are incompatible with return type(s) of operation 'tensor<1x1x3x3xf32>'}}
  // expected-error @below {{'oflow.max_pool2d' op failed to infer returned types}}
  %0 = oflow.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @global_avg_pool_rank(%x: tensor<2x3xf32>) {
  // expected-error @below {{'oflow.global_avg_pool' op expects [N, C, spatial...] of rank >= 3, got [2, 3]}}
  // expected-error @below {{'oflow.global_avg_pool' op failed to infer returned types}}
  %0 = oflow.global_avg_pool %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reshape' op cannot reshape [4, 8] (32 elements) to [3, 16] (48 elements)}}
  // expected-error @below {{'oflow.reshape' op failed to infer returned types}}
  %0 = oflow.reshape %x [3, 16] : (tensor<4x8xf32>) -> tensor<3x16xf32>
  return
}

// -----

func.func @reshape_negative(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.reshape' op target shape [-1, 8] must be static and non-negative}}
  // expected-error @below {{'oflow.reshape' op failed to infer returned types}}
  %0 = oflow.reshape %x [-1, 8] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @flatten_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.flatten' op axis 3 is out of range [0, 2]}}
  // expected-error @below {{'oflow.flatten' op failed to infer returned types}}
  %0 = oflow.flatten %x {axis = 3 : i64} : (tensor<4x8xf32>) -> tensor<32x1xf32>
  return
}

// -----

func.func @transpose_perm_size(%x: tensor<4x8x2xf32>) {
  // expected-error @below {{'oflow.transpose' op perm has 2 entries for a rank-3 tensor}}
  // expected-error @below {{'oflow.transpose' op failed to infer returned types}}
  %0 = oflow.transpose %x [1, 0] : (tensor<4x8x2xf32>) -> tensor<8x4x2xf32>
  return
}

// -----

func.func @transpose_perm_range(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.transpose' op perm entry 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.transpose' op failed to infer returned types}}
  %0 = oflow.transpose %x [0, 2] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @transpose_perm_duplicate(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.transpose' op perm entry 1 appears twice}}
  // expected-error @below {{'oflow.transpose' op failed to infer returned types}}
  %0 = oflow.transpose %x [1, 1] : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @squeeze_not_one(%x: tensor<4x1x8xf32>) {
  // expected-error @below {{'oflow.squeeze' op cannot squeeze axis 0 of size 4}}
  // expected-error @below {{'oflow.squeeze' op failed to infer returned types}}
  %0 = oflow.squeeze %x [0] : (tensor<4x1x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @squeeze_axis_range(%x: tensor<4x1xf32>) {
  // expected-error @below {{'oflow.squeeze' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.squeeze' op failed to infer returned types}}
  %0 = oflow.squeeze %x [2] : (tensor<4x1xf32>) -> tensor<4x1xf32>
  return
}

// -----

func.func @squeeze_axis_duplicate(%x: tensor<4x1xf32>) {
  // expected-error @below {{'oflow.squeeze' op axis 1 appears twice}}
  // expected-error @below {{'oflow.squeeze' op failed to infer returned types}}
  %0 = oflow.squeeze %x [1, 1] : (tensor<4x1xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unsqueeze_axis_range(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.unsqueeze' op axis 3 is out of range for rank 3}}
  // expected-error @below {{'oflow.unsqueeze' op failed to infer returned types}}
  %0 = oflow.unsqueeze %x [3] : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
  return
}

// -----

func.func @unsqueeze_axis_duplicate(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.unsqueeze' op axis 0 appears twice}}
  // expected-error @below {{'oflow.unsqueeze' op failed to infer returned types}}
  %0 = oflow.unsqueeze %x [0, 0] : (tensor<4x8xf32>) -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @expand_negative(%x: tensor<1x8xf32>) {
  // expected-error @below {{'oflow.expand' op shape must be non-negative}}
  // expected-error @below {{'oflow.expand' op failed to infer returned types}}
  %0 = oflow.expand %x [-1, 8] : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @expand_not_broadcastable(%x: tensor<3x8xf32>) {
  // expected-error @below {{'oflow.expand' op shapes [3, 8] and [4, 8] do not broadcast}}
  // expected-error @below {{'oflow.expand' op failed to infer returned types}}
  %0 = oflow.expand %x [4, 8] : (tensor<3x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @below {{'oflow.concat' op needs at least one input}}
  // expected-error @below {{'oflow.concat' op failed to infer returned types}}
  %0 = oflow.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.concat' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.concat' op failed to infer returned types}}
  %0 = oflow.concat %a, %a {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  // expected-error @below {{'oflow.concat' op operand element types differ: 'f32' vs 'i32'}}
  // expected-error @below {{'oflow.concat' op failed to infer returned types}}
  %0 = oflow.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @below {{'oflow.concat' op input #1 has rank 1, expected 2}}
  // expected-error @below {{'oflow.concat' op failed to infer returned types}}
  %0 = oflow.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  return
}

// -----

func.func @concat_shape(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<3x8xf32>) {
  // expected-error @below {{'oflow.concat' op input #2 has shape [3, 8], which differs from [4, 8] outside axis 1}}
  // expected-error @below {{'oflow.concat' op failed to infer returned types}}
  %0 = oflow.concat %a, %b, %c {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x24xf32>
  return
}

// -----

func.func @slice_entries(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op offsets, sizes and strides need one entry per dim (2)}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op stride of dim 1 is zero}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_negative_size(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op size of dim 0 is negative}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: -2, 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_past_end(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op dim 1: elements 4 to 8 are outside [0, 8)}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 0, 4>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_negative_stride_past_begin(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op dim 0: elements 2 to -1 are outside [0, 4)}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 2, 0>, sizes = array<i64: 4, 8>, strides = array<i64: -1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_offset_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.slice' op dim 0: elements 4 to 4 are outside [0, 4)}}
  // expected-error @below {{'oflow.slice' op failed to infer returned types}}
  %0 = oflow.slice %x {offsets = array<i64: 4, 0>, sizes = array<i64: 1, 8>, strides = array<i64: -1, 1>} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @split_axis(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.split' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.split' op failed to infer returned types}}
  %0:2 = oflow.split %x {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @split_no_pieces(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.split' op needs at least one piece}}
  // expected-error @below {{'oflow.split' op failed to infer returned types}}
  oflow.split %x {axis = 0 : i64, sizes = array<i64>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

func.func @split_negative_piece(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.split' op piece sizes must be non-negative}}
  // expected-error @below {{'oflow.split' op failed to infer returned types}}
  %0:2 = oflow.split %x {axis = 1 : i64, sizes = array<i64: 10, -2>} : (tensor<4x8xf32>) -> (tensor<4x10xf32>, tensor<4x0xf32>)
  return
}

// -----

func.func @split_sum(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.split' op pieces [4, 3] sum to 7, but axis 1 has size 8}}
  // expected-error @below {{'oflow.split' op failed to infer returned types}}
  %0:2 = oflow.split %x {axis = 1 : i64, sizes = array<i64: 4, 3>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>)
  return
}

// -----

func.func @split_result_count(%x: tensor<4x8xf32>) {
  // expected-error @below {{'oflow.split' op inferred type(s) 'tensor<4x4xf32>', 'tensor<4x2xf32>', 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>', 'tensor<4x4xf32>'}}
  // expected-error @below {{'oflow.split' op failed to infer returned types}}
  %0:2 = oflow.split %x {axis = 1 : i64, sizes = array<i64: 4, 2, 2>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  // expected-error @below {{'oflow.gather' op axis 2 is out of range for rank 2}}
  // expected-error @below {{'oflow.gather' op failed to infer returned types}}
  %0 = oflow.gather %x, %i {axis = 2 : i64} : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x8x3xf32>
  return
}

// -----

func.func @gather_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  // expected-error @below {{'oflow.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = oflow.gather %x, %i : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) {
  // expected-error @below {{'oflow.trilu' op input must have rank >= 2, got 1}}
  %0 = oflow.trilu %x : tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_scores_rank(%x: tensor<8xf32>, %l: tensor<8xi64>) {
  // expected-error @below {{'oflow.softmax_cross_entropy' op scores must be [N, C, d...], got [8]}}
  // expected-error @below {{'oflow.softmax_cross_entropy' op failed to infer returned types}}
  %0 = oflow.softmax_cross_entropy mean %x, %l : (tensor<8xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_labels(%x: tensor<8x10xf32>, %l: tensor<8x10xi64>) {
  // expected-error @below {{'oflow.softmax_cross_entropy' op labels must be [8] for scores [8, 10], got [8, 10]}}
  // expected-error @below {{'oflow.softmax_cross_entropy' op failed to infer returned types}}
  %0 = oflow.softmax_cross_entropy mean %x, %l : (tensor<8x10xf32>, tensor<8x10xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_spatial_labels(%x: tensor<2x10x4x4xf32>, %l: tensor<2x4xi64>) {
  // expected-error @below {{'oflow.softmax_cross_entropy' op labels must be [2, 4, 4] for scores [2, 10, 4, 4], got [2, 4]}}
  // expected-error @below {{'oflow.softmax_cross_entropy' op failed to infer returned types}}
  %0 = oflow.softmax_cross_entropy none %x, %l {ignore_index = -1 : i64} : (tensor<2x10x4x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @cross_entropy_none_result(%x: tensor<8x10xf32>, %l: tensor<8xi64>) {
  // expected-error @below {{'oflow.softmax_cross_entropy' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @below {{'oflow.softmax_cross_entropy' op failed to infer returned types}}
  %0 = oflow.softmax_cross_entropy none %x, %l : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_bad_reduction(%x: tensor<8x10xf32>, %l: tensor<8xi64>) {
  // expected-error @below {{custom op 'oflow.softmax_cross_entropy' expected string or keyword containing one of the following enum values for attribute 'reduction' [mean, sum, none]}}
  %0 = oflow.softmax_cross_entropy avg %x, %l : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @nll_loss_scores_rank(%x: tensor<f32>, %l: tensor<i64>) {
  // expected-error @below {{'oflow.nll_loss' op scores must be [N, C, d...], got []}}
  // expected-error @below {{'oflow.nll_loss' op failed to infer returned types}}
  %0 = oflow.nll_loss sum %x, %l : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @nll_loss_labels(%x: tensor<8x10xf32>, %l: tensor<10xi64>) {
  // expected-error @below {{'oflow.nll_loss' op labels must be [8] for scores [8, 10], got [10]}}
  // expected-error @below {{'oflow.nll_loss' op failed to infer returned types}}
  %0 = oflow.nll_loss mean %x, %l : (tensor<8x10xf32>, tensor<10xi64>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_shapes(%x: tensor<8x1xf32>, %t: tensor<8xf32>) {
  // expected-error @below {{'oflow.mse_loss' op input 'tensor<8x1xf32>' and target 'tensor<8xf32>' must have the same type}}
  // expected-error @below {{'oflow.mse_loss' op failed to infer returned types}}
  %0 = oflow.mse_loss mean %x, %t : (tensor<8x1xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_element_types(%x: tensor<8xf32>, %t: tensor<8xf16>) {
  // expected-error @below {{'oflow.mse_loss' op input 'tensor<8xf32>' and target 'tensor<8xf16>' must have the same type}}
  // expected-error @below {{'oflow.mse_loss' op failed to infer returned types}}
  %0 = oflow.mse_loss sum %x, %t : (tensor<8xf32>, tensor<8xf16>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_reduced_result(%x: tensor<8xf32>, %t: tensor<8xf32>) {
  // expected-error @below {{'oflow.mse_loss' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @below {{'oflow.mse_loss' op failed to infer returned types}}
  %0 = oflow.mse_loss mean %x, %t : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// The graph IR is fully static: dynamic dims are fixed on import.
func.func @dynamic_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'oflow.relu' op operand #0 must be statically shaped tensor}}
  %0 = oflow.relu %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @avg_pool_backward_kernel_rank(%g: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @below {{'oflow.avg_pool2d_backward' op kernel must be 2 positive sizes}}
  // expected-error @below {{'oflow.avg_pool2d_backward' op failed to infer returned types}}
  %0 = oflow.avg_pool2d_backward %g {input_shape = array<i64: 1, 1, 4, 4>, kernel = array<i64: 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @attention_rank(%q: tensor<16xf32>, %k: tensor<8x16xf32>) {
  // expected-error @below {{'oflow.attention' op query must have rank >= 2 ([..., T, D]), got [16]}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %k, %k {operand_type = bf16, scale = 1.0 : f32} : (tensor<16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<16xf32>, tensor<f32>)
  return
}

// -----

func.func @attention_head_dims(%q: tensor<2x4x16xf32>, %k: tensor<2x4x8xf32>) {
  // expected-error @below {{'oflow.attention' op query [2, 4, 16] and key [2, 4, 8] must share the leading dims and the last (head) dim}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %k, %k {operand_type = bf16, scale = 1.0 : f32} : (tensor<2x4x16xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x16xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @attention_key_value(%q: tensor<4x16xf32>, %k: tensor<4x16xf32>, %v: tensor<5x16xf32>) {
  // expected-error @below {{'oflow.attention' op key [4, 16] and value [5, 16] must have the same shape}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %k, %v {operand_type = bf16, scale = 1.0 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<5x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @attention_causal_rectangular(%q: tensor<3x16xf32>, %k: tensor<4x16xf32>) {
  // expected-error @below {{'oflow.attention' op causal attention needs as many queries as keys, got 3 and 4}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %k, %k {causal, operand_type = bf16, scale = 1.0 : f32} : (tensor<3x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<3x16xf32>, tensor<3xf32>)
  return
}

// -----

func.func @attention_operand_type(%q: tensor<4x16xf32>) {
  // expected-error @below {{'oflow.attention' op operand_type must be bf16 or f16, got 'f32'}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %q, %q {operand_type = f32, scale = 1.0 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @attention_f16_operands(%q: tensor<4x16xf16>) {
  // expected-error @below {{'oflow.attention' op query must be f32, got 'f16'}}
  // expected-error @below {{failed to infer returned types}}
  %o, %l = oflow.attention %q, %q, %q {operand_type = bf16, scale = 1.0 : f32} : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>) -> (tensor<4x16xf16>, tensor<4xf16>)
  return
}

// -----

func.func @attention_backward_lse(%q: tensor<4x16xf32>, %lse: tensor<16xf32>) {
  // expected-error @below {{'oflow.attention_backward' op logsumexp must be 'tensor<4xf32>', got 'tensor<16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %dq, %dk, %dv = oflow.attention_backward %q, %q, %q, %q, %lse, %q {operand_type = bf16, scale = 1.0 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
  return
}
