//===- SbpSignatureTest.cpp - SBP signature helpers ------------------------===//
//
// The shape-only helpers behind the ops' SBP signatures: numpy-broadcast
// elementwise splits, reductions to partials, reshapes that keep a split,
// and the per-axis divisibility check.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowDialect.h"
#include "OFlow/OFlowSbpInterface.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::oflow;

namespace {

class SbpSignatureTest : public ::testing::Test {
protected:
  SbpSignatureTest() { ctx.loadDialect<OFlowDialect>(); }

  static std::vector<std::string> strs(ArrayRef<SbpSignature> sigs) {
    std::vector<std::string> out;
    for (const SbpSignature &sig : sigs)
      out.push_back(sig.str());
    return out;
  }

  MLIRContext ctx;
};

TEST_F(SbpSignatureTest, ElementwiseFollowsBroadcasting) {
  // [4, 1] + [6] -> [4, 6]: the lhs broadcasts along axis 1, the rhs along 0.
  SmallVector<SmallVector<int64_t>> shapes{{4, 1}, {6}};
  EXPECT_EQ(strs(getElementwiseSbpSignatures(&ctx, shapes, {4, 6})),
            (std::vector<std::string>{"B, B -> B", "S(0), B -> S(0)",
                                      "B, S(0) -> S(1)"}));
}

TEST_F(SbpSignatureTest, ReductionOverASplitAxisIsPartial) {
  EXPECT_EQ(strs(getReductionSbpSignatures(&ctx, {4, 6, 8}, {1}, /*keepDims=*/false,
                                           sbpPMax(&ctx))),
            (std::vector<std::string>{"B -> B", "S(0) -> S(0)", "S(1) -> P(max)",
                                      "S(2) -> S(1)"}));
  EXPECT_EQ(getReductionSbpSignatures(&ctx, {4, 6}, {0}, true, sbpP(&ctx), "note")[1].str(),
            "S(0) -> P(sum) [needs note]");
}

TEST_F(SbpSignatureTest, ReshapeKeepsContiguousSplits) {
  // [4, 6, 2] -> [24, 2]: axis 0 and axis 2 stay blocks, axis 1 does not.
  EXPECT_EQ(strs(getReshapeSbpSignatures(&ctx, {4, 6, 2}, {24, 2})),
            (std::vector<std::string>{"B -> B", "S(0) -> S(0)", "S(2) -> S(1)",
                                      "P(sum) -> P(sum)", "P(max) -> P(max)"}));
  // [4, 6] -> [6, 4]: no prefix product matches past axis 0.
  EXPECT_EQ(getReshapeSbpSignatures(&ctx, {4, 6}, {6, 4})[1].str(), "S(0) -> S(0)");
}

TEST_F(SbpSignatureTest, DivisibilityIsPerMeshAxis) {
  SbpSignature sig{{sbpS(&ctx, 0), sbpB(&ctx)}, {sbpS(&ctx, 0)}, ""};
  SmallVector<SmallVector<int64_t>> in{{6, 4}, {4}}, out{{6}};
  EXPECT_TRUE(sbpSignatureFits(sig, in, out, 2));
  EXPECT_TRUE(sbpSignatureFits(sig, in, out, 3));
  EXPECT_FALSE(sbpSignatureFits(sig, in, out, 4));
  // A split axis the tensor does not have never fits.
  SbpSignature bad{{sbpS(&ctx, 2), sbpB(&ctx)}, {sbpB(&ctx)}, ""};
  EXPECT_FALSE(sbpSignatureFits(bad, in, out, 1));
}

} // namespace
