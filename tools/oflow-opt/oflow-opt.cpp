//===- oflow-opt.cpp - run oflow passes on MLIR -----------------------------===//
//
// MlirOptMain with the oflow dialect, every upstream dialect and pass the
// pipeline uses, and the oflow passes, so every stage can be run and tested
// alone.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowDialect.h"
#include "oflow/Codegen/Passes.h"
#include "oflow/Sbp/Passes.h"
#include "oflow/Training/Passes.h"
#include "oflow/Autodiff/Passes.h"
#include "oflow/Conversion/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::oflow::OFlowDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  oflow::registerOFlowCodegenPasses();
  oflow::registerSbpPasses();
  oflow::registerTrainingPasses();
  oflow::registerAutodiffPasses();
  oflow::registerOFlowConversionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "oflow optimizer driver\n", registry));
}
