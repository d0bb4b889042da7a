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
  // Measured GEMMs: looked up by exact precision and shape, kept through JSON.
  auto measured = load(R"(, "gemms": [{"precision": "bf16", "m": 8192, "n": 768, "k": 768, )"
                       R"("batch": 1, "seconds": 4.5e-5}, {"precision": "fp32", "m": 64, )"
                       R"("n": 1024, "k": 1024, "batch": 96, "seconds": 3e-4}])");
  ASSERT_TRUE(static_cast<bool>(measured)) << llvm::toString(measured.takeError());
  ASSERT_EQ(measured->gemms.size(), 2u);
  EXPECT_EQ(measured->measuredGemmSeconds("bf16", 8192, 768, 768, 1), 4.5e-5);
  EXPECT_EQ(measured->measuredGemmSeconds("fp32", 64, 1024, 1024, 96), 3e-4);
  EXPECT_FALSE(measured->measuredGemmSeconds("fp16", 8192, 768, 768, 1));
  EXPECT_FALSE(measured->measuredGemmSeconds("bf16", 768, 8192, 768, 1));
  EXPECT_FALSE(measured->measuredGemmSeconds("fp32", 64, 1024, 1024, 1));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << oflow::deviceProfileJson(*measured);
  }
  auto again = oflow::loadDeviceProfile(path);
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->measuredGemmSeconds("fp32", 64, 1024, 1024, 96), 3e-4);
  for (auto [entry, what] :
       {std::pair<const char *, const char *>{
            R"({"precision": "int8", "m": 1, "n": 1, "k": 1, "batch": 1, "seconds": 1})",
            R"(gemms[0]: "precision" must be bf16, fp16, tf32 or fp32)"},
        {R"({"precision": "bf16", "m": 1, "n": 0, "k": 1, "batch": 1, "seconds": 1})",
         R"(gemms[0]: "n" must be a positive integer)"},
        {R"({"precision": "bf16", "m": 1, "n": 1, "k": 1, "batch": 1})",
         R"(gemms[0]: field "seconds" must be a positive number)"}}) {
    auto bad = load(std::string(R"(, "gemms": [)") + entry + "]");
    ASSERT_FALSE(static_cast<bool>(bad)) << entry;
    std::string message = llvm::toString(bad.takeError());
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
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
