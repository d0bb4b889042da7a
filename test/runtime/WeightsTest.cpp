//===- WeightsTest.cpp - initial values from an ONNX model ----------------===//
#include "TestUtil.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/Weights.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <sys/stat.h>

using namespace oflow_rt;
using oflow_rt::test::expectError;
using oflow_rt::test::TempDir;

namespace {
// w is embedded (init offset 0); b and steps are not; w.m is optimizer state.
const char *kManifest = "oflow-manifest 1\nmode train\nstate_bytes 256\n"
                        "var w param f32 1 2 0 0\n"
                        "var b param f32 1 3 64 -1\n"
                        "var w.m optimizer f32 1 2 128 -1\n"
                        "var steps buffer i64 0 192 -1\n";

struct Model {
  onnx::ModelProto proto;
  onnx::TensorProto *add(const std::string &name, int type, std::vector<int64_t> dims) {
    onnx::TensorProto *t = proto.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims)
      t->add_dims(d);
    return t;
  }
  void write(const std::string &path) {
    std::string s = proto.SerializeAsString();
    writeFileAtomic(path, s.data(), s.size());
  }
};

// w as float_data, b in an external file, steps as raw_data.
Model good(const std::string &bLocation = "weights.bin", const std::string &bOffset = "8",
           const std::string &bLength = "12") {
  Model m;
  onnx::TensorProto *w = m.add("w", onnx::TensorProto::FLOAT, {2});
  w->add_float_data(1.5f);
  w->add_float_data(-1.5f);
  onnx::TensorProto *b = m.add("b", onnx::TensorProto::FLOAT, {3});
  b->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = b->add_external_data();
  kv->set_key("location");
  kv->set_value(bLocation);
  kv = b->add_external_data();
  kv->set_key("offset");
  kv->set_value(bOffset);
  kv = b->add_external_data();
  kv->set_key("length");
  kv->set_value(bLength);
  onnx::TensorProto *s = m.add("steps", onnx::TensorProto::INT64, {});
  int64_t seven = 7;
  s->set_raw_data(&seven, 8);
  return m;
}

void writeExternal(const std::string &dir) {
  float data[5] = {0, 0, 10, 20, 30}; // b lives at offset 8
  writeFileAtomic(dir + "/weights.bin", data, sizeof data);
}

template <typename T> T at(const std::vector<uint8_t> &s, size_t off) {
  T v;
  std::memcpy(&v, s.data() + off, sizeof v);
  return v;
}
} // namespace

TEST(Weights, FillsVariablesFromInitializers) {
  TempDir dir;
  writeExternal(dir.path);
  good().write(dir.path + "/m.onnx");
  Manifest m = parseManifest(kManifest);
  std::vector<uint8_t> state(256, 0xAB);
  EXPECT_EQ(loadWeights(dir.path + "/m.onnx", m, state.data(), true), 2);
  EXPECT_EQ(at<float>(state, 0), at<float>(std::vector<uint8_t>(4, 0xAB), 0))
      << "an embedded variable was overwritten";
  EXPECT_EQ(at<float>(state, 64 + 8), 30.0f);
  EXPECT_EQ(at<int64_t>(state, 192), 7);
  EXPECT_EQ(state[128], 0xAB) << "optimizer state was touched";
  EXPECT_EQ(loadWeights(dir.path + "/m.onnx", m, state.data(), false), 3);
  EXPECT_EQ(at<float>(state, 4), -1.5f);
}

TEST(Weights, RejectsBadModels) {
  TempDir dir;
  Manifest m = parseManifest(kManifest);
  std::vector<uint8_t> state(256);
  std::string path = dir.path + "/m.onnx";
  good().write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "initializer 'b': external data location 'weights.bin' does not exist next to the model");
  writeExternal(dir.path);
  good("weights.bin", "12").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "initializer 'b': external data location 'weights.bin' is truncated "
              "(20 bytes, needs offset 12 + length 12)");
  good("../weights.bin").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); }, "inside the model's folder");
  // The confinement rule's other cases, on the runtime's path (the
  // importer's are in test/Driver/external-data.test): a directory, an
  // offset past the end, an offset + length past 2^63 (the runtime reads
  // them as int64: larger values are refused as they are parsed).
  ASSERT_EQ(::mkdir((dir.path + "/data").c_str(), 0755), 0);
  good("data").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "initializer 'b': external data location 'data' is not a regular file");
  good("weights.bin", "4096").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "external data location 'weights.bin' is truncated (20 bytes, needs offset 4096 + "
              "length 12)");
  good("weights.bin", "9223372036854775807").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "external data location 'weights.bin' is truncated (20 bytes, needs offset "
              "9223372036854775807 + length 12)");
  good("weights.bin", "8", "18446744073709551615").write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              "initializer 'b': bad external-data length '18446744073709551615'");
  Model noSteps = good();
  noSteps.proto.mutable_graph()->mutable_initializer()->RemoveLast();
  noSteps.write(path);
  expectError([&] { loadWeights(path, m, state.data(), true); },
              path + ": no initializer 'steps'");
  Model wrongShape = good();
  wrongShape.proto.mutable_graph()->mutable_initializer(0)->set_dims(0, 3);
  wrongShape.write(path);
  expectError([&] { loadWeights(path, m, state.data(), false); }, "needs 12 bytes of data");
  wrongShape.proto.mutable_graph()->mutable_initializer(0)->add_float_data(0);
  wrongShape.write(path);
  expectError([&] { loadWeights(path, m, state.data(), false); },
              "initializer 'w' is f32[3], the program's variable is f32[2]");
  std::string junk = "\xff\xff\xff";
  writeFileAtomic(path, junk.data(), junk.size());
  expectError([&] { loadWeights(path, m, state.data(), true); }, "not a valid ONNX model");
  expectError([&] { loadWeights(dir.path + "/none.onnx", m, state.data(), true); },
              "none.onnx: cannot open");
}
