// csrc/bm25/unicode_class.cc
// Range tables behind Classify() and FoldCase(). The ranges are hand-written
// approximations of the Unicode letter/digit/mark categories for the scripts
// chitta promises to handle (tokenizer.h lists them); anything not listed is a
// separator. Keep each table sorted by its first column: lookups binary-search.
#include "bm25/unicode_class.h"

#include <algorithm>
#include <iterator>

namespace chitta::bm25 {
namespace {

struct Range {
  uint32_t lo;
  uint32_t hi;  // inclusive
  CharClass cls;
};

constexpr CharClass W = CharClass::kWord;
constexpr CharClass I = CharClass::kIdeograph;

// Non-ASCII word and ideograph ranges, sorted, non-overlapping.
constexpr Range kRanges[] = {
    {0x00AA, 0x00AA, W}, {0x00B5, 0x00B5, W}, {0x00BA, 0x00BA, W},
    {0x00C0, 0x00D6, W}, {0x00D8, 0x00F6, W},
    {0x00F8, 0x02C1, W},  // Latin-1 letters, Latin Extended-A/B, IPA, modifiers
    {0x02C6, 0x02D1, W}, {0x02E0, 0x02E4, W}, {0x02EC, 0x02EC, W}, {0x02EE, 0x02EE, W},
    {0x0300, 0x036F, W},  // combining diacritical marks stay inside a word
    {0x0370, 0x0373, W}, {0x0376, 0x0377, W}, {0x037A, 0x037D, W}, {0x037F, 0x037F, W},
    {0x0386, 0x0386, W}, {0x0388, 0x038A, W}, {0x038C, 0x038C, W},
    {0x038E, 0x03A1, W}, {0x03A3, 0x03F5, W},  // Greek
    {0x03F7, 0x0481, W}, {0x0483, 0x052F, W},  // Cyrillic (+ supplement)
    {0x0531, 0x0556, W}, {0x0560, 0x0588, W},  // Armenian
    {0x0591, 0x05BD, W}, {0x05BF, 0x05BF, W}, {0x05C1, 0x05C2, W}, {0x05C4, 0x05C5, W},
    {0x05C7, 0x05C7, W}, {0x05D0, 0x05EA, W}, {0x05EF, 0x05F2, W},  // Hebrew
    {0x0610, 0x061A, W}, {0x0620, 0x0669, W}, {0x066E, 0x06D3, W},  // Arabic
    {0x06D5, 0x06DC, W}, {0x06DF, 0x06E8, W}, {0x06EA, 0x06FC, W}, {0x06FF, 0x06FF, W},
    {0x0900, 0x0963, W}, {0x0966, 0x096F, W}, {0x0971, 0x097F, W},  // Devanagari
    {0x0981, 0x09E3, W}, {0x09E6, 0x09F1, W},                       // Bengali
    {0x0E01, 0x0E3A, W}, {0x0E40, 0x0E4E, W}, {0x0E50, 0x0E59, W},  // Thai
    {0x10A0, 0x10FA, W}, {0x10FC, 0x10FF, W},                       // Georgian
    {0x1100, 0x11FF, W},                                            // Hangul Jamo
    {0x1E00, 0x1FBC, W}, {0x1FBE, 0x1FBE, W}, {0x1FC2, 0x1FCC, W},  // Latin Ext. Additional,
    {0x1FD0, 0x1FDB, W}, {0x1FE0, 0x1FEC, W}, {0x1FF2, 0x1FFC, W},  // Greek Extended
    {0x3005, 0x3007, I},                                            // 々 〆 〇
    {0x3041, 0x3096, I}, {0x3099, 0x309F, I},                       // Hiragana
    {0x30A1, 0x30FA, W}, {0x30FC, 0x30FF, W},                       // Katakana (runs)
    {0x3105, 0x312F, W}, {0x3131, 0x318E, W},                       // Bopomofo, compat Jamo
    {0x3400, 0x4DBF, I}, {0x4E00, 0x9FFF, I},                       // CJK ideographs
    {0xAC00, 0xD7A3, W},                                            // Hangul syllables
    {0xF900, 0xFAFF, I},                                            // CJK compatibility
    {0xFF10, 0xFF19, W}, {0xFF21, 0xFF3A, W}, {0xFF41, 0xFF5A, W},  // full-width ASCII
    {0xFF66, 0xFF9F, W}, {0xFFA0, 0xFFDC, W},                       // half-width kana/Hangul
    {0x20000, 0x2FA1F, I}, {0x30000, 0x3134F, I},                   // CJK extensions B-G
};

bool IsAsciiWord(uint32_t cp) {
  return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
         cp == '_';
}

}  // namespace

CharClass Classify(uint32_t cp) {
  if (cp < 0x80) return IsAsciiWord(cp) ? CharClass::kWord : CharClass::kSeparator;
  auto it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                             [](uint32_t v, const Range& r) { return v < r.lo; });
  if (it == std::begin(kRanges)) return CharClass::kSeparator;
  --it;
  return cp <= it->hi ? it->cls : CharClass::kSeparator;
}

uint32_t FoldCase(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp < 0x100) return (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ? cp + 32 : cp;
  if (cp < 0x180) {  // Latin Extended-A
    if (cp == 0x130) return 'i';  // capital I with dot above
    if (cp == 0x178) return 0xFF;
    const bool even_upper = (cp <= 0x137 && cp != 0x131) || (cp >= 0x14A && cp <= 0x177);
    const bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
    if (even_upper && cp % 2 == 0) return cp + 1;
    if (odd_upper && cp % 2 == 1) return cp + 1;
    return cp;
  }
  if (cp >= 0x370 && cp < 0x400) {  // Greek
    if (cp == 0x386) return 0x3AC;
    if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
    if (cp == 0x38C) return 0x3CC;
    if (cp == 0x38E || cp == 0x38F) return cp + 63;
    if ((cp >= 0x391 && cp <= 0x3A1) || (cp >= 0x3A3 && cp <= 0x3AB)) return cp + 32;
    if (cp == 0x3C2) return 0x3C3;  // final sigma folds to sigma
    return cp;
  }
  if (cp >= 0x400 && cp < 0x530) {  // Cyrillic + supplement
    if (cp <= 0x40F) return cp + 80;
    if (cp <= 0x42F) return cp + 32;
    if (cp < 0x460) return cp;
    if (cp == 0x4C0) return 0x4CF;
    if (cp >= 0x4C1 && cp <= 0x4CE) return cp % 2 == 1 ? cp + 1 : cp;
    const bool paired = cp <= 0x481 || (cp >= 0x48A && cp <= 0x4BF) || cp >= 0x4D0;
    return (paired && cp % 2 == 0) ? cp + 1 : cp;
  }
  if (cp >= 0x1E00 && cp <= 0x1EFF) {  // Latin Extended Additional
    if (cp == 0x1E9E) return 0xDF;
    const bool paired = cp <= 0x1E95 || cp >= 0x1EA0;
    return (paired && cp % 2 == 0) ? cp + 1 : cp;
  }
  if (cp >= 0xFF10 && cp <= 0xFF19) return '0' + (cp - 0xFF10);
  if (cp >= 0xFF21 && cp <= 0xFF3A) return 'a' + (cp - 0xFF21);
  if (cp >= 0xFF41 && cp <= 0xFF5A) return 'a' + (cp - 0xFF41);
  return cp;
}

}  // namespace chitta::bm25
