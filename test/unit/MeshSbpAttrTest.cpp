//===- MeshSbpAttrTest.cpp - mesh and SBP attribute helpers ----------------===//
//
// Unit tests of the C++ side of #oflow.mesh, #oflow.sbp and #oflow.nd_sbp:
// command-line mesh specs, rank <-> mesh coordinates, display names, SBP
// spelling, and the nd-SBP checks and local shapes the partitioner relies on.
//
//===----------------------------------------------------------------------===//
#include "OFlow/OFlowAttrs.h"
#include "OFlow/OFlowDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::oflow;

namespace {

class MeshSbpAttrTest : public ::testing::Test {
protected:
  MeshSbpAttrTest() { ctx.loadDialect<OFlowDialect>(); }

  MeshAttr mesh(ArrayRef<int64_t> shape) { return MeshAttr::get(&ctx, shape); }

  MeshAttr namedMesh(ArrayRef<int64_t> shape, ArrayRef<StringRef> names) {
    SmallVector<StringAttr> nameAttrs;
    for (StringRef n : names)
      nameAttrs.push_back(StringAttr::get(&ctx, n));
    return MeshAttr::get(&ctx, shape, nameAttrs, ArrayRef<StringAttr>());
  }

  SbpAttr S(int64_t axis) { return SbpAttr::getSplit(&ctx, axis); }
  SbpAttr B() { return SbpAttr::getBroadcast(&ctx); }
  SbpAttr P() { return SbpAttr::getPartialSum(&ctx); }
  SbpAttr PMax() { return SbpAttr::getPartialMax(&ctx); }

  NdSbpAttr nd(ArrayRef<SbpAttr> entries) {
    return NdSbpAttr::get(&ctx, entries);
  }

  /// Runs `verifyFor` and returns the diagnostics it emitted (empty when it
  /// succeeds); `ok` says whether it succeeded.
  std::vector<std::string> verify(NdSbpAttr ndSbp, MeshAttr m,
                                  ArrayRef<int64_t> shape, bool &ok) {
    std::vector<std::string> messages;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      messages.push_back(diag.str());
      return success();
    });
    ok = succeeded(ndSbp.verifyFor(
        m, shape, [&] { return emitError(UnknownLoc::get(&ctx)); }));
    return messages;
  }

  /// Parses an attribute, collecting diagnostics instead of printing them.
  Attribute parse(StringRef text, std::string &error) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      error = diag.str();
      return success();
    });
    return parseAttribute(text, &ctx);
  }

  static std::string print(Attribute attr) {
    std::string s;
    llvm::raw_string_ostream os(s);
    attr.print(os);
    return s;
  }

  MLIRContext ctx;
};

//===----------------------------------------------------------------------===//
// parseMeshSpec
//===----------------------------------------------------------------------===//

TEST(ParseMeshSpecTest, AcceptsAxisSizes) {
  struct Case {
    const char *spec;
    std::vector<int64_t> shape;
  } cases[] = {{"1", {1}},
               {"8", {8}},
               {"8x4", {8, 4}},
               {"2x2x2", {2, 2, 2}},
               {"1048576", {1048576}}};
  for (const Case &c : cases) {
    std::string error;
    auto shape = parseMeshSpec(c.spec, error);
    ASSERT_TRUE(succeeded(shape)) << c.spec << ": " << error;
    EXPECT_EQ(std::vector<int64_t>(shape->begin(), shape->end()), c.shape)
        << c.spec;
    EXPECT_TRUE(error.empty()) << c.spec << ": " << error;
  }
}

TEST(ParseMeshSpecTest, RejectsMalformedSpecs) {
  for (const char *spec : {"", "0", "8x", "x8", "axb", "-2", "8x4x", "8x0",
                           "8 x 4", "99999999999999999999", "8X4", "8x-4",
                           "1048577", "x", "8xx4", " 8"}) {
    std::string error;
    auto shape = parseMeshSpec(spec, error);
    EXPECT_TRUE(failed(shape)) << "'" << spec << "' was accepted";
    EXPECT_FALSE(error.empty()) << "'" << spec << "' failed without a message";
  }
}

TEST(ParseMeshSpecTest, ErrorMessages) {
  std::string error;
  ASSERT_TRUE(failed(parseMeshSpec("", error)));
  EXPECT_EQ(error, "empty mesh; expected axis sizes such as '8' or '8x4'");

  ASSERT_TRUE(failed(parseMeshSpec("axb", error)));
  EXPECT_EQ(error, "invalid mesh 'axb': expected positive axis sizes "
                   "separated by 'x', such as '8' or '8x4'");

  // The first axis is 0, the second one 1: the message names the bad one.
  ASSERT_TRUE(failed(parseMeshSpec("0", error)));
  EXPECT_EQ(error, "invalid mesh '0': axis 0 has size 0; sizes must be "
                   "between 1 and 1048576");
  ASSERT_TRUE(failed(parseMeshSpec("8x0", error)));
  EXPECT_EQ(error, "invalid mesh '8x0': axis 1 has size 0; sizes must be "
                   "between 1 and 1048576");

  // Too large for 64 bits: rejected as malformed rather than wrapped.
  ASSERT_TRUE(failed(parseMeshSpec("99999999999999999999", error)));
  EXPECT_NE(error.find("expected positive axis sizes"), std::string::npos)
      << error;

  for (const char *spec : {"8x", "x8", "-2", "8x4x", "8 x 4"}) {
    ASSERT_TRUE(failed(parseMeshSpec(spec, error))) << spec;
    EXPECT_EQ(error, "invalid mesh '" + std::string(spec) +
                         "': expected positive axis sizes separated by 'x', "
                         "such as '8' or '8x4'");
  }
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

TEST_F(MeshSbpAttrTest, MeshSizes) {
  EXPECT_EQ(mesh({1}).getNumDevices(), 1);
  EXPECT_EQ(mesh({8}).getNumDevices(), 8);
  EXPECT_EQ(mesh({8, 4}).getNumDevices(), 32);
  EXPECT_EQ(mesh({2, 2, 2}).getNumDevices(), 8);
  EXPECT_EQ(mesh({8}).getNumAxes(), 1);
  EXPECT_EQ(mesh({2, 3}).getNumAxes(), 2);
  EXPECT_EQ(mesh({2, 2, 2}).getNumAxes(), 3);
}

TEST_F(MeshSbpAttrTest, CoordinatesAreRowMajor) {
  MeshAttr m = mesh({2, 3});
  // The last axis varies fastest.
  EXPECT_EQ(m.getCoordinates(0), (SmallVector<int64_t>{0, 0}));
  EXPECT_EQ(m.getCoordinates(1), (SmallVector<int64_t>{0, 1}));
  EXPECT_EQ(m.getCoordinates(2), (SmallVector<int64_t>{0, 2}));
  EXPECT_EQ(m.getCoordinates(3), (SmallVector<int64_t>{1, 0}));
  EXPECT_EQ(m.getCoordinates(4), (SmallVector<int64_t>{1, 1}));
  EXPECT_EQ(m.getCoordinates(5), (SmallVector<int64_t>{1, 2}));
  EXPECT_EQ(m.getRank({1, 1}), 4);
  EXPECT_EQ(m.getRank({0, 2}), 2);
  EXPECT_EQ(m.getRank({1, 2}), 5);

  MeshAttr cube = mesh({2, 3, 4});
  EXPECT_EQ(cube.getCoordinates(23), (SmallVector<int64_t>{1, 2, 3}));
  EXPECT_EQ(cube.getCoordinates(13), (SmallVector<int64_t>{1, 0, 1}));
  EXPECT_EQ(cube.getRank({0, 1, 0}), 4);

  EXPECT_EQ(mesh({8}).getCoordinates(5), (SmallVector<int64_t>{5}));
  EXPECT_EQ(mesh({8}).getRank({5}), 5);
}

TEST_F(MeshSbpAttrTest, CoordinatesRoundTrip) {
  for (MeshAttr m : {mesh({1}), mesh({8}), mesh({2, 3}), mesh({8, 4}),
                     mesh({2, 2, 2}), mesh({3, 1, 5})}) {
    for (int64_t rank = 0; rank < m.getNumDevices(); ++rank) {
      SmallVector<int64_t> coords = m.getCoordinates(rank);
      ASSERT_EQ(static_cast<int64_t>(coords.size()), m.getNumAxes());
      for (auto [c, size] : llvm::zip_equal(coords, m.getShape())) {
        EXPECT_GE(c, 0);
        EXPECT_LT(c, size);
      }
      EXPECT_EQ(m.getRank(coords), rank) << print(m) << " rank " << rank;
    }
  }
}

TEST_F(MeshSbpAttrTest, AxisDisplayNames) {
  MeshAttr unnamed = mesh({8, 4});
  EXPECT_EQ(unnamed.getAxisDisplayName(0), "0");
  EXPECT_EQ(unnamed.getAxisDisplayName(1), "1");

  MeshAttr named = namedMesh({8, 4}, {"node", "gpu"});
  EXPECT_EQ(named.getAxisDisplayName(0), "0 (node)");
  EXPECT_EQ(named.getAxisDisplayName(1), "1 (gpu)");
}

TEST_F(MeshSbpAttrTest, KnownLinkKinds) {
  ArrayRef<llvm::StringLiteral> kinds = MeshAttr::getKnownLinkKinds();
  for (StringRef kind : {"local", "nvlink", "pcie", "ib", "ethernet", "sequential"})
    EXPECT_TRUE(llvm::is_contained(kinds, kind)) << kind.str();
  EXPECT_EQ(kinds.size(), 6u);
}

TEST_F(MeshSbpAttrTest, MeshVerifier) {
  auto check = [&](ArrayRef<int64_t> shape, ArrayRef<StringRef> names,
                   ArrayRef<StringRef> links) {
    SmallVector<StringAttr> nameAttrs, linkAttrs;
    for (StringRef n : names)
      nameAttrs.push_back(StringAttr::get(&ctx, n));
    for (StringRef l : links)
      linkAttrs.push_back(StringAttr::get(&ctx, l));
    std::string message;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      message = diag.str();
      return success();
    });
    MeshAttr m = MeshAttr::getChecked(
        [&] { return emitError(UnknownLoc::get(&ctx)); }, &ctx, shape,
        ArrayRef<StringAttr>(nameAttrs), ArrayRef<StringAttr>(linkAttrs));
    return m ? std::string() : message;
  };
  EXPECT_EQ(check({8, 4}, {"node", "gpu"}, {"ib", "nvlink"}), "");
  EXPECT_EQ(check({}, {}, {}), "mesh needs at least one axis");
  EXPECT_EQ(check({4, 0}, {}, {}),
            "mesh axis 1 has size 0; sizes must be positive");
  EXPECT_EQ(check({8, 4}, {"node"}, {}), "mesh has 2 axes but 1 names");
  EXPECT_EQ(check({2, 2}, {"gpu", "gpu"}, {}),
            "mesh axis name 'gpu' is used twice");
  EXPECT_EQ(check({8, 4}, {}, {"ib"}), "mesh has 2 axes but 1 link kinds");
  EXPECT_EQ(check({8, 4}, {}, {"ib", "infiniband"}),
            "mesh axis 1 has unknown link kind 'infiniband'; expected local, "
            "nvlink, pcie, ib, ethernet or sequential");
}

TEST_F(MeshSbpAttrTest, MeshPrintParse) {
  MeshAttr named = namedMesh({8, 4}, {"node", "gpu"});
  EXPECT_EQ(print(named), "#oflow.mesh<8x4, names = [node, gpu]>");
  EXPECT_EQ(print(mesh({2, 2, 2})), "#oflow.mesh<2x2x2>");

  std::string error;
  Attribute parsed =
      parse("#oflow.mesh<8x4, names = [node, gpu], links = [ib, nvlink]>",
            error);
  auto m = dyn_cast_or_null<MeshAttr>(parsed);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m.getShape(), ArrayRef<int64_t>({8, 4}));
  EXPECT_EQ(m.getAxisDisplayName(1), "1 (gpu)");
  ASSERT_EQ(m.getLinks().size(), 2u);
  EXPECT_EQ(m.getLinks()[0].getValue(), "ib");
  EXPECT_EQ(parse(print(m), error), m);
}

//===----------------------------------------------------------------------===//
// SbpAttr and NdSbpAttr
//===----------------------------------------------------------------------===//

TEST_F(MeshSbpAttrTest, SbpKindsAndSpelling) {
  EXPECT_EQ(S(0).str(), "S(0)");
  EXPECT_EQ(S(3).str(), "S(3)");
  EXPECT_EQ(B().str(), "B");
  EXPECT_EQ(P().str(), "P(sum)");
  EXPECT_EQ(PMax().str(), "P(max)");

  EXPECT_EQ(S(2).getKind(), SbpKind::Split);
  EXPECT_EQ(S(2).getAxis(), 2);
  EXPECT_TRUE(S(2).isSplit());
  EXPECT_FALSE(S(2).isBroadcast());
  EXPECT_FALSE(S(2).isPartial());

  EXPECT_EQ(B().getKind(), SbpKind::Broadcast);
  EXPECT_TRUE(B().isBroadcast());
  EXPECT_FALSE(B().isSplit());
  EXPECT_FALSE(B().isPartial());

  EXPECT_EQ(P().getKind(), SbpKind::PartialSum);
  EXPECT_EQ(PMax().getKind(), SbpKind::PartialMax);
  EXPECT_TRUE(P().isPartial());
  EXPECT_TRUE(PMax().isPartial());
  EXPECT_FALSE(P().isSplit());
  EXPECT_FALSE(PMax().isBroadcast());

  // Only S(i) has an axis; the others store -1.
  EXPECT_EQ(B().getAxis(), -1);
  EXPECT_EQ(P().getAxis(), -1);
  EXPECT_EQ(PMax().getAxis(), -1);

  // Attributes are uniqued.
  EXPECT_EQ(S(1), SbpAttr::get(&ctx, SbpKind::Split, 1));
  EXPECT_NE(S(1), S(0));
  EXPECT_NE(P(), PMax());
}

TEST_F(MeshSbpAttrTest, SbpPrintParse) {
  EXPECT_EQ(print(S(1)), "#oflow.sbp<S(1)>");
  EXPECT_EQ(print(PMax()), "#oflow.sbp<P(max)>");
  std::string error;
  EXPECT_EQ(parse("#oflow.sbp<P>", error), P());
  EXPECT_EQ(parse("#oflow.sbp<P(sum)>", error), P());
  EXPECT_EQ(parse("#oflow.sbp<P(max)>", error), PMax());
  EXPECT_EQ(parse("#oflow.sbp<B>", error), B());
  EXPECT_EQ(parse("#oflow.sbp<S(4)>", error), S(4));

  EXPECT_FALSE(parse("#oflow.sbp<S(-1)>", error));
  EXPECT_EQ(error, "S(-1): split axis must be non-negative");
  EXPECT_FALSE(parse("#oflow.sbp<P(foo)>", error));
  EXPECT_EQ(error, "unknown partial reduction 'foo'; expected P(sum) or P(max)");
  EXPECT_FALSE(parse("#oflow.sbp<R>", error));
  EXPECT_EQ(error, "unknown SBP 'R'; expected S(i), B, P(sum) or P(max)");
}

TEST_F(MeshSbpAttrTest, NdSbpSpelling) {
  NdSbpAttr layout = nd({S(0), B()});
  EXPECT_EQ(layout.str(), "[S(0), B]");
  EXPECT_EQ(layout.getNumMeshAxes(), 2);
  EXPECT_EQ(nd({P(), PMax(), S(2)}).str(), "[P(sum), P(max), S(2)]");
  EXPECT_EQ(print(layout), "#oflow.nd_sbp<[S(0), B]>");

  std::string error;
  EXPECT_EQ(parse("#oflow.nd_sbp<[S(0), B]>", error), layout);
  EXPECT_FALSE(parse("#oflow.nd_sbp<[]>", error));
  EXPECT_EQ(error, "nd-SBP needs one entry per mesh axis");
}

TEST_F(MeshSbpAttrTest, VerifyForAcceptsFittingLayouts) {
  MeshAttr m = mesh({2, 4});
  bool ok = false;
  EXPECT_TRUE(verify(nd({S(0), S(1)}), m, {8, 16}, ok).empty());
  EXPECT_TRUE(ok);
  EXPECT_TRUE(verify(nd({B(), B()}), m, {3, 5}, ok).empty());
  EXPECT_TRUE(ok);
  // Partial values of a scalar.
  EXPECT_TRUE(verify(nd({P(), P()}), m, {}, ok).empty());
  EXPECT_TRUE(ok);
  EXPECT_TRUE(verify(nd({PMax(), B()}), m, {}, ok).empty());
  EXPECT_TRUE(ok);
  // Two mesh axes split axis 0: 8 devices along it.
  EXPECT_TRUE(verify(nd({S(0), S(0)}), m, {8, 3}, ok).empty());
  EXPECT_TRUE(ok);
  // A single device splits anything.
  EXPECT_TRUE(verify(nd({S(1)}), mesh({1}), {3, 5}, ok).empty());
  EXPECT_TRUE(ok);
}

TEST_F(MeshSbpAttrTest, VerifyForMixedPartials) {
  // The planner's model (isValidLayout) and the verifier share one set of
  // rules: no reduction undoes a sum on one axis and a max on another.
  MeshAttr m = mesh({2, 4});
  bool ok = true;
  std::vector<std::string> diags = verify(nd({P(), PMax()}), m, {}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].find("partial with sum and with max (mesh axis 1)"), std::string::npos)
      << diags[0];
}

TEST_F(MeshSbpAttrTest, VerifyForEntryCount) {
  bool ok = true;
  auto messages = verify(nd({S(0)}), mesh({2, 4}), {8, 8}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "nd-SBP [S(0)] has 1 entries but the mesh "
                         "#oflow.mesh<2x4> has 2 axes");

  messages = verify(nd({S(0), B(), B()}), mesh({8}), {8}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "nd-SBP [S(0), B, B] has 3 entries but the mesh "
                         "#oflow.mesh<8> has 1 axes");
}

TEST_F(MeshSbpAttrTest, VerifyForSplitAxisBeyondRank) {
  bool ok = true;
  auto messages = verify(nd({B(), S(2)}), mesh({2, 4}), {8, 8}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "nd-SBP [B, S(2)] on mesh axis 1 splits axis 2 of a rank-2 "
            "tensor");

  messages = verify(nd({S(0)}), namedMesh({4}, {"gpu"}), {}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "nd-SBP [S(0)] on mesh axis 0 (gpu) splits axis 0 of a rank-0 tensor");
}

TEST_F(MeshSbpAttrTest, VerifyForDivisibilityNamesTheMeshAxis) {
  bool ok = true;
  auto messages =
      verify(nd({S(0), S(1)}), namedMesh({2, 4}, {"node", "gpu"}), {8, 6}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "nd-SBP [S(0), S(1)]: tensor axis 1 (size 6) is not "
                         "divisible by the size 4 of mesh axis 1 (gpu)");

  messages = verify(nd({S(0), B()}), mesh({3, 4}), {8, 8}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "nd-SBP [S(0), B]: tensor axis 0 (size 8) is not "
                         "divisible by the size 3 of mesh axis 0");
}

TEST_F(MeshSbpAttrTest, VerifyForDivisibilityByTheProduct) {
  // 4 is divisible by 2 (node) and by 4 (gpu), but not by 2 * 4.
  bool ok = true;
  auto messages =
      verify(nd({S(0), S(0)}), namedMesh({2, 4}, {"node", "gpu"}), {4, 8}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "nd-SBP [S(0), S(0)]: tensor axis 0 (size 4) is not divisible by "
            "8, the product of the mesh axes that split it (up to mesh axis "
            "1 (gpu))");

  // 6 is divisible by 2 and by 2 * 3, but not by 2 * 3 * 2 (three axes).
  messages = verify(nd({S(1), S(1), S(1)}), mesh({2, 3, 2}), {5, 6}, ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "nd-SBP [S(1), S(1), S(1)]: tensor axis 1 (size 6) is not "
            "divisible by 12, the product of the mesh axes that split it (up "
            "to mesh axis 2)");
}

TEST_F(MeshSbpAttrTest, LocalShape) {
  MeshAttr m = mesh({2, 4});
  EXPECT_EQ(nd({S(0), S(1)}).getLocalShape(m, {8, 16}),
            (SmallVector<int64_t>{4, 4}));
  EXPECT_EQ(nd({S(1), B()}).getLocalShape(m, {8, 16}),
            (SmallVector<int64_t>{8, 8}));
  EXPECT_EQ(nd({B(), S(0)}).getLocalShape(m, {8, 16}),
            (SmallVector<int64_t>{2, 16}));
  EXPECT_EQ(nd({B(), B()}).getLocalShape(m, {8, 16}),
            (SmallVector<int64_t>{8, 16}));
  EXPECT_EQ(nd({P(), PMax()}).getLocalShape(m, {8, 16}),
            (SmallVector<int64_t>{8, 16}));
  EXPECT_EQ(nd({P(), B()}).getLocalShape(m, {}), (SmallVector<int64_t>{}));
  // Two mesh axes split the same tensor axis: it is divided by both.
  EXPECT_EQ(nd({S(0), S(0)}).getLocalShape(m, {8, 3}),
            (SmallVector<int64_t>{1, 3}));
  EXPECT_EQ(nd({S(1), S(1), S(0)}).getLocalShape(mesh({2, 3, 2}), {4, 12}),
            (SmallVector<int64_t>{2, 2}));
}

} // namespace
