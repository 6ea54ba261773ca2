// csrc/hashembed/hash_embed.cc
// Hashed bag-of-features embedding. Rules in hash_embed.h; the Python
// reimplementation in tests/helpers/_hashembed_ref.py must agree (1e-6).
#include "hashembed/hash_embed.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace chitta::hashembed {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool IsLeadByte(unsigned char c) { return (c & 0xC0) != 0x80; }

uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

uint64_t Fnv(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

uint64_t Start(char tag) { return Fnv(kFnvBasis ^ kSeed, std::string_view(&tag, 1)); }

void AddCharGrams(std::string_view word, std::string* padded, std::vector<size_t>* starts,
                  std::vector<uint64_t>* hashes) {
  padded->assign("<");
  padded->append(word.data(), word.size());
  padded->push_back('>');
  starts->clear();
  for (size_t i = 0; i < padded->size(); ++i) {
    if (IsLeadByte(static_cast<unsigned char>((*padded)[i]))) starts->push_back(i);
  }
  const size_t cps = starts->size();
  starts->push_back(padded->size());  // sentinel: end of the last code point
  const std::string_view all(*padded);
  for (uint32_t n = kMinGram; n <= kMaxGram; ++n) {
    if (n > cps) break;
    for (size_t i = 0; i + n <= cps; ++i) {
      const size_t b = (*starts)[i];
      const size_t e = (*starts)[i + n];
      hashes->push_back(FeatureHash('c', all.substr(b, e - b)));
    }
  }
}

}  // namespace

uint64_t FeatureHash(char tag, std::string_view bytes) { return Fmix64(Fnv(Start(tag), bytes)); }

void ExtractFeatures(std::string_view text, std::vector<uint64_t>* hashes) {
  std::string padded;
  std::vector<size_t> starts;
  std::string_view prev;
  bool have_prev = false;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    while (i < n && IsSpace(text[i])) ++i;
    if (i >= n) break;
    size_t j = i;
    while (j < n && !IsSpace(text[j])) ++j;
    const std::string_view word = text.substr(i, j - i);
    hashes->push_back(FeatureHash('w', word));
    if (have_prev) {
      uint64_t h = Fnv(Start('b'), prev);
      h = Fnv(h, " ");
      hashes->push_back(Fmix64(Fnv(h, word)));
    }
    AddCharGrams(word, &padded, &starts, hashes);
    prev = word;
    have_prev = true;
    i = j;
  }
}

Status HashEmbed(const std::string_view* texts, size_t n, uint32_t dim, float* out) {
  if (dim == 0 || dim > kMaxDim) {
    return Status::InvalidArgument("dim must be in [1, " + std::to_string(kMaxDim) + "], got " +
                                   std::to_string(dim));
  }
  if (n > 0 && (texts == nullptr || out == nullptr)) {
    return Status::InvalidArgument("texts and out must not be null");
  }
  std::vector<uint64_t> hashes;
  std::vector<double> acc(dim);
  for (size_t t = 0; t < n; ++t) {
    hashes.clear();
    ExtractFeatures(texts[t], &hashes);
    std::sort(hashes.begin(), hashes.end());
    std::fill(acc.begin(), acc.end(), 0.0);
    for (size_t i = 0; i < hashes.size();) {
      size_t j = i;
      while (j < hashes.size() && hashes[j] == hashes[i]) ++j;
      const double weight = 1.0 + std::log(static_cast<double>(j - i));
      const uint64_t h = hashes[i];
      acc[h % dim] += (h >> 63) ? -weight : weight;
      i = j;
    }
    double sq = 0.0;
    for (double v : acc) sq += v * v;
    const double inv = sq > 0.0 ? 1.0 / std::sqrt(sq) : 0.0;
    float* row = out + t * static_cast<size_t>(dim);
    for (uint32_t d = 0; d < dim; ++d) row[d] = static_cast<float>(acc[d] * inv);
  }
  return Status::OK();
}

}  // namespace chitta::hashembed
