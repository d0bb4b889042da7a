//===- CheckpointTest.cpp - save, load, corruption, failed saves ----------===//
#include "TestUtil.h"
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/FileUtil.h"

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>

using namespace oflow_rt;
using oflow_rt::test::expectError;
using oflow_rt::test::TempDir;

namespace {
Manifest manifest(int64_t stateBytes = 1 << 15, const char *wDims = "2 64 64") {
  return parseManifest(
      "oflow-manifest 1\nmode train\nbatch 1\nstate_bytes " +
      std::to_string(stateBytes) + "\nio_bytes 0\narena_bytes 0\n" +
      "var w param f32 " + wDims + " 0 0\nvar w.m optimizer f32 " + wDims +
      " 16384 -1\n");
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
} // namespace

TEST(Checkpoint, SavesAndLoads) {
  TempDir dir;
  Manifest m = manifest();
  auto state = pattern(m.stateBytes, 1);
  saveCheckpoint(dir.path + "/run", m, state.data(), 42);
  EXPECT_FALSE(exists(dir.path + "/run/ckpt.tmp"));
  // One device: the index and one shard, named after the step.
  EXPECT_TRUE(exists(dir.path + "/run/ckpt-42-0000000000000000-r0of1"));
  std::vector<uint8_t> back(m.stateBytes);
  EXPECT_EQ(loadCheckpoint(dir.path + "/run", m, back.data()), 42);
  EXPECT_EQ(back, state);
}

TEST(Checkpoint, DetectsCorruptionAndMismatch) {
  TempDir dir;
  Manifest m = manifest();
  auto state = pattern(m.stateBytes, 2);
  saveCheckpoint(dir.path, m, state.data(), 7);
  std::string path = checkpointPath(dir.path);
  std::string good = readFile(path);
  std::vector<uint8_t> out(m.stateBytes);

  std::string flipped = good;
  flipped[good.size() / 2] ^= 1;
  writeFileAtomic(path, flipped.data(), flipped.size());
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); },
              path + ": checksum mismatch");

  writeFileAtomic(path, good.data(), good.size() - 100);
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, path + ": truncated");
  writeFileAtomic(path, good.data(), 12);
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, path + ": truncated");

  std::string magic = good;
  magic[0] = 'X';
  writeFileAtomic(path, magic.data(), magic.size());
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, "bad magic");

  writeFileAtomic(path, good.data(), good.size());
  Manifest other = manifest(1 << 16, "2 64 32");
  expectError([&] { loadCheckpoint(dir.path, other, out.data()); },
              "does not match this program: the checkpoint has var 'w param f32 2 64 64' "
              "where the program has 'w param f32 2 64 32'");
  Manifest fewer = parseManifest("oflow-manifest 1\nmode train\nstate_bytes 32768\n"
                                 "var w param f32 2 64 64 0 0\n");
  expectError([&] { loadCheckpoint(dir.path, fewer, out.data()); },
              "the checkpoint has var 'w.m optimizer f32 2 64 64' that the program lacks");
  expectError([&] { loadCheckpoint(dir.path + "/missing", m, out.data()); },
              "missing/ckpt: cannot open");
  EXPECT_EQ(loadCheckpoint(dir.path, m, out.data()), 7);

  // The shard: damaged, cut short or gone, each named.
  std::string shard = dir.path + "/ckpt-7-0000000000000000-r0of1";
  std::string data = readFile(shard);
  std::string bad = data;
  bad[100] ^= 4;
  writeFileAtomic(shard, bad.data(), bad.size());
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, shard + ": checksum mismatch");
  writeFileAtomic(shard, data.data(), data.size() - 1);
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, shard + ": truncated");
  ::unlink(shard.c_str());
  expectError([&] { loadCheckpoint(dir.path, m, out.data()); }, shard + ": cannot open");
}

// Today's format of yesterday: one file holding the whole state buffer.
TEST(Checkpoint, ResumesTheSingleFileFormat) {
  TempDir dir;
  Manifest m = manifest();
  auto state = pattern(m.stateBytes, 5);
  std::string table = "w param f32 2 64 64 0\nw.m optimizer f32 2 64 64 16384\n";
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<char *>(&v), 8); };
  std::string b = "OFLOWCK1" + u64(3) + u64(table.size()) + table + u64(state.size()) +
                  std::string(state.begin(), state.end());
  b += u64(fnv1a64(b.data(), b.size()));
  writeFileAtomic(checkpointPath(dir.path), b.data(), b.size());
  std::vector<uint8_t> back(m.stateBytes);
  EXPECT_EQ(loadCheckpoint(dir.path, m, back.data()), 3);
  EXPECT_EQ(back, state);
}

// A write that fails half-way (here: the file size limit, as a full disk
// would) must leave the previous checkpoint loadable and no temporary behind.
TEST(Checkpoint, FailedSaveKeepsThePreviousOne) {
  TempDir dir;
  Manifest m = manifest();
  auto first = pattern(m.stateBytes, 3), second = pattern(m.stateBytes, 4);
  saveCheckpoint(dir.path, m, first.data(), 10);

  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  expectError([&] { saveCheckpoint(dir.path, m, second.data(), 20); },
              "-r0of1.tmp: write failed");
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, oldHandler);

  EXPECT_FALSE(exists(dir.path + "/ckpt.tmp"));
  EXPECT_FALSE(exists(dir.path + "/ckpt-20-0000000000000000-r0of1.tmp"));
  std::vector<uint8_t> back(m.stateBytes);
  EXPECT_EQ(loadCheckpoint(dir.path, m, back.data()), 10);
  EXPECT_EQ(back, first);

  // A temporary that cannot be created (a directory in its way) also fails
  // cleanly.
  ASSERT_EQ(::mkdir((dir.path + "/ckpt.tmp").c_str(), 0755), 0);
  expectError([&] { saveCheckpoint(dir.path, m, second.data(), 20); },
              "ckpt.tmp: cannot create");
  EXPECT_EQ(loadCheckpoint(dir.path, m, back.data()), 10);
  EXPECT_EQ(back, first);
}

TEST(Checkpoint, Fnv1aMatchesReferenceValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ULL);
}
