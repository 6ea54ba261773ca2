// csrc/util/cpu.cc
// cpuid + xgetbv feature detection and the CHITTA_SIMD cap (cpu.h).
#include "util/cpu.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace chitta::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// XCR0: which register state the OS saves on a context switch.
uint64_t ReadXcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));  // no -mxsave needed
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

uint32_t Probe() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return 0;
  __cpuid(1, a, b, c, d);
  uint32_t f = 0;
  if (c & (1u << 20)) f |= kSse42;
  if (c & (1u << 23)) f |= kPopcnt;
  const bool osxsave = (c & (1u << 27)) != 0;
  const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     // SSE + AVX state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;   // + opmask, ZMM0-15 upper, ZMM16-31
  if (!os_ymm) return f;
  if (c & (1u << 28)) f |= kAvx;
  if (c & (1u << 12)) f |= kFma;
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  if (b & (1u << 5)) f |= kAvx2;
  if (!os_zmm) return f;
  if (b & (1u << 16)) f |= kAvx512f;
  if (b & (1u << 30)) f |= kAvx512bw;
  if (b & (1u << 31)) f |= kAvx512vl;
  if (c & (1u << 11)) f |= kAvx512vnni;
  if (c & (1u << 14)) f |= kAvx512vpopcntdq;
  return f;
}
#else
uint32_t Probe() { return 0; }
#endif

constexpr const char* kNames[] = {"generic", "sse42", "avx2", "avx512"};
constexpr const char* kFeatureNames[kFeatureCount] = {
    "sse4_2", "popcnt", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
    "avx512_vpopcntdq", "avx512_vnni"};

}  // namespace

uint32_t Detected() {
  static const uint32_t features = Probe();
  return features;
}

const char* FeatureName(uint32_t i) { return i < kFeatureCount ? kFeatureNames[i] : ""; }

bool Supports(uint32_t needs) { return (Detected() & needs) == needs; }

const char* LevelName(Level level) {
  const int i = static_cast<int>(level);
  return i >= 0 && i <= 3 ? kNames[i] : "generic";
}

bool ParseLevel(const char* text, Level* out) {
  for (int i = 0; i <= 3; ++i) {
    if (std::strcmp(text, kNames[i]) == 0) {
      *out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

Level CapFromValue(const char* value, std::string* warning) {
  warning->clear();
  Level level = Level::kAvx512;
  if (value == nullptr || *value == '\0' || ParseLevel(value, &level)) return level;
  *warning = std::string("chitta: CHITTA_SIMD='") + value +
             "' is not one of generic, sse42, avx2, avx512; ignoring it (no cap: the best "
             "kernels this CPU has). Set one of those names, or unset CHITTA_SIMD.";
  return Level::kAvx512;
}

Level Cap() {
  static const Level cap = [] {
    std::string warning;
    const Level level = CapFromValue(std::getenv("CHITTA_SIMD"), &warning);
    if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
    return level;
  }();
  return cap;
}

bool Allowed(Level tier, uint32_t needs) {
  return static_cast<int>(tier) <= static_cast<int>(Cap()) && Supports(needs);
}

}  // namespace chitta::cpu
