//===- ManifestTest.cpp - manifest parsing and name escaping --------------===//
#include "TestUtil.h"
#include "oflow_rt/Manifest.h"

using namespace oflow_rt;
using oflow_rt::test::expectError;

namespace {
const char *kGood = R"(oflow-manifest 1
# a comment
mode train
model mlp%20v2.onnx
batch 8
state_bytes 256
io_bytes 512
arena_bytes 64
entry train
entry grads
var fc1.weight param f32 2 4 3 0 0
var fc1.weight.exp_avg optimizer f32 2 4 3 64 -1
var steps buffer i64 0 128 -1
input x f32 2 8 3 0 normal
input label i64 1 8 128 int:0:10
output train loss f32 0 192
output grads loss f32 0 192
grad fc1.weight f32 2 4 3 256
scalar lr f32 320 0.001
scalar step i64 384
optimizer adam beta1=0.9
plan peak=64 naive=128 lower_bound=64
weights /models/big%20one.onnx
)";

std::string withLine(const std::string &line) {
  return std::string(kGood) + line + "\n";
}
} // namespace

TEST(Manifest, ParsesEveryRecord) {
  Manifest m = parseManifest(kGood);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.mode, "train");
  EXPECT_EQ(m.model, "mlp v2.onnx");
  EXPECT_EQ(m.batch, 8);
  EXPECT_EQ(m.stateBytes, 256);
  EXPECT_EQ(m.ioBytes, 512);
  EXPECT_EQ(m.arenaBytes, 64);
  EXPECT_TRUE(m.hasEntry("train"));
  EXPECT_TRUE(m.hasEntry("grads"));
  EXPECT_FALSE(m.hasEntry("infer"));
  ASSERT_EQ(m.vars.size(), 3u);
  EXPECT_EQ(m.vars[0].name, "fc1.weight");
  EXPECT_EQ(m.vars[0].kind, VarKind::Param);
  EXPECT_EQ(m.vars[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(m.vars[0].initOffset, 0);
  EXPECT_EQ(m.vars[1].kind, VarKind::Optimizer);
  EXPECT_EQ(m.vars[1].initOffset, -1);
  EXPECT_EQ(m.vars[2].dtype, DType::I64);
  EXPECT_TRUE(m.vars[2].dims.empty());
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_TRUE(m.inputs[0].synthNormal);
  EXPECT_FALSE(m.inputs[1].synthNormal);
  EXPECT_EQ(m.inputs[1].lo, 0);
  EXPECT_EQ(m.inputs[1].hi, 10);
  EXPECT_EQ(m.outputsOf("train").size(), 1u);
  ASSERT_NE(m.findOutput("grads", "loss"), nullptr);
  EXPECT_EQ(m.findOutput("grads", "loss")->offset, 192);
  ASSERT_EQ(m.grads.size(), 1u);
  EXPECT_EQ(m.grads[0].offset, 256);
  ASSERT_NE(m.findScalar("lr"), nullptr);
  EXPECT_DOUBLE_EQ(*m.findScalar("lr")->defaultValue, 0.001);
  EXPECT_FALSE(m.findScalar("step")->defaultValue.has_value());
  EXPECT_EQ(m.findScalar("poison"), nullptr);
  EXPECT_EQ(m.info.size(), 2u);
  EXPECT_EQ(m.weightsFile, "/models/big one.onnx");
  EXPECT_EQ(m.inputNames(), "x, label");
}

TEST(Manifest, RejectsMalformedLines) {
  struct Case {
    std::string text, error;
  } cases[] = {
      {"", "empty"},
      {"mode train\n", "expected 'oflow-manifest 1' first"},
      {"oflow-manifest 2\nmode train\n", "unsupported manifest version 2"},
      {"oflow-manifest 1\n", "no 'mode' record"},
      {"oflow-manifest 1\nmode fly\n", "line 2: unknown mode 'fly'"},
      {withLine("frobnicate 3"), "line 24: unknown record 'frobnicate'"},
      {withLine("entry train"), "duplicate entry 'train'"},
      {withLine("entry sideways"), "unknown entry 'sideways'"},
      {withLine("var w param f99 0 192 -1"), "unknown dtype 'f99'"},
      {withLine("var w param f32 2 4 192 -1"), "bad state offset"},
      {withLine("var w param f32 1 4 192"), "missing init offset"},
      {withLine("var w param f32 0 192 -1 7"), "unexpected '7'"},
      {withLine("var w weird f32 0 192 -1"), "unknown var kind 'weird'"},
      {withLine("var w param f32 0 102 -1"), "not a multiple of 4"},
      {withLine("var w param f32 1 16 96 -1"), "not a multiple of 64"},
      {withLine("var w param f32 1 64 192 -1"), "lies outside state (256 bytes)"},
      {withLine("var fc1.weight param f32 0 192 -1"), "duplicate var 'fc1.weight'"},
      {withLine("var w%4 param f32 0 192 -1"), "bad name escape"},
      {withLine("var w%ZZ param f32 0 192 -1"), "bad name escape"},
      {withLine("var w param f32 -1 192 -1"), "bad rank '-1'"},
      {withLine("var w param f32 1 -4 192 -1"), "bad dimension '-4'"},
      {withLine("var w  param f32 0 192 -1"), "empty token"},
      {withLine("input z f32 0 448 uniform"), "bad synth 'uniform'"},
      {withLine("input z i64 0 448 int:5:5"), "lo < hi"},
      {withLine("input z i64 0 448 normal"), "synth 'normal' for integer input"},
      {withLine("input z f32 0 448 int:0:3"), "integer synth for float input"},
      {withLine("output train loss f32 0 448"), "duplicate output 'loss'"},
      {withLine("scalar lr f32 448"), "duplicate scalar 'lr'"},
      {withLine("scalar beta f32 448 fast"), "bad default 'fast'"},
      {withLine("batch eight"), "bad batch 'eight'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    expectError([&] { parseManifest(c.text); }, c.error);
  }
}

TEST(Manifest, ReadsMeshAndLayouts) {
  const char *head = "oflow-manifest 1\nmode train\nstate_bytes 256\nio_bytes 256\n";
  Manifest m = parseManifest(std::string(head) +
                             "var w param f32 2 8 6 0 0 sbp=S0,S1\n"
                             "var v param f32 1 8 128 -1 sbp=S0,S0\n"
                             "var c buffer i64 0 192 -1\n"
                             "input x f32 2 4 6 0 normal sbp=S0,B\n"
                             "output train loss f32 0 64 sbp=B,B\n"
                             "grad w f32 2 8 6 128 sbp=S0,S1\n"
                             "mesh 2 2\n");
  EXPECT_EQ(m.mesh, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(m.meshSize(), 4);
  EXPECT_EQ(m.meshText(), "4 (2x2)");
  EXPECT_EQ(m.vars[0].sbp, (Sbp{0, 1}));
  EXPECT_EQ(m.vars[0].localDims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(m.vars[0].localBytes(), 48);
  EXPECT_EQ(m.vars[1].localDims, (std::vector<int64_t>{2}));
  EXPECT_TRUE(m.vars[1].sharded());
  EXPECT_FALSE(m.vars[2].sharded());
  EXPECT_EQ(m.inputs[0].localDims, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(m.outputs[0].sbp, (Sbp{-1, -1}));
  EXPECT_EQ(m.grads[0].localDims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(m.grads[0].shape(), m.grads[0].dims);
  // A tensor stored flat: its dims are what the mesh splits, its view what
  // files and users see.
  Manifest flat = parseManifest(std::string(head) +
                                "var w param f32 2 4 9 0 0 sbp=S0,B view=6x6\n"
                                "grad w f32 2 4 9 128 sbp=S0,B view=6x6\n"
                                "mesh 2 2\n");
  EXPECT_EQ(flat.vars[0].shape(), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(flat.vars[0].localDims, (std::vector<int64_t>{2, 9}));
  EXPECT_EQ(flat.grads[0].shape(), (std::vector<int64_t>{6, 6}));
  // Local sizes decide what fits: 8x6 floats would not fit at 128.
  EXPECT_EQ(parseManifest("oflow-manifest 1\nmode train\nmesh 4\nstate_bytes 64\n"
                          "var w param f32 2 8 8 0 0 sbp=S1\n").vars[0].localBytes(), 64);
}

TEST(Manifest, RejectsBadLayouts) {
  const char *head = "oflow-manifest 1\nmode train\nstate_bytes 1024\nmesh 2 2\n";
  struct Case { std::string text, error; };
  std::vector<Case> cases = {
      {"var w param f32 1 8 0 0 sbp=P,S0\n", "bad sbp entry 'P'"},
      {"var w param f32 1 8 0 0 sbp=S0\n", "1 entries for a mesh of 2 axes"},
      {"var w param f32 1 8 0 0 sbp=S1,B\n", "split along axis 1"},
      {"var w param f32 1 6 0 0 sbp=S0,S0\n", "dim 0 (6) does not divide into 4 pieces"},
      {"var w param f32 1 8 0 0 sbp=S0,X\n", "bad sbp entry 'X'"},
      {"var w param f32 1 8 0 0 sbp=S0,\n", "bad 'sbp=S0,'"},
      {"mesh 2\n", "duplicate mesh record"},
      {"var w param f32 2 4 9 0 0 sbp=S0,B view=6x7\n",
       "'view=6x7' has more elements than the tensor's 36"},
      {"var w param f32 2 4 9 0 0 sbp=S0,B view=6xx6\n", "bad 'view=6xx6'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    expectError([&] { parseManifest(head + c.text); }, c.error);
  }
  expectError([] { parseManifest("oflow-manifest 1\nmode train\nmesh 0\n"); },
              "bad mesh axis size '0'");
  expectError([] { parseManifest("oflow-manifest 1\nmode train\nmesh\n"); },
              "empty mesh");
  expectError([] {
    parseManifest("oflow-manifest 1\nmode train\nstate_bytes 64\n"
                  "var w param f32 1 8 0 0 sbp=S0\n");
  }, "has sbp=S0 but the manifest has no mesh record");
}

TEST(Manifest, ToleratesAnEmptyModelName) {
  EXPECT_EQ(parseManifest("oflow-manifest 1\nmode infer\nmodel \n").model, "");
  EXPECT_EQ(parseManifest("oflow-manifest 1\nmode infer\nmodel\n").model, "");
}

TEST(Manifest, FindsTheCompiledLearningRateAndLoss) {
  Manifest m = parseManifest(kGood);
  EXPECT_DOUBLE_EQ(*m.defaultLearningRate(), 0.001); // the scalar's default
  const char *head = "oflow-manifest 1\nmode train\nio_bytes 128\n"
                     "output train loss f32 0 0\nscalar lr f32 64\n";
  m = parseManifest(std::string(head) + "optimizer adamw lr=0.0003 beta1=0.9\n");
  EXPECT_DOUBLE_EQ(*m.defaultLearningRate(), 0.0003);
  EXPECT_EQ(m.lossOutput("grads"), m.findOutput("train", "loss"));
  EXPECT_EQ(m.lossOutput("infer"), nullptr);
  m = parseManifest(std::string(head) + "optimizer sgd momentum=0.9\n");
  EXPECT_FALSE(m.defaultLearningRate().has_value());
  m = parseManifest(std::string(head) + "optimizer sgd lr=fast\n");
  EXPECT_FALSE(m.defaultLearningRate().has_value());
}

TEST(Manifest, EscapesNames) {
  EXPECT_EQ(escapeName("fc1.weight"), "fc1.weight");
  EXPECT_EQ(escapeName("/layer/MatMul:0"), "/layer/MatMul:0");
  EXPECT_EQ(escapeName("a b%c\n"), "a%20b%25c%0A");
  EXPECT_EQ(escapeName("\xff"), "%FF");
  for (std::string s : {"", "plain", "with space", "%%", "\x01\x7f\xfe", "ü"}) {
    auto back = unescapeName(escapeName(s));
    ASSERT_TRUE(back.has_value()) << s;
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(*unescapeName("a%2fb"), "a/b"); // lower-case hex is accepted
  EXPECT_FALSE(unescapeName("a b").has_value());
  EXPECT_FALSE(unescapeName("%").has_value());
  EXPECT_FALSE(unescapeName("%4").has_value());
  EXPECT_FALSE(unescapeName("%G0").has_value());
}
