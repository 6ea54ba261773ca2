// csrc/bm25/unicode_class.h
// Compact, table-driven Unicode classification for the BM25 tokenizer: which
// code points are word characters, which are ideographs emitted one per token,
// and a simple lowercase fold. Not a full Unicode database: the covered ranges
// are listed in unicode_class.cc and documented in tokenizer.h.
#pragma once

#include <cstdint>

namespace chitta::bm25 {

enum class CharClass : uint8_t {
  kSeparator = 0,  // splits tokens (space, punctuation, symbols, unknown)
  kWord = 1,       // letters, digits, combining marks of covered scripts, '_'
  kIdeograph = 2,  // CJK ideographs and hiragana: each one is its own token
};

CharClass Classify(uint32_t cp);

// Lowercase fold for ASCII, Latin-1, Latin Extended-A, Latin Extended
// Additional, Greek (final sigma folds to sigma), Cyrillic and full-width
// ASCII (full-width letters and digits fold to plain ASCII). Other code points
// are returned unchanged.
uint32_t FoldCase(uint32_t cp);

}  // namespace chitta::bm25
