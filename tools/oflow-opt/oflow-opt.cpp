//===- oflow-opt.cpp - run oflow passes on MLIR -----------------------------===//
//
// MlirOptMain with the oflow dialect and the upstream dialects the pipeline
// uses, so every oflow pass can be run and tested alone.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowDialect.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::oflow::OFlowDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect>();
  mlir::registerTransformsPasses();
  oflow::registerOFlowConversionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "oflow optimizer driver\n", registry));
}
