// csrc/hashembed/hash_embed_test.cc
#include "hashembed/hash_embed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace chitta::hashembed {
namespace {

// Reference FNV-1a 64 with the standard offset basis (published test vector).
uint64_t PlainFnv1a(std::string_view s) {
  uint64_t h = kFnvBasis;
  for (unsigned char c : s) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

std::vector<float> Embed(const std::vector<std::string>& texts, uint32_t dim) {
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<float> out(texts.size() * dim, -7.0f);
  EXPECT_TRUE(HashEmbed(views.data(), views.size(), dim, out.data()).ok());
  return out;
}

double Norm(const float* v, uint32_t dim) {
  double s = 0;
  for (uint32_t i = 0; i < dim; ++i) s += double(v[i]) * v[i];
  return std::sqrt(s);
}

TEST(HashEmbed, FnvMatchesPublishedVector) {
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (Fowler/Noll/Vo test suite).
  EXPECT_EQ(PlainFnv1a("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(HashEmbed, FeatureCountsForOneWord) {
  std::vector<uint64_t> h;
  ExtractFeatures("cat", &h);  // "<cat>": 1 word + 3 + 2 + 1 char grams
  EXPECT_EQ(h.size(), 1u + 3u + 2u + 1u);
  h.clear();
  ExtractFeatures("a", &h);  // "<a>": 1 word + one 3-gram
  EXPECT_EQ(h.size(), 2u);
  h.clear();
  ExtractFeatures("big cat", &h);  // 2 words + 1 bigram + "<big>" 6 + "<cat>" 6
  EXPECT_EQ(h.size(), 2u + 1u + 6u + 6u);
}

TEST(HashEmbed, CharGramsCountCodePointsNotBytes) {
  std::vector<uint64_t> ascii, utf8;
  ExtractFeatures("abc", &ascii);
  ExtractFeatures("\xc3\xa9\xc3\xa9\xc3\xa9", &utf8);  // "ééé": 3 code points, 6 bytes
  EXPECT_EQ(ascii.size(), utf8.size());
}

TEST(HashEmbed, BigramIsTaggedJoinOfWords) {
  std::vector<uint64_t> h;
  ExtractFeatures("x y", &h);
  const uint64_t want = FeatureHash('b', "x y");
  EXPECT_NE(std::find(h.begin(), h.end(), want), h.end());
  EXPECT_NE(FeatureHash('w', "abc"), FeatureHash('c', "abc"));
}

TEST(HashEmbed, RowsAreUnitNorm) {
  const auto out = Embed({"the build uses ninja", "x", "a a a a b"}, 384);
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(Norm(&out[r * 384], 384), 1.0, 1e-6);
}

TEST(HashEmbed, EmptyAndWhitespaceGiveZeroVector) {
  const auto out = Embed({"", "  \t\n "}, 64);
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(HashEmbed, WhitespaceKindDoesNotMatter) {
  const auto out = Embed({"alpha beta", "  alpha\t\nbeta  "}, 128);
  for (int d = 0; d < 128; ++d) EXPECT_EQ(out[d], out[128 + d]);
}

TEST(HashEmbed, RowDependsOnlyOnItsText) {
  const auto batch = Embed({"one two", "three four five", "one two"}, 96);
  const auto single = Embed({"three four five"}, 96);
  for (int d = 0; d < 96; ++d) {
    EXPECT_EQ(batch[d], batch[2 * 96 + d]);
    EXPECT_EQ(batch[96 + d], single[d]);
  }
}

TEST(HashEmbed, SublinearTermFrequencyFromExplicitFeatures) {
  // "zz zz zz": word "zz" x3, bigram "zz zz" x2, grams "<zz", "zz>", "<zz>" x3 each.
  const uint32_t dim = 50;
  std::vector<double> want(dim, 0.0);
  auto add = [&](char tag, std::string_view bytes, int tf) {
    const uint64_t h = FeatureHash(tag, bytes);
    const double w = 1.0 + std::log(double(tf));
    want[h % dim] += (h >> 63) ? -w : w;
  };
  add('w', "zz", 3);
  add('b', "zz zz", 2);
  add('c', "<zz", 3);
  add('c', "zz>", 3);
  add('c', "<zz>", 3);
  double sq = 0;
  for (double v : want) sq += v * v;
  const auto got = Embed({"zz zz zz"}, dim);
  for (uint32_t d = 0; d < dim; ++d) EXPECT_NEAR(got[d], want[d] / std::sqrt(sq), 1e-6);
}

TEST(HashEmbed, RejectsBadDim) {
  std::string_view t = "x";
  float out[1];
  EXPECT_EQ(HashEmbed(&t, 1, 0, out).code(), Code::kInvalidArgument);
  EXPECT_EQ(HashEmbed(&t, 1, kMaxDim + 1, out).code(), Code::kInvalidArgument);
  EXPECT_TRUE(HashEmbed(nullptr, 0, 8, nullptr).ok());
}

TEST(HashEmbed, InvalidUtf8StaysInBounds) {
  const auto out = Embed({std::string("\x80\x80\xff abc \xc3"), std::string("\xe2\x82")}, 32);
  EXPECT_NEAR(Norm(out.data(), 32), 1.0, 1e-6);
}

}  // namespace
}  // namespace chitta::hashembed
