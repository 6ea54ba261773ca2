// csrc/hamming/scan_test.cc
// Kernels against a bit-by-bit reference and each other; top-k against a full
// sort; dispatch overrides.
#include "hamming/scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "hamming/topk.h"

namespace chitta::hamming {
namespace {

uint32_t BitByBit(const uint64_t* a, const uint64_t* b, size_t words) {
  uint32_t d = 0;
  for (size_t w = 0; w < words; ++w) {
    for (int i = 0; i < 64; ++i) d += ((a[w] >> i) & 1) != ((b[w] >> i) & 1);
  }
  return d;
}

// Codes that are mostly copies of a few patterns with a few bits flipped:
// many equal distances.
std::vector<uint64_t> TiedCodes(size_t n, size_t words, std::mt19937_64* rng) {
  std::vector<uint64_t> base(3 * words);
  for (auto& w : base) w = (*rng)();
  std::vector<uint64_t> out(n * words);
  for (size_t i = 0; i < n; ++i) {
    const size_t pick = (*rng)() % 3;
    for (size_t w = 0; w < words; ++w) out[i * words + w] = base[pick * words + w];
    const int flips = static_cast<int>((*rng)() % 3);
    for (int f = 0; f < flips; ++f) {
      const size_t bit = (*rng)() % (64 * words);
      out[i * words + bit / 64] ^= uint64_t{1} << (bit % 64);
    }
  }
  return out;
}

std::vector<SimdLevel> SupportedLevels() {
  std::vector<SimdLevel> levels;
  for (SimdLevel l : {SimdLevel::kGeneric, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (CpuSupports(l)) levels.push_back(l);
  }
  return levels;
}

TEST(HammingKernels, AllDistancesMatchBitByBitReference) {
  std::mt19937_64 rng(1);
  for (size_t words : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16}) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 1000, 1024}) {
      std::vector<uint64_t> codes(n * words);
      for (auto& c : codes) c = rng();
      std::vector<uint64_t> query(words);
      for (auto& q : query) q = rng();
      for (SimdLevel level : SupportedLevels()) {
        std::vector<uint32_t> index(kMaxBlock);
        std::vector<uint32_t> dist(kMaxBlock);
        const size_t m = FilterFor(level)(query.data(), codes.data(), n, words, UINT32_MAX,
                                          index.data(), dist.data());
        ASSERT_EQ(m, n) << SimdLevelName(level) << " words=" << words;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(index[i], i);
          ASSERT_EQ(dist[i], BitByBit(query.data(), codes.data() + i * words, words))
              << SimdLevelName(level) << " words=" << words << " i=" << i;
        }
      }
    }
  }
}

TEST(HammingKernels, ThresholdFilterIdenticalAcrossLevels) {
  std::mt19937_64 rng(2);
  for (size_t words : {1, 2, 4, 6, 8, 16}) {
    const size_t n = 1021;
    std::vector<uint64_t> codes = TiedCodes(n, words, &rng);
    std::vector<uint64_t> query(codes.begin() + 5 * words, codes.begin() + 6 * words);
    for (uint32_t thr : {0u, 1u, 2u, 3u, static_cast<uint32_t>(32 * words), UINT32_MAX}) {
      std::vector<uint32_t> ref_index(kMaxBlock);
      std::vector<uint32_t> ref_dist(kMaxBlock);
      const size_t ref = FilterGeneric(query.data(), codes.data(), n, words, thr, ref_index.data(),
                                       ref_dist.data());
      for (SimdLevel level : SupportedLevels()) {
        std::vector<uint32_t> index(kMaxBlock);
        std::vector<uint32_t> dist(kMaxBlock);
        const size_t m =
            FilterFor(level)(query.data(), codes.data(), n, words, thr, index.data(), dist.data());
        ASSERT_EQ(m, ref) << SimdLevelName(level) << " words=" << words << " thr=" << thr;
        index.resize(m);
        dist.resize(m);
        EXPECT_EQ(index, std::vector<uint32_t>(ref_index.begin(), ref_index.begin() + m));
        EXPECT_EQ(dist, std::vector<uint32_t>(ref_dist.begin(), ref_dist.begin() + m));
      }
    }
  }
}

std::vector<Neighbor> FullSortTopK(const std::vector<uint64_t>& codes, size_t words,
                                   const uint64_t* query, const std::vector<uint8_t>& dead,
                                   size_t k) {
  std::vector<Neighbor> all;
  for (size_t s = 0; s < codes.size() / words; ++s) {
    if (!dead.empty() && dead[s]) continue;
    all.push_back({s, BitByBit(query, codes.data() + s * words, words)});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Neighbor& a, const Neighbor& b) { return a.dist < b.dist; });
  if (all.size() > k) all.resize(k);
  return all;
}

TEST(HammingTopK, EqualsFullSortWithTiesAndDeadSlots) {
  std::mt19937_64 rng(3);
  for (size_t words : {1, 2, 3, 4, 8}) {
    for (size_t n : {5, 900, 5000}) {
      std::vector<uint64_t> codes = TiedCodes(n, words, &rng);
      std::vector<uint8_t> dead(n, 0);
      for (size_t i = 0; i < n; ++i) dead[i] = (rng() % 5) == 0;
      const uint64_t* query = codes.data() + (n / 2) * words;
      for (size_t k : {1, 3, 10, 400, 10000}) {
        const auto want = FullSortTopK(codes, words, query, dead, k);
        for (SimdLevel level : SupportedLevels()) {
          std::vector<Neighbor> got;
          TopK(FilterFor(level), query, codes.data(), n, words, dead.data(), k, &got);
          ASSERT_EQ(got.size(), want.size());
          for (size_t j = 0; j < got.size(); ++j) {
            ASSERT_EQ(got[j].slot, want[j].slot) << SimdLevelName(level) << " j=" << j;
            ASSERT_EQ(got[j].dist, want[j].dist);
          }
        }
      }
    }
  }
}

TEST(HammingTopK, DescendingDistancesForceCompaction) {
  // Each block is nearer than the last, so the kept list keeps growing and
  // must be cut back; the result must still be exact.
  const size_t words = 2;
  const size_t n = 20000;
  std::vector<uint64_t> codes(n * words, 0);
  const uint64_t query[2] = {0, 0};
  for (size_t i = 0; i < n; ++i) {
    const size_t d = 128 - (i * 128) / n;  // 128 down to 1
    for (size_t b = 0; b < d; ++b) codes[i * words + b / 64] |= uint64_t{1} << (b % 64);
  }
  for (size_t k : {1, 7, 400}) {
    std::vector<Neighbor> got;
    TopK(ActiveFilter(), query, codes.data(), n, words, nullptr, k, &got);
    EXPECT_EQ(got.size(), k);
    const auto want = FullSortTopK(codes, words, query, {}, k);
    for (size_t j = 0; j < k; ++j) {
      EXPECT_EQ(got[j].slot, want[j].slot);
      EXPECT_EQ(got[j].dist, want[j].dist);
    }
  }
}

TEST(HammingTopK, ZeroKOrEmptyGivesNothing) {
  const uint64_t code = 5;
  std::vector<Neighbor> got = {{1, 1}};
  TopK(ActiveFilter(), &code, &code, 1, 1, nullptr, 0, &got);
  EXPECT_TRUE(got.empty());
  TopK(ActiveFilter(), &code, &code, 0, 1, nullptr, 3, &got);
  EXPECT_TRUE(got.empty());
}

TEST(HammingDispatch, ForceEachSupportedLevelThenRestore) {
  const SimdLevel before = ActiveSimdLevel();
  for (SimdLevel level : SupportedLevels()) {
    ASSERT_TRUE(ForceSimdLevel(level).ok());
    EXPECT_EQ(ActiveSimdLevel(), level);
    EXPECT_EQ(ActiveFilter(), FilterFor(level));
  }
  ASSERT_TRUE(ForceSimdLevel(before).ok());
}

TEST(HammingDispatch, ParseLevelNames) {
  SimdLevel level;
  ASSERT_TRUE(ParseSimdLevel("generic", &level));
  EXPECT_EQ(level, SimdLevel::kGeneric);
  ASSERT_TRUE(ParseSimdLevel("avx2", &level));
  EXPECT_EQ(level, SimdLevel::kAvx2);
  ASSERT_TRUE(ParseSimdLevel("avx512", &level));
  EXPECT_EQ(level, SimdLevel::kAvx512);
  ASSERT_TRUE(ParseSimdLevel("avx512_vpopcntdq", &level));
  EXPECT_EQ(level, SimdLevel::kAvx512);
  EXPECT_FALSE(ParseSimdLevel("sse9", &level));
  EXPECT_STREQ(SimdLevelName(SimdLevel::kAvx512), "avx512_vpopcntdq");
  EXPECT_STREQ(SimdLevelName(SimdLevel::kGeneric), "generic");
}

TEST(HammingDispatch, ReadBytesGenericAndWideSeeEveryByte) {
  std::vector<uint8_t> buf(1000, 0);
  const uint64_t zero = ReadBytes(buf.data(), buf.size());
  buf[999] = 1;  // in the byte tail
  EXPECT_NE(ReadBytes(buf.data(), buf.size()), zero);
  EXPECT_NE(ReadBytesGeneric(buf.data(), buf.size()), ReadBytesGeneric(buf.data(), 999));
  buf[999] = 0;
  buf[3] = 1;  // in the wide body
  EXPECT_NE(ReadBytes(buf.data(), buf.size()), zero);
}

}  // namespace
}  // namespace chitta::hamming
