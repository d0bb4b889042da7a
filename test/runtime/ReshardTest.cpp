//===- ReshardTest.cpp - block math and checkpoints across meshes ---------===//
//
// Ranks are simulated in one process: each gets its own state buffer and
// coordinates, and calls the checkpoint writer and reader as it would under
// mpirun. A checkpoint saved on a 2x2 mesh resumes on 4 devices with another
// plan, that one on 1 device, and back.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/Layout.h"

#include <cstring>
#include <map>

using namespace oflow_rt;
using oflow_rt::test::TempDir;

TEST(Layout, MixedRadixAndBroadcast) {
  std::vector<int64_t> mesh{2, 2};
  // S0,S0 on 2x2: rank (c0, c1) holds rows [(2*c0 + c1) * 2, +2) of 8.
  Block b = localBlock({8, 3}, {0, 0}, mesh, {1, 0});
  EXPECT_EQ(b.offset, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(b.size, (std::vector<int64_t>{2, 3}));
  b = localBlock({8, 6}, {1, 0}, mesh, {1, 0});
  EXPECT_EQ(b.offset, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(b.size, (std::vector<int64_t>{4, 3}));
  b = localBlock({8, 6}, {-1, 1}, mesh, {1, 1});
  EXPECT_EQ(b.offset, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(b.size, (std::vector<int64_t>{8, 3}));
  EXPECT_TRUE(isReplica({-1, 1}, {1, 0}));
  EXPECT_FALSE(isReplica({-1, 1}, {0, 1}));
  EXPECT_EQ(meshCoordsOf(3, {2, 2}), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(meshCoordsOf(5, {2, 3}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(localDims({8, 6}, {0, 1}, mesh), (std::vector<int64_t>{4, 3}));
}

TEST(Layout, CopyOverlapGlobalToLocalAndBack) {
  std::vector<float> global(4 * 6);
  for (size_t i = 0; i < global.size(); ++i)
    global[i] = static_cast<float>(i);
  Block whole = wholeBlock({4, 6}), piece{{2, 3}, {2, 3}};
  std::vector<float> local(6);
  EXPECT_EQ(copyOverlap(4, reinterpret_cast<uint8_t *>(global.data()), whole,
                        reinterpret_cast<uint8_t *>(local.data()), piece), 6);
  EXPECT_EQ(local, (std::vector<float>{15, 16, 17, 21, 22, 23}));
  std::vector<float> back(24, -1);
  copyOverlap(4, reinterpret_cast<uint8_t *>(local.data()), piece,
              reinterpret_cast<uint8_t *>(back.data()), whole);
  EXPECT_EQ(back[15], 15);
  EXPECT_EQ(back[23], 23);
  EXPECT_EQ(back[14], -1);
  // Partial overlap of two pieces; disjoint ones copy nothing.
  Block other{{1, 4}, {2, 2}};
  std::vector<float> o(4, 0);
  EXPECT_EQ(copyOverlap(4, reinterpret_cast<uint8_t *>(local.data()), piece,
                        reinterpret_cast<uint8_t *>(o.data()), other), 2);
  EXPECT_EQ(o, (std::vector<float>{0, 0, 16, 17}));
  EXPECT_EQ(copyOverlap(4, reinterpret_cast<uint8_t *>(local.data()), piece,
                        reinterpret_cast<uint8_t *>(o.data()), Block{{0, 0}, {2, 3}}), 0);
}

namespace {
// The same four variables under three plans: w [8,4], m [8,4], b [4], c i64.
std::string program(const std::string &mesh, const std::string &w,
                    const std::string &mm, const std::string &b) {
  auto sbp = [](const std::string &s) { return s.empty() ? "" : " sbp=" + s; };
  return "oflow-manifest 1\nmode train\nstate_bytes 640\n" + mesh +
         "var w param f32 2 8 4 0 -1" + sbp(w) + "\n" +
         "var m optimizer f32 2 8 4 256 -1" + sbp(mm) + "\n" +
         "var b param f32 1 4 512 -1" + sbp(b) + "\n" +
         "var c buffer i64 0 576 -1\n";
}

std::map<std::string, std::vector<uint8_t>> globals(const Manifest &m) {
  std::map<std::string, std::vector<uint8_t>> g;
  for (const VarRecord &v : m.vars) {
    std::vector<uint8_t> bytes(v.shapeBytes());
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<uint8_t>(i * 7 + v.name[0]);
    g[v.name] = bytes;
  }
  return g;
}

std::vector<uint8_t> stateOf(const Manifest &m, const std::vector<int64_t> &coords,
                             std::map<std::string, std::vector<uint8_t>> &g) {
  std::vector<uint8_t> s(m.stateBytes, 0xEE);
  // `g` holds each variable in its own shape; a flat store's padding is
  // left as it was (no checkpoint has it).
  for (const VarRecord &v : m.vars)
    copyOverlapViews(dtypeSize(v.dtype), g[v.name].data(), v.shape(), wholeBlock(v.shape()),
                     s.data() + v.offset, v.dims, localBlock(v.dims, v.sbp, m.mesh, coords),
                     numElements(v.shape()));
  return s;
}

void save(const std::string &dir, const Manifest &m,
          std::map<std::string, std::vector<uint8_t>> &g, int64_t step) {
  makeDirectories(dir);
  uint64_t nonce = checkpointNonce(dir);
  for (int64_t r = 0; r < m.meshSize(); ++r) {
    auto coords = meshCoordsOf(r, m.mesh);
    writeShard(dir, m, stateOf(m, coords, g).data(), step, nonce, coords);
  }
  writeCheckpointIndex(dir, m, step, nonce);
}

void expectResumes(const std::string &dir, const Manifest &m,
                   std::map<std::string, std::vector<uint8_t>> &g, int64_t step) {
  for (int64_t r = 0; r < m.meshSize(); ++r) {
    auto coords = meshCoordsOf(r, m.mesh);
    std::vector<uint8_t> got(m.stateBytes, 0xEE);
    EXPECT_EQ(readCheckpoint(dir, m, got.data(), coords), step);
    EXPECT_EQ(got, stateOf(m, coords, g)) << "rank " << r;
  }
}
} // namespace

TEST(Checkpoint, ReshardsAcrossMeshesAndPlans) {
  TempDir dir;
  Manifest m22 = parseManifest(program("mesh 2 2\n", "S0,S1", "S0,S0", "B,S0"));
  Manifest m4 = parseManifest(program("mesh 4\n", "S1", "", "S0"));
  Manifest m1 = parseManifest(program("", "", "", ""));
  auto g = globals(m1);

  save(dir.path + "/a", m22, g, 5);
  // b is broadcast on axis 0 and c everywhere: ranks with a copy skip them.
  std::string index = readFile(dir.path + "/a/ckpt");
  EXPECT_NE(index.find("mesh 2 2\n"), std::string::npos);
  EXPECT_NE(index.find("piece 0 4 2 4 2\n"), std::string::npos) << index; // w of rank 3
  expectResumes(dir.path + "/a", m4, g, 5);
  expectResumes(dir.path + "/a", m1, g, 5);

  save(dir.path + "/b", m4, g, 6);
  expectResumes(dir.path + "/b", m1, g, 6);
  expectResumes(dir.path + "/b", m22, g, 6);
  save(dir.path + "/c", m1, g, 7);
  expectResumes(dir.path + "/c", m22, g, 7);

  // A later save into the same directory replaces the shards of the first.
  save(dir.path + "/a", m1, g, 9);
  expectResumes(dir.path + "/a", m22, g, 9);
  int shards = 0;
  for (int64_t r = 0; r < 4; ++r)
    shards += ::access((dir.path + "/a/ckpt-5-0000000000000000-r" +
                        std::to_string(r) + "of4").c_str(), F_OK) == 0;
  EXPECT_EQ(shards, 0);
}

TEST(Layout, CopyOverlapBetweenViews) {
  // Every block pair of two row-major views of 36 elements against an
  // element-by-element reference: the elements at the same row-major index
  // (of 4x10 and 8x5, the first 36: the rest is a flat store's padding).
  std::vector<std::vector<int64_t>> views = {{6, 6}, {4, 9}, {3, 12}, {36}, {2, 3, 6},
                                             {4, 10}, {8, 5}};
  auto blocksOf = [](const std::vector<int64_t> &dims) {
    std::vector<Block> blocks = {wholeBlock(dims)};
    for (int64_t pieces : {2, 3, 4, 8})
      for (size_t d = 0; d < dims.size(); ++d)
        if (dims[d] % pieces == 0)
          for (int64_t p = 0; p < pieces; ++p) {
            Block b = wholeBlock(dims);
            b.size[d] = dims[d] / pieces;
            b.offset[d] = p * b.size[d];
            blocks.push_back(b);
          }
    return blocks;
  };
  auto flatIndex = [](const std::vector<int64_t> &dims, const Block &b, int64_t local) {
    int64_t flat = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      int64_t c = local % b.size[d] + b.offset[d];
      local /= b.size[d];
      int64_t stride = 1;
      for (size_t e = d + 1; e < dims.size(); ++e)
        stride *= dims[e];
      flat += c * stride;
    }
    return flat;
  };
  for (const auto &from : views)
    for (const auto &to : views)
      for (const Block &src : blocksOf(from))
        for (const Block &dst : blocksOf(to)) {
          std::vector<int32_t> in(src.elements()), out(dst.elements(), -1), want(out);
          for (int64_t i = 0; i < src.elements(); ++i)
            in[i] = static_cast<int32_t>(flatIndex(from, src, i));
          int64_t expected = 0;
          for (int64_t j = 0; j < dst.elements(); ++j)
            for (int64_t i = 0; i < src.elements(); ++i)
              if (in[i] < 36 && in[i] == flatIndex(to, dst, j)) {
                want[j] = in[i];
                ++expected;
              }
          int64_t copied = copyOverlapViews(
              4, reinterpret_cast<const uint8_t *>(in.data()), from, src,
              reinterpret_cast<uint8_t *>(out.data()), to, dst, 36);
          ASSERT_EQ(copied, expected);
          ASSERT_EQ(out, want);
          int64_t below = 0;
          for (int64_t j = 0; j < dst.elements(); ++j)
            below += flatIndex(to, dst, j) < 36;
          ASSERT_EQ(blockElementsBelow(to, dst, 36), below);
        }
}

TEST(Checkpoint, ReshardsStateStoredFlat) {
  TempDir dir;
  Manifest flat4 = parseManifest(
      "oflow-manifest 1\nmode train\nstate_bytes 640\nmesh 4\n"
      "var w param f32 2 4 9 0 -1 sbp=S0 view=6x6\n"
      "var m optimizer f32 2 4 9 256 -1 sbp=S0 view=6x6\n"
      "var b param f32 1 4 512 -1 sbp=S0\n");
  Manifest flat3 = parseManifest(
      "oflow-manifest 1\nmode train\nstate_bytes 640\nmesh 3\n"
      "var w param f32 2 3 12 0 -1 sbp=S0 view=6x6\n"
      "var m optimizer f32 2 6 6 256 -1 sbp=S0\n"
      "var b param f32 1 4 512 -1\n");
  Manifest m22 = parseManifest(
      "oflow-manifest 1\nmode train\nstate_bytes 640\nmesh 2 2\n"
      "var w param f32 2 6 6 0 -1 sbp=S0,S1\n"
      "var m optimizer f32 2 6 6 256 -1 sbp=S1,S0\n"
      "var b param f32 1 4 512 -1 sbp=B,S0\n");
  Manifest m1 = parseManifest(
      "oflow-manifest 1\nmode train\nstate_bytes 640\n"
      "var w param f32 2 6 6 0 -1\nvar m optimizer f32 2 6 6 256 -1\n"
      "var b param f32 1 4 512 -1\n");
  // On 8 devices the 36 elements are padded to 8x5.
  Manifest padded8 = parseManifest(
      "oflow-manifest 1\nmode train\nstate_bytes 640\nmesh 8\n"
      "var w param f32 2 8 5 0 -1 sbp=S0 view=6x6\n"
      "var m optimizer f32 2 8 5 256 -1 sbp=S0 view=6x6\n"
      "var b param f32 1 4 512 -1\n");
  EXPECT_EQ(flat4.vars[0].shape(), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(flat4.vars[0].localDims, (std::vector<int64_t>{1, 9}));
  auto g = globals(m1);

  // The table lists each variable's own shape; a `store` line its view.
  save(dir.path + "/a", flat4, g, 3);
  std::string index = readFile(dir.path + "/a/ckpt");
  EXPECT_NE(index.find("var w param f32 2 6 6\n"), std::string::npos) << index;
  EXPECT_NE(index.find("store 0 2 4 9\n"), std::string::npos) << index;
  expectResumes(dir.path + "/a", m1, g, 3);
  expectResumes(dir.path + "/a", m22, g, 3);
  expectResumes(dir.path + "/a", flat3, g, 3);
  save(dir.path + "/b", m22, g, 4);
  expectResumes(dir.path + "/b", flat4, g, 4);
  save(dir.path + "/c", flat3, g, 5);
  expectResumes(dir.path + "/c", flat4, g, 5);
  expectResumes(dir.path + "/c", m1, g, 5);
  expectResumes(dir.path + "/c", padded8, g, 5);
  save(dir.path + "/d", padded8, g, 6);
  expectResumes(dir.path + "/d", m22, g, 6);
  expectResumes(dir.path + "/d", flat3, g, 6);
}
