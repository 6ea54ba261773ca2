// csrc/bm25/tokenizer.h
// The BM25 tokenizer: strict UTF-8 in, lowercase tokens out.
//
// Rules (the Python docstring of chitta.organs.index.bm25.tokenize repeats them):
// - Input must be valid UTF-8 (no overlong forms, surrogates or code points
//   above U+10FFFF); anything else is InvalidArgument naming the byte offset.
// - Word characters: ASCII letters and digits, '_', and the letters, digits and
//   combining marks of Latin-1, Latin Extended-A/B and Additional, IPA, Greek
//   (+ Extended), Cyrillic, Armenian, Hebrew, Arabic, Devanagari, Bengali, Thai,
//   Georgian, Hangul, Katakana, Bopomofo and full-width ASCII (unicode_class.cc).
//   Everything else (spaces, punctuation including '.', '-', '\'', '/', symbols,
//   emoji, unlisted scripts) separates tokens.
// - A token is a maximal run of word characters, so "port8080", "v2" and
//   "snake_case" stay whole while "v2.1" gives "v2", "1" and "don't" gives
//   "don", "t". Leading and trailing '_' are trimmed ("__init__" -> "init");
//   a token of only '_' is dropped.
// - CJK ideographs (and hiragana, 々〆〇) are each a one-character token:
//   "東京タワー" -> "東", "京", "タワー" (katakana runs stay whole).
// - Lowercasing (FoldCase): ASCII, Latin-1, Latin Extended-A, Latin Extended
//   Additional, Greek (ς -> σ), Cyrillic; full-width letters/digits fold to ASCII.
// - Stopwords (on by default): the 33 words of Lucene's English stop set plus
//   "s" and "t" (left over from split apostrophes). Checked before stemming.
// - Light stemming (off by default), only for tokens made of ASCII a-z:
//   plurals (-ies -> -i, -sses -> -ss, -xes/-ches/-shes -> drop "es", -s ->
//   drop unless -ss/-us/-is), then -ing / -ed (stem keeps >= 3 letters with a
//   vowel; a doubled final consonant other than l/s/z is undoubled), then a
//   final consonant+y -> i and a final e (not after e) is dropped. Both the
//   document and the query side must use the same setting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chitta/status.h"

namespace chitta::bm25 {

struct TokenizerOptions {
  bool stem = false;
  bool stopwords = true;
};

// Appends the tokens of `text` to `out`. On invalid UTF-8 returns
// InvalidArgument and leaves `out` as it was.
[[nodiscard]] Status Tokenize(std::string_view text, const TokenizerOptions& options,
                              std::vector<std::string>* out);

// True if `token` (already lowercased) is in the stopword list.
bool IsStopword(std::string_view token);

// Applies the light stemmer to `token` in place (no-op unless ASCII a-z only).
void LightStem(std::string* token);

}  // namespace chitta::bm25
