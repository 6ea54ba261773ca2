// csrc/util/simd_levels_test.cc
// Every kernel family at every CHITTA_SIMD level (util/cpu.h): the kernel a
// family picks under each cap is at or below the cap and the best the CPU
// runs there, and its results equal the generic reference bit for bit.
// Integer kernels (Hamming, word scan first pass, CRC-32C) on random input;
// the float dot products on inputs whose every partial sum is exact (small
// integers), where any summation order gives the same bits.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "hamming/scan.h"
#include "hnsw/distance.h"
#include "recall/word_scan.h"
#include "util/cpu.h"
#include "util/crc32c.h"

namespace chitta {
namespace {

using cpu::Level;
constexpr Level kLevels[] = {Level::kGeneric, Level::kSse42, Level::kAvx2, Level::kAvx512};

int Rank(Level l) { return static_cast<int>(l); }

TEST(SimdLevels, HammingPicksTheBestAllowedAndMatchesGeneric) {
  std::mt19937_64 rng(11);
  for (Level cap : kLevels) {
    const hamming::SimdLevel got = hamming::LevelFor(cap);
    ASSERT_TRUE(hamming::CpuSupports(got));
    const hamming::SimdLevel want =
        Rank(cap) >= Rank(Level::kAvx512) && hamming::CpuSupports(hamming::SimdLevel::kAvx512)
            ? hamming::SimdLevel::kAvx512
        : Rank(cap) >= Rank(Level::kAvx2) && hamming::CpuSupports(hamming::SimdLevel::kAvx2)
            ? hamming::SimdLevel::kAvx2
            : hamming::SimdLevel::kGeneric;
    EXPECT_EQ(want, got) << cpu::LevelName(cap);
    const hamming::FilterFn fn = hamming::FilterFor(got);
    for (size_t words : {1, 2, 3, 4, 8}) {
      for (size_t n : {0, 1, 7, 64, 333}) {
        std::vector<uint64_t> q(words), codes(n * words);
        for (auto& w : q) w = rng();
        for (auto& w : codes) w = rng() & rng();  // skewed popcounts
        std::vector<uint32_t> gi(n), gd(n), ki(n), kd(n);
        const uint32_t thr = static_cast<uint32_t>(32 * words);
        const size_t gm = hamming::FilterGeneric(q.data(), codes.data(), n, words, thr, gi.data(),
                                                 gd.data());
        const size_t km = fn(q.data(), codes.data(), n, words, thr, ki.data(), kd.data());
        ASSERT_EQ(gm, km);
        gi.resize(gm), gd.resize(gm), ki.resize(km), kd.resize(km);
        EXPECT_EQ(gi, ki);
        EXPECT_EQ(gd, kd);
      }
    }
  }
}

TEST(SimdLevels, HnswDotPicksTheBestAllowedAndIsExactOnExactInputs) {
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<int> small(-8, 8);
  for (Level cap : kLevels) {
    const hnsw::DotFn fn = hnsw::DotFor(cap);
    const hnsw::DotFn want = Rank(cap) >= Rank(Level::kAvx512) && hnsw::HasAvx512() ? &hnsw::DotAvx512
                             : Rank(cap) >= Rank(Level::kAvx2) && hnsw::HasAvx2Fma() ? &hnsw::DotAvx2
                                                                                      : &hnsw::DotGeneric;
    EXPECT_EQ(want, fn) << cpu::LevelName(cap);
    for (size_t dim = 0; dim <= 300; dim += (dim < 70 ? 1 : 23)) {
      std::vector<float> a(dim), b(dim);
      int64_t exact = 0;
      for (size_t i = 0; i < dim; ++i) {
        a[i] = static_cast<float>(small(rng));
        b[i] = static_cast<float>(small(rng));
        exact += static_cast<int64_t>(a[i]) * static_cast<int64_t>(b[i]);
      }
      const float got = fn(a.data(), b.data(), dim);
      EXPECT_EQ(static_cast<float>(exact), got) << cpu::LevelName(cap) << " dim " << dim;
      EXPECT_EQ(hnsw::DotGeneric(a.data(), b.data(), dim), got) << dim;
    }
  }
}

TEST(SimdLevels, WordScanDot8PicksTheBestAllowedAndMatchesGeneric) {
  std::mt19937_64 rng(13);
  for (Level cap : kLevels) {
    const recall::Dot8RowsFn fn = recall::Dot8RowsFor(cap);
    const recall::Dot8RowsFn want =
        cap == Level::kAvx512 && recall::HasAvx512Vnni()           ? &recall::Dot8RowsVnni
        : Rank(cap) >= Rank(Level::kAvx2) && recall::HasDot8Avx2() ? &recall::Dot8RowsAvx2
                                                                   : &recall::Dot8RowsGeneric;
    EXPECT_EQ(want, fn) << cpu::LevelName(cap);
    for (size_t stride : {64, 128, 384}) {
      for (size_t n : {0, 1, 3, 4, 5, 17}) {
        std::vector<uint8_t> qu(stride);
        std::vector<int8_t> codes(n * stride);
        for (auto& v : qu) v = static_cast<uint8_t>(rng() % (recall::kQueryOffset + recall::kQueryLevel + 1));
        for (auto& v : codes) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
        std::vector<int32_t> g(n), k(n);
        recall::Dot8RowsGeneric(qu.data(), codes.data(), stride, n, g.data());
        fn(qu.data(), codes.data(), stride, n, k.data());
        EXPECT_EQ(g, k) << cpu::LevelName(cap) << " stride " << stride << " n " << n;
      }
    }
  }
}

TEST(SimdLevels, Crc32cPicksTheBestAllowedAndMatchesPortable) {
  std::mt19937_64 rng(14);
  std::vector<uint8_t> buf(70000);
  for (auto& v : buf) v = static_cast<uint8_t>(rng());
  for (Level cap : kLevels) {
    const crc32c::ExtendFn fn = crc32c::ExtendFor(cap);
    const crc32c::ExtendFn want = Rank(cap) >= Rank(Level::kSse42) && crc32c::HasSse42()
                                      ? &crc32c::ExtendSse42
                                      : &crc32c::ExtendPortable;
    EXPECT_EQ(want, fn) << cpu::LevelName(cap);
    for (size_t len : {0, 1, 7, 8, 9, 255, 768, 769, 4096, 24577, 69999}) {
      for (size_t skew : {0, 3}) {
        EXPECT_EQ(crc32c::ExtendPortable(0x1234u, buf.data() + skew, len - (len > skew ? skew : 0)),
                  fn(0x1234u, buf.data() + skew, len - (len > skew ? skew : 0)))
            << cpu::LevelName(cap) << " len " << len;
      }
    }
  }
}

TEST(SimdLevels, ChosenKernelsFollowTheEnvironmentsCap) {
  const Level cap = cpu::Cap();
  EXPECT_EQ(hnsw::DotFor(cap), hnsw::ChosenDot());
  EXPECT_EQ(recall::Dot8RowsFor(cap), recall::ChosenDot8Rows());
  EXPECT_STREQ(crc32c::ExtendFor(cap) == &crc32c::ExtendSse42 ? "sse4.2" : "portable",
               crc32c::Implementation());
}

}  // namespace
}  // namespace chitta
