//===- FeederTest.cpp - rows per step, shuffling, synthetic data ----------===//
#include "TestUtil.h"
#include "oflow_rt/Feeder.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace oflow_rt;
using oflow_rt::test::expectError;

namespace {
// Batch 4: x f32 [4,2] at 0, id i64 [4] at 64 (ids in [0, 100)).
const char *kManifest = "oflow-manifest 1\nmode train\nbatch 4\nstate_bytes 0\n"
                        "io_bytes 128\narena_bytes 0\n"
                        "input x f32 2 4 2 0 normal\n"
                        "input id i64 1 4 64 int:0:100\n";

HostTensor ids(DType dtype, std::vector<int64_t> values) {
  HostTensor t;
  t.dtype = dtype;
  t.dims = {static_cast<int64_t>(values.size())};
  for (int64_t v : values) {
    uint8_t b[8];
    std::memcpy(b, &v, 8); // little-endian: the low bytes come first
    t.data.insert(t.data.end(), b, b + dtypeSize(dtype));
  }
  return t;
}

std::vector<int64_t> fedIds(Feeder &f, int64_t step) {
  uint8_t io[128] = {};
  f.fill(step, io);
  std::vector<int64_t> r(4);
  std::memcpy(r.data(), io + 64, 32);
  return r;
}
} // namespace

TEST(Feeder, RowsWrapAround) {
  Manifest m = parseManifest(kManifest);
  std::map<std::string, HostTensor> files;
  files["id"] = prepareInputData(m.inputs[1], ids(DType::I64, {10, 11, 12, 13, 14, 15}),
                                 "id.npy", 4);
  Feeder f(m, files, std::nullopt);
  EXPECT_EQ(fedIds(f, 0), (std::vector<int64_t>{10, 11, 12, 13}));
  EXPECT_EQ(fedIds(f, 1), (std::vector<int64_t>{14, 15, 10, 11}));
  EXPECT_EQ(fedIds(f, 2), (std::vector<int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(fedIds(f, 1000), fedIds(f, 1)); // (1000*4) mod 6 == 4
  EXPECT_EQ(f.synthesized(), std::vector<std::string>{"x"});
}

TEST(Feeder, ShuffleIsAPermutationPerEpochKeyedBySeed) {
  Manifest m = parseManifest(kManifest);
  std::vector<int64_t> values(12);
  for (int i = 0; i < 12; ++i)
    values[i] = i;
  std::map<std::string, HostTensor> files;
  files["id"] = prepareInputData(m.inputs[1], ids(DType::I64, values), "id.npy", 4);
  Feeder a(m, files, 7), b(m, files, 7), c(m, files, 8);
  std::vector<int64_t> epoch0, epoch1, other;
  for (int step = 0; step < 3; ++step) {
    auto v = fedIds(a, step);
    epoch0.insert(epoch0.end(), v.begin(), v.end());
    auto w = fedIds(c, step);
    other.insert(other.end(), w.begin(), w.end());
  }
  for (int step = 3; step < 6; ++step) {
    auto v = fedIds(a, step);
    epoch1.insert(epoch1.end(), v.begin(), v.end());
  }
  std::vector<int64_t> sorted = epoch0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, values) << "an epoch must visit every row once";
  sorted = epoch1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, values);
  EXPECT_NE(epoch0, values) << "shuffled order equals the file order";
  EXPECT_NE(epoch0, epoch1) << "every epoch must get its own permutation";
  EXPECT_NE(epoch0, other) << "the seed must matter";
  // Position depends only on the step: a fresh feeder (a resumed run) that
  // starts at step 4 sees what the straight run saw.
  EXPECT_EQ(fedIds(b, 4), std::vector<int64_t>(epoch1.begin() + 4, epoch1.begin() + 8));
  EXPECT_EQ(epochPermutation(7, 1, 12), epochPermutation(7, 1, 12));
}

TEST(Feeder, SyntheticDataIsDeterministicAndInRange) {
  Manifest m = parseManifest(kManifest);
  Feeder a(m, {}, std::nullopt), b(m, {}, std::nullopt);
  uint8_t io1[128] = {}, io2[128] = {}, io3[128] = {};
  a.fill(3, io1);
  b.fill(3, io2);
  a.fill(4, io3);
  EXPECT_EQ(std::memcmp(io1, io2, 128), 0);
  EXPECT_NE(std::memcmp(io1, io3, 128), 0);
  int64_t id[4];
  std::memcpy(id, io1 + 64, 32);
  for (int64_t v : id) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 100);
  }
  float x[8];
  std::memcpy(x, io1, 32);
  for (float v : x)
    EXPECT_TRUE(v > -10 && v < 10 && v != 0);
}

TEST(Feeder, SyntheticUncheckedIntegersStayInTheirRange) {
  // `unchecked` only relaxes the check of data files; synthetic values
  // still come from [lo, hi) and fill exactly their slot.
  Manifest m = parseManifest("oflow-manifest 1\nmode train\nbatch 4\nstate_bytes 0\n"
                             "io_bytes 128\narena_bytes 0\n"
                             "input t i32 1 4 0 int:0:2:unchecked\n");
  Feeder f(m, {}, std::nullopt);
  uint8_t io[128];
  std::memset(io, 0xAB, sizeof io);
  f.fill(0, io);
  int32_t t[4];
  std::memcpy(t, io, 16);
  for (int32_t v : t)
    EXPECT_TRUE(v == 0 || v == 1) << v;
  EXPECT_EQ(io[16], 0xAB); // nothing written past the slot
}

TEST(Feeder, ChecksFilesAgainstInputs) {
  Manifest m = parseManifest(kManifest);
  const InputRecord &x = m.inputs[0], &id = m.inputs[1];
  HostTensor xf;
  xf.dtype = DType::F32;
  xf.dims = {5, 2};
  xf.data.resize(40);
  EXPECT_EQ(prepareInputData(x, xf, "x.npy", 4).rows(), 5);

  HostTensor f64 = xf;
  f64.dtype = DType::F64;
  f64.data.resize(80);
  expectError([&] { prepareInputData(x, f64, "x64.npy", 4); },
              "x64.npy: dtype f64, but input 'x' is f32 (convert it");
  expectError([&] { prepareInputData(id, xf, "xf.npy", 4); },
              "xf.npy: dtype f32, but input 'id' is i64");
  HostTensor wide = xf;
  wide.dims = {4, 3};
  wide.data.resize(48);
  expectError([&] { prepareInputData(x, wide, "w.npy", 4); },
              "w.npy: shape [4,3], but input 'x' needs [N,2] (rows of shape [2])");
  HostTensor flat = xf;
  flat.dims = {10};
  expectError([&] { prepareInputData(x, flat, "flat.npy", 4); }, "shape [10]");
  HostTensor few = xf;
  few.dims = {3, 2};
  few.data.resize(24);
  expectError([&] { prepareInputData(x, few, "few.npy", 4); },
              "few.npy: 3 rows, fewer than the batch of 4");

  // int32 data feeds an i64 input, converted.
  HostTensor conv = prepareInputData(id, ids(DType::I32, {5, -0, 6, 99}), "i32.npy", 4);
  EXPECT_EQ(conv.dtype, DType::I64);
  ASSERT_EQ(conv.data.size(), 32u);
  int64_t got[4];
  std::memcpy(got, conv.data.data(), 32);
  EXPECT_EQ(got[3], 99);
  // Values outside the range would index outside a table: refused, unless
  // they are the ignore index or the range is unchecked.
  expectError([&] { prepareInputData(id, ids(DType::I64, {1, 2, 100, 3}), "big.npy", 4); },
              "big.npy: row 2 holds 100, outside [0, 100) that input 'id' accepts");
  InputRecord ignoring = id;
  ignoring.ignore = -100;
  EXPECT_EQ(prepareInputData(ignoring, ids(DType::I64, {1, -100, 5, 3}), "ig.npy", 4).rows(), 4);
  InputRecord unchecked = id;
  unchecked.checked = false;
  EXPECT_EQ(prepareInputData(unchecked, ids(DType::I64, {1, 2, 100, 3}), "big.npy", 4).rows(), 4);
  // int64 data narrows into an i32 input only when every value fits.
  InputRecord i32 = unchecked;
  i32.dtype = DType::I32;
  EXPECT_EQ(prepareInputData(i32, ids(DType::I64, {1, 2, 3, -4}), "n.npy", 4).data.size(), 16u);
  expectError([&] { prepareInputData(i32, ids(DType::I64, {1LL << 40, 0, 0, 0}), "wide.npy", 4); },
              "wide.npy: value 1099511627776 does not fit the i32 input 'id'");
}

// On a 2x2 mesh each rank feeds its block of the global batch: rows along
// mesh axis 0, columns along axis 1, from a file (shuffled) and synthetic.
TEST(Feeder, EachRankFeedsItsPieceOfTheGlobalBatch) {
  const std::string body = "batch 4\nstate_bytes 0\nio_bytes 256\n"
                           "input x f32 2 4 6 0 normal%s\n"
                           "input z f32 2 4 6 128 normal%s\n";
  auto text = [&](const char *mesh, const char *sbp) {
    char buf[512];
    std::snprintf(buf, sizeof buf, body.c_str(), sbp, sbp);
    return std::string("oflow-manifest 1\nmode train\n") + mesh + buf;
  };
  Manifest one = parseManifest(text("", ""));
  Manifest mesh = parseManifest(text("mesh 2 2\n", " sbp=S0,S1"));
  HostTensor file;
  file.dims = {7, 6};
  for (int i = 0; i < 42; ++i) {
    float v = static_cast<float>(i);
    file.data.insert(file.data.end(), reinterpret_cast<uint8_t *>(&v),
                     reinterpret_cast<uint8_t *>(&v) + 4);
  }
  for (int64_t step : {0, 3}) {
    Feeder whole(one, {{"x", file}}, 9);
    std::vector<uint8_t> global(256);
    whole.fill(step, global.data());
    for (int64_t r = 0; r < 4; ++r) {
      std::vector<int64_t> coords = meshCoordsOf(r, {2, 2});
      Feeder piece(mesh, {{"x", file}}, 9, coords);
      std::vector<uint8_t> local(256, 0xEE), want(256, 0xEE);
      piece.fill(step, local.data());
      Block b = localBlock({4, 6}, {0, 1}, {2, 2}, coords);
      for (int64_t at : {0, 128})
        copyOverlap(4, global.data() + at, wholeBlock({4, 6}), want.data() + at, b);
      EXPECT_EQ(local, want) << "step " << step << " rank " << r;
    }
  }
}
