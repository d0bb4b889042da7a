//===- ByteSizeTest.cpp - --memory-limit's sizes ---------------------------===//
#include "oflow/Support/ByteSize.h"

#include "gtest/gtest.h"

namespace {

TEST(ByteSizeTest, ParsesUnits) {
  EXPECT_EQ(oflow::parseByteSize("4096"), 4096);
  EXPECT_EQ(oflow::parseByteSize("512MiB"), int64_t(512) << 20);
  EXPECT_EQ(oflow::parseByteSize("76GiB"), int64_t(76) << 30);
  EXPECT_EQ(oflow::parseByteSize("76 gib"), int64_t(76) << 30);
  EXPECT_EQ(oflow::parseByteSize("1.5GB"), 1500000000);
  EXPECT_EQ(oflow::parseByteSize("2kb"), 2000);
  EXPECT_EQ(oflow::parseByteSize("2K"), 2048);
  EXPECT_EQ(oflow::parseByteSize("1TiB"), int64_t(1) << 40);
  EXPECT_EQ(oflow::parseByteSize("10B"), 10);
  EXPECT_EQ(oflow::parseByteSize("8e10"), 80000000000);
  EXPECT_EQ(oflow::parseByteSize("1e3 KiB"), 1024000);
}

TEST(ByteSizeTest, RejectsWhatIsNotASize) {
  for (const char *bad : {"", "GiB", "-1GiB", "0", "0.1", "12 parsecs", "1e30", "nan",
                          "inf", "1..5GB", "5 GiB extra", "99999999TiB", "GiB5"})
    EXPECT_FALSE(oflow::parseByteSize(bad)) << bad;
}

TEST(ByteSizeTest, Formats) {
  EXPECT_EQ(oflow::formatByteSize(512), "512 B");
  EXPECT_EQ(oflow::formatByteSize(1536), "1.50 KiB");
  EXPECT_EQ(oflow::formatByteSize(12.5 * (1 << 20)), "12.5 MiB");
  EXPECT_EQ(oflow::formatByteSize(136.0 * (1 << 30)), "136 GiB");
}

} // namespace
