//===- DeviceProfileTest.cpp - built-in device profiles and their JSON -----===//
#include "oflow/Support/DeviceProfile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using llvm::SmallString;

namespace {

TEST(DeviceProfileTest, BuiltinsRoundTripThroughJson) {
  for (const std::string &name : oflow::builtinDeviceProfileNames()) {
    auto builtin = oflow::builtinDeviceProfile(name);
    ASSERT_TRUE(builtin);
    SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "json", path));
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      os << oflow::deviceProfileJson(*builtin);
    }
    auto loaded = oflow::loadDeviceProfile(path);
    llvm::sys::fs::remove(path);
    ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
    EXPECT_EQ(loaded->name, name);
    EXPECT_EQ(loaded->hbmBytesPerSecond, builtin->hbmBytesPerSecond);
    EXPECT_EQ(loaded->bf16FlopsPerSecond, builtin->bf16FlopsPerSecond);
    EXPECT_EQ(loaded->residentThreads(), builtin->residentThreads());
    EXPECT_EQ(loaded->memoryBytes, builtin->memoryBytes);
    EXPECT_EQ(loaded->gpu, builtin->gpu);
  }
  auto h200 = oflow::builtinDeviceProfile("h200");
  EXPECT_EQ(h200->hbmBytesPerSecond, 4.3e12);
  EXPECT_EQ(h200->gemmFlopsPerSecond("bf16"), 650e12);
  EXPECT_EQ(h200->gemmFlopsPerSecond("tf32"), 330e12);
  EXPECT_EQ(h200->gemmFlopsPerSecond("fp32"), 50e12);
  EXPECT_EQ(h200->memoryBytes, 140.0 * (1 << 30));
  EXPECT_TRUE(h200->gpu);
  // The planner's CPU rank: 100 GFLOP/s in every precision, 20 GB/s.
  auto cpu = oflow::builtinDeviceProfile("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_FALSE(cpu->gpu);
  EXPECT_EQ(cpu->gemmFlopsPerSecond("bf16"), 100e9);
  EXPECT_EQ(cpu->hbmBytesPerSecond, 20e9);
}

// A calibration file may leave the capacity out (unknown) and may describe
// a CPU.
TEST(DeviceProfileTest, OptionalFields) {
  SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "json", path));
  auto load = [&](const std::string &extra) {
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      os << R"({"name": "x", "hbm_bytes_per_s": 1e9, "flops_per_s": {"bf16": 1, "fp16": 1, )"
         << R"("tf32": 1, "fp32": 1}, "memory_latency_s": 1e-6, "launch_s": 1e-6, )"
         << R"("graph_launch_s": 1e-6, "multiprocessors": 1, "max_threads_per_multiprocessor": 1)"
         << extra << "}";
    }
    return oflow::loadDeviceProfile(path);
  };
  auto plain = load("");
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  EXPECT_EQ(plain->memoryBytes, 0);
  EXPECT_TRUE(plain->gpu);
  auto sized = load(R"(, "memory_bytes": 4e9, "gpu": false)");
  ASSERT_TRUE(static_cast<bool>(sized)) << llvm::toString(sized.takeError());
  EXPECT_EQ(sized->memoryBytes, 4e9);
  EXPECT_FALSE(sized->gpu);
  auto negative = load(R"(, "memory_bytes": -1)");
  ASSERT_FALSE(static_cast<bool>(negative));
  EXPECT_NE(llvm::toString(negative.takeError()).find("\"memory_bytes\" must be a positive number"),
            std::string::npos);
  llvm::sys::fs::remove(path);
}

TEST(DeviceProfileTest, BadProfilesNameTheProblem) {
  auto missing = oflow::loadDeviceProfile("no-such-gpu");
  ASSERT_FALSE(static_cast<bool>(missing));
  std::string message = llvm::toString(missing.takeError());
  EXPECT_NE(message.find("not a built-in profile (h200, h100, a100, cpu)"), std::string::npos)
      << message;
  SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "json", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << R"({"name": "x", "hbm_bytes_per_s": -1})";
  }
  auto bad = oflow::loadDeviceProfile(path);
  llvm::sys::fs::remove(path);
  ASSERT_FALSE(static_cast<bool>(bad));
  message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("\"hbm_bytes_per_s\" must be a positive number"), std::string::npos)
      << message;
}

} // namespace
