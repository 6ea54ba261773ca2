// csrc/recall/word_scan.h
// The word index's exact scan (word_index.h), made cheap by a quantized
// first pass that is still exact.
//
// Each row is also kept as int8 codes (x = x^ + dx with x^ = scale * code,
// per-row scale = max|x| / 127) with the L2 norms of x^ and of its rounding
// error dx. A query is quantized likewise but to 7 bits (codes in [-63, 63],
// stored unsigned as code + 64, for the u8 x s8 dot product: see kQueryLevel).
// For a row, the int8 dot gives an estimate a = q^.x^ of its cosine with a
// bound from Cauchy-Schwarz:
//   |q.x - a| = |q^.dx + dq.x^ + dq.dx| <= |q^||dx| + |dq||x^| + |dq||dx| = b.
// With L the k-th largest a - b, no row whose a + b lies
// below L (less a margin for the float kernel's own rounding) can be among
// the k best, so only the others are scored with the f32 kernel
// (hnsw/distance.h) and ranked: the answer is the full f32 scan's, row for
// row and bit for bit (word_scan_test.cc checks it against that scan). The
// codes take a quarter of the f32 rows' bytes, and the first pass is what
// streams through memory.
//
// Dot8RowsVnni (word_scan_avx512.cc, AVX-512 VNNI) or else Dot8RowsAvx2
// (word_scan_avx2.cc) is chosen at run time when util/cpu.h allows it (CPU
// features, env CHITTA_SIMD's cap: level avx512, avx2); Dot8RowsGeneric is the
// reference (exact integer arithmetic: all give the same sums).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hnsw/distance.h"
#include "util/cpu.h"

namespace chitta::recall {

struct WordHit;

// The query's codes lie in [-kQueryLevel, kQueryLevel] and are passed as
// code + kQueryOffset: at most 127, so that a pair of products (2 * 127 * 127)
// fits the 16-bit sums of AVX2's vpmaddubsw without saturating.
inline constexpr int kQueryLevel = 63;
inline constexpr int kQueryOffset = 64;

// out[r] = sum_i qu[i] * codes[r * stride + i] for the n rows; `stride` is a
// multiple of 64; every qu[i] <= 127 (kQueryOffset + kQueryLevel).
using Dot8RowsFn = void (*)(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n,
                            int32_t* out);
void Dot8RowsGeneric(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n, int32_t* out);
void Dot8RowsVnni(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n,
                  int32_t* out);  // needs HasAvx512Vnni()
void Dot8RowsAvx2(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n,
                  int32_t* out);  // needs HasDot8Avx2()
// The features word_scan_avx512.cc is built with (CMakeLists.txt; the file
// static_asserts it) and so needs: -mavx512f -mavx512bw -mavx512vnni -mpopcnt.
inline constexpr uint32_t kDot8VnniFeatures = cpu::kAvx512Base | cpu::kAvx512bw | cpu::kAvx512vnni;
bool HasAvx512Vnni();  // the CPU can run Dot8RowsVnni (ignores CHITTA_SIMD)
// The features word_scan_avx2.cc is built with: -mavx2 -mpopcnt.
inline constexpr uint32_t kDot8Avx2Features = cpu::kAvx2Base;
bool HasDot8Avx2();  // the CPU can run Dot8RowsAvx2 (ignores CHITTA_SIMD)
// The best kernel this CPU runs at or below level `cap`.
Dot8RowsFn Dot8RowsFor(cpu::Level cap);
// Dot8RowsFor(cpu::Cap()), fixed after the first call.
Dot8RowsFn ChosenDot8Rows();
const char* Dot8RowsName(Dot8RowsFn fn);  // "avx512_vnni", "avx2" or "generic"

// Keeps the best k hits offered in a heap whose top is the worst kept (`better`:
// a strict order); Finish() leaves them best first. A hit equal to the worst kept
// never displaces it, so with hits offered in ascending row order ties keep the
// earlier row.
template <typename Hit, bool (*better)(const Hit&, const Hit&)>
struct BestK {
  size_t k;
  std::vector<Hit>* out;
  void Offer(const Hit& h) {
    if (out->size() < k) {
      out->push_back(h);
      std::push_heap(out->begin(), out->end(), better);
    } else if (better(h, out->front())) {
      std::pop_heap(out->begin(), out->end(), better);
      out->back() = h;
      std::push_heap(out->begin(), out->end(), better);
    }
  }
  void Finish() { std::sort_heap(out->begin(), out->end(), better); }
};

// The int8 form of the rows, appended as they are added (or one made anew: Set).
struct QuantRows {
  size_t dim = 0;
  size_t stride = 0;  // dim rounded up to 64 (padding codes are 0)
  std::vector<int8_t> codes;  // size() * stride
  std::vector<float> scale;   // per row
  std::vector<float> err;     // per row: |x - x^| (L2), rounded up
  std::vector<float> norm;    // per row: |x^| (L2), rounded up
  std::vector<int32_t> csum;  // per row: sum code_i
  float max_norm = 0.0f;      // largest row L2 norm so far

  explicit QuantRows(size_t d = 0) : dim(d), stride((d + 63) / 64 * 64) {}
  size_t size() const { return scale.size(); }
  void Append(const float* rows, size_t n);
  void Set(size_t row, const float* x);  // row < size(): its codes made anew from x

 private:
  void Quantize(size_t row, const float* x);
};

// The quantized first pass over the n rows of `quant` for the query q: each
// row's upper bound on its f32 dot with q (`upper`, n values) and the floor
// below which a row cannot be among the k best (the k-th largest lower bound,
// less the f32 kernel's rounding margin). Rows listed in `skip` (n_skip
// indexes; any outside [0, n) are ignored) get an upper bound of -inf and
// count for nothing. Needs 0 < k <= n.
float FirstPass(const QuantRows& quant, size_t n, const float* q, size_t k, const int64_t* skip,
                size_t n_skip, std::vector<float>* upper);

// The k rows (of n; rows row-major n * dim) of highest f32 `dot` with the
// unit query q, best first, ties by the smaller row: exactly what one f32
// dot per row would give. Uses `quant` (which must hold the same n rows)
// to skip most of them.
void ExactTopK(const QuantRows& quant, const float* rows, size_t n, hnsw::DotFn dot,
               const float* q, size_t k, std::vector<WordHit>* out);

// The same by one f32 dot per row (the reference; small tables).
void ScanTopK(const float* rows, size_t n, size_t dim, hnsw::DotFn dot, const float* q, size_t k,
              std::vector<WordHit>* out);

}  // namespace chitta::recall
