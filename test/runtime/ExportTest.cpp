//===- ExportTest.cpp - trained weights back into the ONNX model ----------===//
#include "TestUtil.h"
#include "oflow_rt/Export.h"
#include "oflow_rt/FileUtil.h"

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace oflow_rt;
using oflow_rt::test::expectError;
using oflow_rt::test::TempDir;

namespace {
const char *kManifest = "oflow-manifest 1\nmode train\nstate_bytes 192\n"
                        "var w param f32 1 2 0 0\n"
                        "var w.exp_avg optimizer f32 1 2 64 -1\n"
                        "var steps buffer i64 0 128 -1\n";

std::string model(const std::vector<int64_t> &wDims) {
  onnx::ModelProto p;
  p.set_ir_version(8);
  onnx::GraphProto *g = p.mutable_graph();
  g->set_name("g");
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : wDims)
    w->add_dims(d);
  w->add_float_data(9); // stale typed data must not survive
  w->add_float_data(9);
  onnx::TensorProto *s = g->add_initializer();
  s->set_name("steps");
  s->set_data_type(onnx::TensorProto::INT64);
  onnx::TensorProto *c = g->add_initializer();
  c->set_name("not_a_var");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_float_data(1);
  return p.SerializeAsString();
}
} // namespace

TEST(Export, WritesCurrentValues) {
  TempDir dir;
  Manifest m = parseManifest(kManifest);
  std::vector<uint8_t> state(192);
  float w[2] = {1.5f, -2.5f};
  int64_t steps = 20;
  std::memcpy(state.data(), w, 8);
  std::memcpy(state.data() + 128, &steps, 8);
  std::string bytes = model({2});
  exportOnnx(dir.path + "/out.onnx", reinterpret_cast<const uint8_t *>(bytes.data()),
             bytes.size(), m, state.data());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(readFile(dir.path + "/out.onnx")));
  const auto &inits = back.graph().initializer();
  ASSERT_EQ(inits.size(), 3);
  EXPECT_EQ(inits[0].float_data_size(), 0);
  EXPECT_EQ(inits[0].raw_data(), std::string(reinterpret_cast<char *>(w), 8));
  EXPECT_EQ(inits[1].raw_data(), std::string(reinterpret_cast<char *>(&steps), 8));
  EXPECT_EQ(inits[2].float_data_size(), 1) << "a non-variable initializer changed";
}

TEST(Export, ReportsWhatIsMissing) {
  TempDir dir;
  Manifest m = parseManifest(kManifest);
  std::vector<uint8_t> state(192);
  expectError([&] { exportOnnx(dir.path + "/o.onnx", nullptr, 0, m, state.data()); },
              "embeds no ONNX model");
  std::string junk = "\xff\xff\xff";
  expectError(
      [&] {
        exportOnnx(dir.path + "/o.onnx", reinterpret_cast<const uint8_t *>(junk.data()),
                   junk.size(), m, state.data());
      },
      "does not parse");
  std::string wrong = model({3});
  expectError(
      [&] {
        exportOnnx(dir.path + "/o.onnx", reinterpret_cast<const uint8_t *>(wrong.data()),
                   wrong.size(), m, state.data());
      },
      "initializer 'w' has shape [3] in the model, [2] in the program");
  Manifest extra = parseManifest(std::string(kManifest) + "var v param f32 0 64 -1\n");
  std::string ok = model({2});
  expectError(
      [&] {
        exportOnnx(dir.path + "/o.onnx", reinterpret_cast<const uint8_t *>(ok.data()),
                   ok.size(), extra, state.data());
      },
      "variable 'v' is not an initializer");
}
