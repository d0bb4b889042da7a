// RUN: %run-lowered | FileCheck %s
// Batch statistics of data far from zero against its spread: f16 values
// around 4000 (f16's spacing there is 2), whose statistics accumulate in f32
// (the op's statistics type for f16). E[x^2] - E[x]^2 in f32 would give the
// variance 5.4375 (x^2 ~ 1.6e7, sums ~2.6e8 rounded to 16); the shifted
// sums, s1 = sum(x - k) and s2 = sum((x - k)^2) with k = x[0, c, 0, 0] =
// 4000, are exact: mean 4000.75, variance 6.4375 (NumPy in f64). Checked
// through the normalized output and the running statistics (momentum 0.9:
// 0.1 * 4000.75 = 400.075, f16 400.0; 0.9 + 0.1 * 6.4375 * 16/15 = 1.5867).

func.func @main() {
  %xf = arith.constant dense<[4000.0, 4002.0, 3998.0, 4004.0, 4002.0, 4000.0, 3996.0, 4002.0, 4006.0, 4000.0, 3998.0, 4000.0, 4000.0, 4002.0, 4004.0, 3998.0]> : tensor<16xf16>
  %x = tensor.expand_shape %xf [[0,1,2,3]] output_shape [4,1,2,2] : tensor<16xf16> into tensor<4x1x2x2xf16>
  %s = arith.constant dense<1.0> : tensor<1xf16>
  %b = arith.constant dense<0.0> : tensor<1xf16>
  %m = arith.constant dense<0.0> : tensor<1xf16>
  %v = arith.constant dense<1.0> : tensor<1xf16>
  %y, %rm, %rv = oflow.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32} : (tensor<4x1x2x2xf16>, tensor<1xf16>, tensor<1xf16>, tensor<1xf16>, tensor<1xf16>) -> (tensor<4x1x2x2xf16>, tensor<1xf16>, tensor<1xf16>)
  %y32 = oflow.cast %y to f32 : tensor<4x1x2x2xf16>
  %yc = tensor.collapse_shape %y32 [[0,1,2,3]] : tensor<4x1x2x2xf32> into tensor<16xf32>
  %p1 = tensor.cast %yc : tensor<16xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  %rm32 = oflow.cast %rm to f32 : tensor<1xf16>
  %p2 = tensor.cast %rm32 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  %rv32 = oflow.cast %rv to f32 : tensor<1xf16>
  %p3 = tensor.cast %rv32 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%p3) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)

// (x - 4000.75) / sqrt(6.4375): -0.2956, 0.4927, -1.0839, 1.2809, ... (f16).
// CHECK: data =
// CHECK-NEXT: [{{-0\.29[56][0-9]*}}, {{0\.49[23][0-9]*}}, {{-1\.08[34][0-9]*}}, {{1\.28[01][0-9]*}}, {{0\.49[23][0-9]*}}, {{-0\.29[56][0-9]*}}, {{-1\.87[12][0-9]*}}, {{0\.49[23][0-9]*}},
// CHECK-SAME: {{2\.06[89][0-9]*|2\.07[0-9]*}}, {{-0\.29[56][0-9]*}}, {{-1\.08[34][0-9]*}}, {{-0\.29[56][0-9]*}}, {{-0\.29[56][0-9]*}}, {{0\.49[23][0-9]*}}, {{1\.28[01][0-9]*}}, {{-1\.08[34][0-9]*}}]
// CHECK: data =
// CHECK-NEXT: [400]
// CHECK: data =
// CHECK-NEXT: [{{1\.58[67][0-9]*}}]
