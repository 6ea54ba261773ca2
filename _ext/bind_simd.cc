// _ext/bind_simd.cc
// chitta._core bindings of util/cpu.h: the SIMD kernels in use per family
// (after env CHITTA_SIMD's cap) and the CPU features seen. No logic.
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "hamming/scan.h"
#include "hnsw/distance.h"
#include "recall/word_scan.h"
#include "registry.h"
#include "util/cpu.h"
#include "util/crc32c.h"

namespace chitta_ext {
namespace {

namespace cpu = chitta::cpu;

std::vector<std::pair<std::string, cpu::Level>> Kernels() {
  namespace hm = chitta::hamming;
  const hm::SimdLevel h = hm::ActiveSimdLevel();
  const auto dot = chitta::hnsw::ChosenDot();
  const auto dot8 = chitta::recall::ChosenDot8Rows();
  const auto crc = chitta::crc32c::ExtendFor(cpu::Cap());
  return {
      {hm::SimdLevelName(h), h == hm::SimdLevel::kAvx512 ? cpu::Level::kAvx512
                             : h == hm::SimdLevel::kAvx2 ? cpu::Level::kAvx2
                                                         : cpu::Level::kGeneric},
      {chitta::hnsw::DotName(dot), dot == &chitta::hnsw::DotAvx512 ? cpu::Level::kAvx512
                                   : dot == &chitta::hnsw::DotAvx2 ? cpu::Level::kAvx2
                                                                   : cpu::Level::kGeneric},
      {chitta::recall::Dot8RowsName(dot8),
       dot8 == &chitta::recall::Dot8RowsVnni   ? cpu::Level::kAvx512
       : dot8 == &chitta::recall::Dot8RowsAvx2 ? cpu::Level::kAvx2
                                               : cpu::Level::kGeneric},
      {crc == &chitta::crc32c::ExtendSse42 ? "sse4.2" : "portable",
       crc == &chitta::crc32c::ExtendSse42 ? cpu::Level::kSse42 : cpu::Level::kGeneric},
  };
}

}  // namespace

CHITTA_BIND(simd) {
  m.def("simd_level", [] {
    cpu::Level top = cpu::Level::kGeneric;
    for (const auto& k : Kernels()) {
      if (static_cast<int>(k.second) > static_cast<int>(top)) top = k.second;
    }
    return std::string(cpu::LevelName(top));
  }, "The widest SIMD level among the kernels in use: generic, sse42, avx2 or avx512.");
  m.def("simd_kernels", [] {
    py::dict out;
    const char* families[] = {"hamming", "hnsw", "word_scan", "crc32c"};
    const auto kernels = Kernels();
    for (size_t i = 0; i < kernels.size(); ++i) out[families[i]] = kernels[i].first;
    return out;
  }, "The kernel each family uses: {'hamming', 'hnsw', 'word_scan', 'crc32c'} -> name.");
  m.def("_simd_cap", [] { return std::string(cpu::LevelName(cpu::Cap())); },
        "The level env CHITTA_SIMD caps at (avx512 when unset or unknown).");
  m.def("_cpu_features", [] {
    std::vector<std::string> names;
    for (uint32_t i = 0; i < cpu::kFeatureCount; ++i) {
      if (cpu::Supports(1u << i)) names.emplace_back(cpu::FeatureName(i));
    }
    return names;
  }, "CPU features util/cpu.h detected (with OS support), in /proc/cpuinfo names.");
}

}  // namespace chitta_ext
