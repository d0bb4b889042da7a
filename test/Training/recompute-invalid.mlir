// oflow-recompute's diagnostics: a mode other than selective or all, and a
// node-name expression that is not a regular expression.
//
// RUN: oflow-opt %s -verify-diagnostics -oflow-recompute=mode=some
// RUN: not oflow-opt %s -oflow-recompute="names=(relu" 2>&1 | FileCheck %s

// CHECK: error: --recompute: '(relu' is not a regular expression: parentheses not balanced
// expected-error@+1 {{oflow-recompute: mode must be selective or all, not 'some'}}
module {
}
