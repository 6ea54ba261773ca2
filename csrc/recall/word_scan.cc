// csrc/recall/word_scan.cc
// The quantized first pass and the exact f32 ranking of the word scan
// (word_scan.h).
#include "recall/word_scan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "recall/word_index.h"

namespace chitta::recall {
namespace {

// a ranks before b: higher cosine, then the smaller row.
bool Better(const WordHit& a, const WordHit& b) {
  return a.cosine > b.cosine || (a.cosine == b.cosine && a.row < b.row);
}

using TopK = BestK<WordHit, Better>;

}  // namespace

void Dot8RowsGeneric(const uint8_t* qu, const int8_t* codes, size_t stride, size_t n,
                     int32_t* out) {
  for (size_t r = 0; r < n; ++r) {
    const int8_t* c = codes + r * stride;
    int32_t s = 0;
    for (size_t i = 0; i < stride; ++i) s += static_cast<int32_t>(qu[i]) * c[i];
    out[r] = s;
  }
}

bool HasAvx512Vnni() { return cpu::Supports(kDot8VnniFeatures); }

bool HasDot8Avx2() { return cpu::Supports(kDot8Avx2Features); }

Dot8RowsFn Dot8RowsFor(cpu::Level cap) {
  if (cap == cpu::Level::kAvx512 && HasAvx512Vnni()) return &Dot8RowsVnni;
  if (static_cast<int>(cap) >= static_cast<int>(cpu::Level::kAvx2) && HasDot8Avx2()) {
    return &Dot8RowsAvx2;
  }
  return &Dot8RowsGeneric;
}

Dot8RowsFn ChosenDot8Rows() {
  static const Dot8RowsFn fn = Dot8RowsFor(cpu::Cap());
  return fn;
}

const char* Dot8RowsName(Dot8RowsFn fn) {
  return fn == &Dot8RowsVnni ? "avx512_vnni" : fn == &Dot8RowsAvx2 ? "avx2" : "generic";
}

// One row's codes and bounds into slot `row` (which exists).
void QuantRows::Quantize(size_t row, const float* x) {
  int8_t* c = codes.data() + row * stride;
  float top = 0.0f;
  double norm2 = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    top = std::max(top, std::fabs(x[i]));
    norm2 += static_cast<double>(x[i]) * x[i];
  }
  const float s = top / 127.0f;
  double e2 = 0.0, n2 = 0.0;
  int32_t sum = 0;
  for (size_t i = 0; i < dim; ++i) {
    const int v = s > 0.0f ? static_cast<int>(std::lrintf(x[i] / s)) : 0;
    const int clamped = std::max(-127, std::min(127, v));
    c[i] = static_cast<int8_t>(clamped);
    sum += clamped;
    const double back = static_cast<double>(s) * clamped;  // exact in double
    e2 += (x[i] - back) * (x[i] - back);
    n2 += back * back;
  }
  scale[row] = s;
  // rounded up: a relative nudge covers the sums' own rounding
  err[row] = static_cast<float>(std::sqrt(e2) * 1.0001);
  norm[row] = static_cast<float>(std::sqrt(n2) * 1.0001);
  csum[row] = sum;
  max_norm = std::max(max_norm, static_cast<float>(std::sqrt(norm2)));
}

void QuantRows::Append(const float* rows, size_t n) {
  const size_t first = size();
  codes.resize((first + n) * stride, 0);
  scale.resize(first + n);
  err.resize(first + n);
  norm.resize(first + n);
  csum.resize(first + n);
  for (size_t r = 0; r < n; ++r) Quantize(first + r, rows + r * dim);
}

void QuantRows::Set(size_t row, const float* x) { Quantize(row, x); }

void ScanTopK(const float* rows, size_t n, size_t dim, hnsw::DotFn dot, const float* q, size_t k,
              std::vector<WordHit>* out) {
  out->clear();
  k = std::min(k, n);
  if (k == 0) return;
  out->reserve(k);
  TopK top{k, out};
  for (size_t i = 0; i < n; ++i) top.Offer({static_cast<uint32_t>(i), dot(q, rows + i * dim, dim)});
  top.Finish();
}

float FirstPass(const QuantRows& quant, size_t n, const float* q, size_t k, const int64_t* skip,
                size_t n_skip, std::vector<float>* upper) {
  const size_t dim = quant.dim, stride = quant.stride;
  // The query's codes (unsigned: code + kQueryOffset), its rounding error and L2 norm.
  float top = 0.0f;
  for (size_t i = 0; i < dim; ++i) top = std::max(top, std::fabs(q[i]));
  const float sq = top / static_cast<float>(kQueryLevel);
  std::vector<uint8_t> qu(stride, kQueryOffset);
  double e2 = 0.0, n2 = 0.0;
  for (size_t i = 0; i < dim; ++i) {
    const int raw_code = sq > 0.0f ? static_cast<int>(std::lrintf(q[i] / sq)) : 0;
    const int v = std::max(-kQueryLevel, std::min(kQueryLevel, raw_code));
    qu[i] = static_cast<uint8_t>(v + kQueryOffset);
    const double back = static_cast<double>(sq) * v;
    e2 += (q[i] - back) * (q[i] - back);
    n2 += back * back;
  }
  const float eq = static_cast<float>(std::sqrt(e2) * 1.0001);
  const float nq = static_cast<float>(std::sqrt(n2) * 1.0001);
  // Estimates and bounds: each row's upper bound kept, its lower bound offered to a
  // min-heap of the k largest (whose top is then the k-th largest).
  std::vector<int32_t> raw(n);
  ChosenDot8Rows()(qu.data(), quant.codes.data(), stride, n, raw.data());
  upper->resize(n);
  std::vector<float> lower(n);
  for (size_t r = 0; r < n; ++r) {  // (vectorizes)
    // a = sq * scale * (qc . c); the estimate's float rounding is in the margin below
    const float est = quant.scale[r] * sq * static_cast<float>(raw[r] - kQueryOffset * quant.csum[r]);
    const float bound = nq * quant.err[r] + eq * quant.norm[r] + eq * quant.err[r];
    (*upper)[r] = est + bound;
    lower[r] = est - bound;
  }
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n_skip; ++i) {
    if (skip[i] >= 0 && static_cast<size_t>(skip[i]) < n) {
      (*upper)[skip[i]] = kNone;
      lower[skip[i]] = kNone;
    }
  }
  std::vector<float> lows(lower.begin(), lower.begin() + k);  // the k largest lower bounds
  std::make_heap(lows.begin(), lows.end(), std::greater<float>());
  for (size_t r = k; r < n; ++r) {
    if (lower[r] > lows.front()) {
      std::pop_heap(lows.begin(), lows.end(), std::greater<float>());
      lows.back() = lower[r];
      std::push_heap(lows.begin(), lows.end(), std::greater<float>());
    }
  }
  const float fdim = static_cast<float>(dim);
  // Margin: the f32 kernel's rounding (|error| <= dim * 2^-23 * |x|, generously) on both sides,
  // plus the estimate's own float rounding.
  const float margin = 4.0f * fdim * 1.2e-7f * std::max(quant.max_norm, 1.0f) + 1e-6f;
  return lows.front() - margin;
}

void ExactTopK(const QuantRows& quant, const float* rows, size_t n, hnsw::DotFn dot,
               const float* q, size_t k, std::vector<WordHit>* out) {
  out->clear();
  k = std::min(k, n);
  if (k == 0) return;
  std::vector<float> upper;
  const float floor = FirstPass(quant, n, q, k, nullptr, 0, &upper);
  out->reserve(k);
  TopK best{k, out};
  for (size_t r = 0; r < n; ++r) {
    if (upper[r] >= floor) {
      best.Offer({static_cast<uint32_t>(r), dot(q, rows + r * quant.dim, quant.dim)});
    }
  }
  best.Finish();
}

}  // namespace chitta::recall
