// csrc/util/cpu.h
// The one CPU feature module behind every SIMD kernel family (Hamming scan,
// HNSW distance, word scan, CRC-32C). It reads cpuid and, for the AVX and
// AVX-512 register state, xgetbv: a feature counts only when the CPU has it
// AND the OS saves its registers.
//
// Levels order the kernels: generic < sse42 < avx2 < avx512. Each kernel has a
// level (its tier) and the exact feature set its ISA file is built with
// (CMakeLists.txt; the file static_asserts CHITTA_CPU_COMPILED_FEATURES against
// it). A family runs the highest kernel whose tier is <= Cap() and whose
// features Supports() reports.
//
// Env CHITTA_SIMD caps the level for all families: generic | sse42 | avx2 |
// avx512, read once on first use. It never raises the level above what the
// CPU has. Unset or empty: no cap. Any other value: ignored (no cap), with one
// warning on stderr naming the accepted values.
#pragma once

#include <cstdint>
#include <string>

namespace chitta::cpu {

enum Feature : uint32_t {
  kSse42 = 1u << 0,
  kPopcnt = 1u << 1,
  kAvx = 1u << 2,
  kAvx2 = 1u << 3,
  kFma = 1u << 4,
  kAvx512f = 1u << 5,
  kAvx512bw = 1u << 6,
  kAvx512vl = 1u << 7,
  kAvx512vpopcntdq = 1u << 8,
  kAvx512vnni = 1u << 9,
};

inline constexpr uint32_t kFeatureCount = 10;
// The name Linux's /proc/cpuinfo gives bit `1 << i` ("sse4_2", "avx512_vnni", ...).
const char* FeatureName(uint32_t i);

// What gcc/clang turn on with -msse4.2, -mavx2 and -mavx512f (each implies the
// ones before it, and all imply POPCNT). A kernel built with such a flag needs them.
inline constexpr uint32_t kSse42Base = kSse42 | kPopcnt;
inline constexpr uint32_t kAvx2Base = kSse42Base | kAvx | kAvx2;
inline constexpr uint32_t kAvx512Base = kAvx2Base | kAvx512f;

enum class Level : int { kGeneric = 0, kSse42 = 1, kAvx2 = 2, kAvx512 = 3 };

// The features of this CPU that the OS also supports (cpuid + xgetbv, once).
uint32_t Detected();
// Whether every feature in `needs` is Detected() (ignores CHITTA_SIMD).
bool Supports(uint32_t needs);
// The level CHITTA_SIMD allows (kAvx512 when unset or unknown), read once.
Level Cap();
// Whether a kernel of level `tier` needing `needs` may run: tier <= Cap() and Supports(needs).
bool Allowed(Level tier, uint32_t needs);

// "generic", "sse42", "avx2", "avx512".
const char* LevelName(Level level);
// Parses exactly those names; false for anything else.
bool ParseLevel(const char* text, Level* out);
// The cap a CHITTA_SIMD value gives (nullptr or "" = unset: kAvx512). For an
// unknown value returns kAvx512 and sets *warning to the message Cap() prints
// (otherwise clears it). Pure: Cap() is this applied to the environment.
Level CapFromValue(const char* value, std::string* warning);

}  // namespace chitta::cpu

// The Feature bits the current translation unit is compiled for (from the
// compiler's predefined macros). A macro, not a function: ISA files see other
// values than the rest of the program, and an inline function may not differ.
#if defined(__SSE4_2__)
#define CHITTA_CPU_F_SSE42_ ::chitta::cpu::kSse42
#else
#define CHITTA_CPU_F_SSE42_ 0u
#endif
#if defined(__POPCNT__)
#define CHITTA_CPU_F_POPCNT_ ::chitta::cpu::kPopcnt
#else
#define CHITTA_CPU_F_POPCNT_ 0u
#endif
#if defined(__AVX__)
#define CHITTA_CPU_F_AVX_ ::chitta::cpu::kAvx
#else
#define CHITTA_CPU_F_AVX_ 0u
#endif
#if defined(__AVX2__)
#define CHITTA_CPU_F_AVX2_ ::chitta::cpu::kAvx2
#else
#define CHITTA_CPU_F_AVX2_ 0u
#endif
#if defined(__FMA__)
#define CHITTA_CPU_F_FMA_ ::chitta::cpu::kFma
#else
#define CHITTA_CPU_F_FMA_ 0u
#endif
#if defined(__AVX512F__)
#define CHITTA_CPU_F_AVX512F_ ::chitta::cpu::kAvx512f
#else
#define CHITTA_CPU_F_AVX512F_ 0u
#endif
#if defined(__AVX512BW__)
#define CHITTA_CPU_F_AVX512BW_ ::chitta::cpu::kAvx512bw
#else
#define CHITTA_CPU_F_AVX512BW_ 0u
#endif
#if defined(__AVX512VL__)
#define CHITTA_CPU_F_AVX512VL_ ::chitta::cpu::kAvx512vl
#else
#define CHITTA_CPU_F_AVX512VL_ 0u
#endif
#if defined(__AVX512VPOPCNTDQ__)
#define CHITTA_CPU_F_AVX512VPOPCNTDQ_ ::chitta::cpu::kAvx512vpopcntdq
#else
#define CHITTA_CPU_F_AVX512VPOPCNTDQ_ 0u
#endif
#if defined(__AVX512VNNI__)
#define CHITTA_CPU_F_AVX512VNNI_ ::chitta::cpu::kAvx512vnni
#else
#define CHITTA_CPU_F_AVX512VNNI_ 0u
#endif
#define CHITTA_CPU_COMPILED_FEATURES                                                   \
  (CHITTA_CPU_F_SSE42_ | CHITTA_CPU_F_POPCNT_ | CHITTA_CPU_F_AVX_ | CHITTA_CPU_F_AVX2_ | \
   CHITTA_CPU_F_FMA_ | CHITTA_CPU_F_AVX512F_ | CHITTA_CPU_F_AVX512BW_ |                 \
   CHITTA_CPU_F_AVX512VL_ | CHITTA_CPU_F_AVX512VPOPCNTDQ_ | CHITTA_CPU_F_AVX512VNNI_)
