// RUN: oflow-opt %s -verify-diagnostics --oflow-autodiff='freeze=fc(1'

// expected-error @+1 {{oflow-autodiff: bad freeze pattern 'fc(1': parentheses not balanced}}
func.func @main() -> tensor<f32> {
  %w = oflow.weight "w", dense<1.0> : tensor<f32>
  return %w : tensor<f32>
}
