// csrc/hashembed/hash_embed.h
// Hashed bag-of-features text embedding ("hashing-v1"): the model-free
// fallback embedder. A keyword matcher, not a paraphrase model.
//
// Input contract: each text is UTF-8, already normalised by the caller
// (chitta/encode/hashing.py applies NFKC, full Unicode lowercase and splits
// words with Python's \w+). Here, ASCII whitespace separates words and every
// other byte belongs to a word; nothing is lowercased. Code points are found
// by their lead bytes (any byte not 10xxxxxx starts one), so invalid UTF-8
// cannot read out of bounds; it only yields odd n-grams.
//
// Features of one text, each hashed as FNV-1a 64 over (tag byte, bytes),
// offset basis kFnvBasis ^ kSeed, then the murmur3 fmix64 finaliser:
//   'w' + word                       every word
//   'b' + word1 + ' ' + word2        every pair of adjacent words
//   'c' + gram                       every 3-, 4- and 5-code-point substring of
//                                    '<' + word + '>' (short words give fewer)
// A feature occurring tf times gets weight 1 + ln(tf). It adds +weight
// (hash bit 63 clear) or -weight (bit 63 set) to bucket (hash mod dim).
// The vector is then L2-normalised. Counting is by 64-bit hash.
//
// A text with no words (empty, whitespace only) gets the zero vector; its
// L2 norm stays zero (it matches nothing, rather than everything equally).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "chitta/status.h"

namespace chitta::hashembed {

inline constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
inline constexpr uint64_t kSeed = 0x6368697474613176ULL;  // "chitta1v"
inline constexpr uint32_t kMinGram = 3;
inline constexpr uint32_t kMaxGram = 5;
inline constexpr uint32_t kMaxDim = 1u << 20;

// Hash of one feature: FNV-1a 64 over `tag` then `bytes`, then fmix64.
uint64_t FeatureHash(char tag, std::string_view bytes);

// Appends the hashes of every feature occurrence of `text` (duplicates kept).
void ExtractFeatures(std::string_view text, std::vector<uint64_t>* hashes);

// Embeds `n` texts into `out` (n * dim floats, row-major). dim must be in
// [1, kMaxDim]. Texts are independent: a row depends only on its own text.
[[nodiscard]] Status HashEmbed(const std::string_view* texts, size_t n, uint32_t dim,
                               float* out);

}  // namespace chitta::hashembed
