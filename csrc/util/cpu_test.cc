// csrc/util/cpu_test.cc
// util/cpu.h: the cpuid/xgetbv decoder against the compiler runtime's own
// detector (__builtin_cpu_supports, which also checks OS register state), and
// the CHITTA_SIMD parsing rules.
#include "util/cpu.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace chitta::cpu {
namespace {

TEST(Cpu, DetectedAgreesWithCompilerRuntime) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const struct {
    uint32_t bit;
    bool has;
  } want[] = {
      {kSse42, __builtin_cpu_supports("sse4.2") != 0},
      {kPopcnt, __builtin_cpu_supports("popcnt") != 0},
      {kAvx, __builtin_cpu_supports("avx") != 0},
      {kAvx2, __builtin_cpu_supports("avx2") != 0},
      {kFma, __builtin_cpu_supports("fma") != 0},
      {kAvx512f, __builtin_cpu_supports("avx512f") != 0},
      {kAvx512bw, __builtin_cpu_supports("avx512bw") != 0},
      {kAvx512vl, __builtin_cpu_supports("avx512vl") != 0},
      {kAvx512vpopcntdq, __builtin_cpu_supports("avx512vpopcntdq") != 0},
      {kAvx512vnni, __builtin_cpu_supports("avx512vnni") != 0},
  };
  for (const auto& w : want) EXPECT_EQ(w.has, Supports(w.bit)) << std::hex << w.bit;
#else
  EXPECT_EQ(0u, Detected());
#endif
}

TEST(Cpu, SupportsNeedsEveryBit) {
  EXPECT_TRUE(Supports(0));
  EXPECT_FALSE(Supports(Detected() | (1u << 31)));  // no such feature
  EXPECT_TRUE(Supports(Detected()));
}

TEST(Cpu, FeatureNamesAreCpuinfoNames) {
  EXPECT_STREQ("sse4_2", FeatureName(0));
  EXPECT_STREQ("avx512_vpopcntdq", FeatureName(8));
  EXPECT_STREQ("avx512_vnni", FeatureName(kFeatureCount - 1));
  EXPECT_STREQ("", FeatureName(kFeatureCount));
}

TEST(Cpu, ParseLevelTakesExactlyTheFourNames) {
  const char* names[] = {"generic", "sse42", "avx2", "avx512"};
  for (int i = 0; i < 4; ++i) {
    Level got = Level::kGeneric;
    ASSERT_TRUE(ParseLevel(names[i], &got)) << names[i];
    EXPECT_EQ(i, static_cast<int>(got));
    EXPECT_STREQ(names[i], LevelName(got));
  }
  for (const char* bad : {"", "AVX2", "avx", "sse4.2", "avx512_vpopcntdq", "avx2 ", "native"}) {
    Level got = Level::kSse42;
    EXPECT_FALSE(ParseLevel(bad, &got)) << bad;
    EXPECT_EQ(Level::kSse42, got) << "unchanged on failure";
  }
}

TEST(Cpu, UnsetOrEmptyValueIsNoCapAndNoWarning) {
  std::string warning = "stale";
  EXPECT_EQ(Level::kAvx512, CapFromValue(nullptr, &warning));
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(Level::kAvx512, CapFromValue("", &warning));
  EXPECT_TRUE(warning.empty());
}

TEST(Cpu, KnownValueCaps) {
  std::string warning;
  EXPECT_EQ(Level::kGeneric, CapFromValue("generic", &warning));
  EXPECT_EQ(Level::kSse42, CapFromValue("sse42", &warning));
  EXPECT_EQ(Level::kAvx2, CapFromValue("avx2", &warning));
  EXPECT_TRUE(warning.empty());
}

TEST(Cpu, UnknownValueIsIgnoredWithAWarningNamingTheChoices) {
  std::string warning;
  EXPECT_EQ(Level::kAvx512, CapFromValue("avx3", &warning));
  EXPECT_NE(std::string::npos, warning.find("CHITTA_SIMD='avx3'"));
  EXPECT_NE(std::string::npos, warning.find("generic, sse42, avx2, avx512"));
}

TEST(Cpu, CapIsTheEnvironmentsValue) {
  std::string warning;
  EXPECT_EQ(CapFromValue(std::getenv("CHITTA_SIMD"), &warning), Cap());
  EXPECT_TRUE(Allowed(Level::kGeneric, 0));
  EXPECT_EQ(Cap() == Level::kAvx512, Allowed(Level::kAvx512, 0));
  EXPECT_FALSE(Allowed(Level::kGeneric, 1u << 31));
}

}  // namespace
}  // namespace chitta::cpu
