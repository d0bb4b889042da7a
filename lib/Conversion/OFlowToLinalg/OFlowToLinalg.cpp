//===- OFlowToLinalg.cpp - the oflow-lower-to-linalg pass ------------------===//
//
// A partial conversion: every oflow compute op is illegal, the program-state
// ops and oflow.gradient stay for the pass that lowers state. Patterns may
// build other oflow ops (a loss from log_softmax); the driver lowers those
// in turn.
//
//===----------------------------------------------------------------------===//
#include "oflow/Conversion/Passes.h"

#include "LoweringUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace oflow {
#define GEN_PASS_DEF_OFLOWLOWERTOLINALG
#include "oflow/Conversion/Passes.h.inc"

void populateOFlowToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                   const ConvLibraryOptions &conv) {
  lowering::populateElementwisePatterns(patterns);
  lowering::populateDropoutPatterns(patterns);
  lowering::populateReductionPatterns(patterns);
  lowering::populateLinearAlgebraPatterns(patterns);
  lowering::populateConvPoolPatterns(patterns, conv);
  lowering::populateShapePatterns(patterns);
  lowering::populateGatherScatterPatterns(patterns);
  lowering::populateLossPatterns(patterns);
  lowering::populateCollectivePatterns(patterns);
  lowering::populateAttentionPatterns(patterns);
}

namespace {
using namespace mlir;

struct OFlowLowerToLinalg
    : impl::OFlowLowerToLinalgBase<OFlowLowerToLinalg> {
  using OFlowLowerToLinalgBase::OFlowLowerToLinalgBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, func::FuncDialect,
                           bufferization::BufferizationDialect,
                           memref::MemRefDialect>();
    target.addIllegalDialect<mlir::oflow::OFlowDialect>();
    target.addLegalOp<mlir::oflow::VariableOp, mlir::oflow::ReadVariableOp,
                      mlir::oflow::WriteVariableOp,
                      mlir::oflow::GradientOp>();
    for (const std::string &name : keepOps) {
      OperationName op(name, ctx);
      if (!op.isRegistered() || op.getDialectNamespace() != "oflow") {
        getOperation().emitError("oflow-lower-to-linalg: cannot keep '")
            << name << "': not an op of the oflow dialect";
        return signalPassFailure();
      }
      target.addLegalOp(op);
    }
    if (convLibrary != "" && convLibrary != "dnnl" && convLibrary != "cudnn") {
      getOperation().emitError("oflow-lower-to-linalg: conv-library must be "
                               "empty, 'dnnl' or 'cudnn', not '")
          << convLibrary << "'";
      return signalPassFailure();
    }
    if (convWorkspaceBytes < 0) {
      getOperation().emitError("oflow-lower-to-linalg: conv-workspace-bytes "
                               "must not be negative");
      return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    populateOFlowToLinalgPatterns(patterns,
                                  {convLibrary, convWorkspaceBytes});
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace oflow
