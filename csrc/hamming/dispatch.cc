// csrc/hamming/dispatch.cc
// Picks the Hamming kernel once per process: the best the CPU supports,
// lowered (never raised) by env CHITTA_SIMD=generic|avx2|avx512, read on first
// use. ForceSimdLevel (tests) replaces the choice at any time.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hamming/scan.h"

namespace chitta::hamming {
namespace {

constexpr int kUnset = -1;
std::atomic<int> g_level{kUnset};

SimdLevel InitialLevel() {
  SimdLevel level = DetectedSimdLevel();
  const char* env = std::getenv("CHITTA_SIMD");
  SimdLevel wanted;
  if (env != nullptr && ParseSimdLevel(env, &wanted) && wanted < level) level = wanted;
  return level;
}

}  // namespace

const char* SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return "avx512_vpopcntdq";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kGeneric: break;
  }
  return "generic";
}

bool ParseSimdLevel(const char* text, SimdLevel* level) {
  if (std::strcmp(text, "generic") == 0) {
    *level = SimdLevel::kGeneric;
  } else if (std::strcmp(text, "avx2") == 0) {
    *level = SimdLevel::kAvx2;
  } else if (std::strcmp(text, "avx512") == 0 || std::strcmp(text, "avx512_vpopcntdq") == 0) {
    *level = SimdLevel::kAvx512;
  } else {
    return false;
  }
  return true;
}

bool CpuSupports(SimdLevel level) {
#if defined(__x86_64__)
  switch (level) {
    case SimdLevel::kGeneric: return true;
    case SimdLevel::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    case SimdLevel::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vpopcntdq") &&
             __builtin_cpu_supports("popcnt");
  }
  return false;
#else
  return level == SimdLevel::kGeneric;
#endif
}

SimdLevel DetectedSimdLevel() {
  static const SimdLevel detected = CpuSupports(SimdLevel::kAvx512) ? SimdLevel::kAvx512
                                    : CpuSupports(SimdLevel::kAvx2) ? SimdLevel::kAvx2
                                                                    : SimdLevel::kGeneric;
  return detected;
}

SimdLevel ActiveSimdLevel() {
  int level = g_level.load(std::memory_order_acquire);
  if (level == kUnset) {
    int expected = kUnset;
    g_level.compare_exchange_strong(expected, static_cast<int>(InitialLevel()),
                                    std::memory_order_acq_rel);
    level = g_level.load(std::memory_order_acquire);
  }
  return static_cast<SimdLevel>(level);
}

FilterFn FilterFor(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return &FilterAvx512;
    case SimdLevel::kAvx2: return &FilterAvx2;
    case SimdLevel::kGeneric: break;
  }
  return &FilterGeneric;
}

FilterFn ActiveFilter() { return FilterFor(ActiveSimdLevel()); }

Status ForceSimdLevel(SimdLevel level) {
  if (!CpuSupports(level)) {
    return Status::Unsupported(std::string("this CPU cannot run the ") + SimdLevelName(level) +
                               " kernel");
  }
  g_level.store(static_cast<int>(level), std::memory_order_release);
  return Status::OK();
}

uint64_t ReadBytes(const void* data, size_t n) {
  return CpuSupports(SimdLevel::kAvx2) ? ReadBytesAvx2(data, n) : ReadBytesGeneric(data, n);
}

}  // namespace chitta::hamming
