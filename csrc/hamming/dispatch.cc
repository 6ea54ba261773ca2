// csrc/hamming/dispatch.cc
// Picks the Hamming kernel once per process: the best util/cpu.h allows (CPU
// features, capped by env CHITTA_SIMD), on first use. ForceSimdLevel (tests)
// replaces the choice at any time.
#include <atomic>
#include <cstring>
#include <string>

#include "hamming/scan.h"
#include "util/cpu.h"

namespace chitta::hamming {
namespace {

constexpr int kUnset = -1;
std::atomic<int> g_level{kUnset};

cpu::Level TierOf(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return cpu::Level::kAvx512;
    case SimdLevel::kAvx2: return cpu::Level::kAvx2;
    case SimdLevel::kGeneric: break;
  }
  return cpu::Level::kGeneric;
}

uint32_t NeedsOf(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return kAvx512Features;
    case SimdLevel::kAvx2: return kAvx2Features;
    case SimdLevel::kGeneric: break;
  }
  return 0;
}

}  // namespace

SimdLevel LevelFor(cpu::Level cap) {
  for (SimdLevel level : {SimdLevel::kAvx512, SimdLevel::kAvx2}) {
    if (static_cast<int>(TierOf(level)) <= static_cast<int>(cap) && CpuSupports(level)) {
      return level;
    }
  }
  return SimdLevel::kGeneric;
}

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

bool CpuSupports(SimdLevel level) { return cpu::Supports(NeedsOf(level)); }

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
    g_level.compare_exchange_strong(expected, static_cast<int>(LevelFor(cpu::Cap())),
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
  static const bool wide = cpu::Allowed(cpu::Level::kAvx2, kAvx2Features);
  return wide ? ReadBytesAvx2(data, n) : ReadBytesGeneric(data, n);
}

}  // namespace chitta::hamming
