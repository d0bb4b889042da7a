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
Manifest manifest(int64_t stateBytes = 1 << 16, const char *wDims = "2 64 64") {
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
              "does not match this program: the checkpoint has var 'w param f32 2 64 64 0' "
              "where the program has 'w param f32 2 64 32 0'");
  Manifest fewer = parseManifest("oflow-manifest 1\nmode train\nstate_bytes 65536\n"
                                 "var w param f32 2 64 64 0 0\n");
  expectError([&] { loadCheckpoint(dir.path, fewer, out.data()); },
              "the checkpoint has var 'w.m optimizer f32 2 64 64 16384' that the program lacks");
  expectError([&] { loadCheckpoint(dir.path + "/missing", m, out.data()); },
              "missing/ckpt: cannot open");
  EXPECT_EQ(loadCheckpoint(dir.path, m, out.data()), 7);
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
              "ckpt.tmp: write failed");
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, oldHandler);

  EXPECT_FALSE(exists(dir.path + "/ckpt.tmp"));
  std::vector<uint8_t> back(m.stateBytes);
  EXPECT_EQ(loadCheckpoint(dir.path, m, back.data()), 10);
  EXPECT_EQ(back, first);

  // A temporary that cannot be created (a directory in its way) also fails
  // cleanly.
  ASSERT_EQ(::mkdir((dir.path + "/ckpt.tmp").c_str(), 0755), 0);
  expectError([&] { saveCheckpoint(dir.path, m, second.data(), 20); },
              "ckpt.tmp: cannot create");
  EXPECT_EQ(loadCheckpoint(dir.path, m, back.data()), 10);
}

TEST(Checkpoint, Fnv1aMatchesReferenceValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ULL);
}
