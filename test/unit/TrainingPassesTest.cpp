//===- TrainingPassesTest.cpp - the training passes' C++ interface --------===//
//
// What the driver uses without going through oflow-opt: the options structs
// of the training passes and listTrainedParameters, before and after
// oflow-build-train-step.
//
//===----------------------------------------------------------------------===//
#include "oflow/Training/Passes.h"

#include "OFlow/OFlowDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

constexpr const char *kModule = R"mlir(
func.func @main(%gw: tensor<2xf32>, %gb: tensor<f32>) -> tensor<f32> {
  %m = oflow.weight "bn.mean", dense<0.0> : tensor<2xf32>
  %w = oflow.weight "fc.weight", dense<1.0> : tensor<2xf32> {oflow.trainable}
  %b = oflow.weight "fc.bias", dense<0.0> : tensor<f32> {oflow.trainable}
  %w2 = oflow.weight "fc.weight", dense<1.0> : tensor<2xf32> {oflow.trainable}
  %l = oflow.reduce_sum %w {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  oflow.gradient "fc.weight", %gw : tensor<2xf32>
  oflow.gradient "fc.bias", %gb : tensor<f32>
  return %l : tensor<f32>
}
)mlir";

class TrainingPassesTest : public ::testing::Test {
protected:
  TrainingPassesTest() {
    ctx.loadDialect<mlir::oflow::OFlowDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kModule, &ctx);
  }
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(TrainingPassesTest, ListsTrainableWeightsBeforeTheTrainStep) {
  ASSERT_TRUE(module);
  EXPECT_EQ(::oflow::listTrainedParameters(*module),
            (std::vector<std::string>{"fc.weight", "fc.bias"}));
}

TEST_F(TrainingPassesTest, ListsParamVariablesAfterTheTrainStep) {
  ASSERT_TRUE(module);
  ::oflow::BuildTrainStepOptions options;
  options.optimizer = "adamw";
  options.lr = 3e-4;
  options.clipGradNorm = 1.0;
  options.schedule = "warmup-cosine";
  options.warmupSteps = 5;
  options.totalSteps = 50;
  PassManager pm(&ctx);
  pm.addPass(::oflow::createBuildTrainStep(options));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(::oflow::listTrainedParameters(*module),
            (std::vector<std::string>{"fc.weight", "fc.bias"}));
  auto train = module->lookupSymbol<func::FuncOp>("oflow_train_step");
  ASSERT_TRUE(train);
  auto optimizer = train->getAttrOfType<DictionaryAttr>("oflow.optimizer");
  ASSERT_TRUE(optimizer);
  EXPECT_EQ(optimizer.getAs<StringAttr>("kind").getValue(), "adamw");
  EXPECT_DOUBLE_EQ(optimizer.getAs<FloatAttr>("lr").getValueAsDouble(), 3e-4);
  EXPECT_EQ(optimizer.getAs<IntegerAttr>("total_steps").getInt(), 50);
}

TEST_F(TrainingPassesTest, NothingTrainedWithoutAutodiff) {
  auto plain = parseSourceString<ModuleOp>(
      "func.func @main() -> tensor<f32> {\n"
      "  %w = oflow.weight \"w\", dense<1.0> : tensor<f32>\n"
      "  return %w : tensor<f32>\n"
      "}\n",
      &ctx);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(::oflow::listTrainedParameters(*plain).empty());
}

} // namespace
