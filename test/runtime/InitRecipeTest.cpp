//===- InitRecipeTest.cpp - weights drawn at start -------------------------===//
#include "oflow_rt/InitRecipe.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/Manifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace oflow_rt;

TEST(InitRecipe, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(InitRecipe, ParsesAndRejects) {
  auto r = parseInitRecipe("normal:0:0.02:7");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, "normal");
  EXPECT_EQ(r->b, 0.02);
  EXPECT_EQ(r->seed, 7u);
  EXPECT_TRUE(parseInitRecipe("constant:0.5:0:0"));
  EXPECT_FALSE(parseInitRecipe("normal:0:0:7"));        // std 0
  EXPECT_FALSE(parseInitRecipe("uniform:1:1:7"));       // empty range
  EXPECT_FALSE(parseInitRecipe("gamma:1:1:7"));         // unknown
  EXPECT_FALSE(parseInitRecipe("normal:0:1:4294967296")); // seed past 32 bits
  EXPECT_FALSE(parseInitRecipe("normal:0:1:-1"));
  EXPECT_FALSE(parseInitRecipe("normal:0:1"));
  EXPECT_FALSE(parseInitRecipe("normal:0:nan:1"));
}

namespace {
std::vector<float> draw(const InitRecipe &r, int64_t n) {
  std::vector<float> out(n);
  fillInitial(r, "w", DType::F32, {n}, wholeBlock({n}), reinterpret_cast<uint8_t *>(out.data()));
  return out;
}
} // namespace

TEST(InitRecipe, DistributionsHaveTheirMoments) {
  const int64_t n = 200000;
  auto moments = [](const std::vector<float> &v, double &mean, double &sd) {
    double s = 0, s2 = 0;
    for (float x : v)
      s += x;
    mean = s / v.size();
    for (float x : v)
      s2 += (x - mean) * (x - mean);
    sd = std::sqrt(s2 / v.size());
  };
  double mean, sd;
  auto normal = draw({"normal", 1.0, 0.5, 3}, n);
  moments(normal, mean, sd);
  EXPECT_NEAR(mean, 1.0, 5 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(sd, 0.5, 0.005);
  auto uniform = draw({"uniform", -2.0, 3.0, 3}, n);
  moments(uniform, mean, sd);
  EXPECT_NEAR(mean, 0.5, 5 * 5 / std::sqrt(12.0 * n));
  EXPECT_NEAR(sd, 5 / std::sqrt(12.0), 0.01);
  for (float x : uniform)
    ASSERT_TRUE(x >= -2.0f && x <= 3.0f);
  auto trunc = draw({"truncated_normal", 0.0, 0.02, 3}, n);
  moments(trunc, mean, sd);
  for (float x : trunc)
    ASSERT_LE(std::fabs(x), 0.04f);
  // A normal truncated at 2 sigma has sd 0.8796 sigma.
  EXPECT_NEAR(sd, 0.8796 * 0.02, 0.0004);
  EXPECT_EQ(draw({"constant", 0.25, 0, 0}, 3), (std::vector<float>{0.25f, 0.25f, 0.25f}));
}

TEST(InitRecipe, SeedsAndNamesGiveIndependentDraws) {
  InitRecipe r{"normal", 0, 1, 1};
  EXPECT_NE(drawInitial(r, fnv1a32("a"), 0), drawInitial(r, fnv1a32("b"), 0));
  InitRecipe r2{"normal", 0, 1, 2};
  EXPECT_NE(drawInitial(r, fnv1a32("a"), 0), drawInitial(r2, fnv1a32("a"), 0));
}

TEST(InitRecipe, APieceIsItsPartOfTheWhole) {
  // A [6, 10] tensor: rows 2..3 and columns 5..9 drawn alone equal the same
  // elements drawn whole, so every mesh starts from one device's values.
  InitRecipe r{"uniform", -1, 1, 9};
  std::vector<double> whole(60), piece(10);
  fillInitial(r, "w", DType::F64, {6, 10}, wholeBlock({6, 10}),
              reinterpret_cast<uint8_t *>(whole.data()));
  Block b{{2, 5}, {2, 5}};
  fillInitial(r, "w", DType::F64, {6, 10}, b, reinterpret_cast<uint8_t *>(piece.data()));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(piece[i * 5 + j], whole[(2 + i) * 10 + 5 + j]);
}

TEST(InitRecipe, ManifestCarriesTheRecipe) {
  const std::string head = "oflow-manifest 1\nmode train\nstate_bytes 64\n"
                           "io_bytes 0\narena_bytes 0\nentry train\n";
  Manifest m = parseManifest(head + "var w param f32 2 2 3 0 -1 init=normal:0:0.02:7\n");
  ASSERT_EQ(m.vars.size(), 1u);
  ASSERT_TRUE(m.vars[0].recipe);
  EXPECT_EQ(m.vars[0].recipe->kind, "normal");
  EXPECT_THROW(parseManifest(head + "var w param f32 2 2 3 0 -1 init=normal:0:0:7\n"),
               Error);
  EXPECT_THROW(parseManifest(head + "var w param i64 2 2 3 0 -1 init=ones:0:0:0\n"),
               Error);
}
