// csrc/bm25/tokenizer.cc
// UTF-8 decoding, token splitting, stopwords and the light stemmer. The rules
// are stated in tokenizer.h; tokenizer_test.cc checks each of them.
#include "bm25/tokenizer.h"

#include <algorithm>
#include <iterator>

#include "bm25/unicode_class.h"

namespace chitta::bm25 {
namespace {

// Sorted for binary search: Lucene's English stop set plus "s" and "t".
constexpr std::string_view kStopwords[] = {
    "a",    "an",    "and",  "are",   "as",    "at",   "be",   "but",  "by",
    "for",  "if",    "in",   "into",  "is",    "it",   "no",   "not",  "of",
    "on",   "or",    "s",    "such",  "t",     "that", "the",  "their", "then",
    "there", "these", "they", "this", "to",    "was",  "will", "with",
};

// Decodes one code point at text[*pos]; advances *pos. False on invalid UTF-8.
bool DecodeOne(std::string_view text, size_t* pos, uint32_t* cp) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = *pos;
  const unsigned char c0 = s[i];
  if (c0 < 0x80) {
    *cp = c0;
    *pos = i + 1;
    return true;
  }
  int len;
  uint32_t min;
  uint32_t v;
  if ((c0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, v = c0 & 0x1F;
  } else if ((c0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, v = c0 & 0x0F;
  } else if ((c0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, v = c0 & 0x07;
  } else {
    return false;  // stray continuation byte or 0xF8..0xFF
  }
  if (i + len > n) return false;
  for (int k = 1; k < len; ++k) {
    const unsigned char c = s[i + k];
    if ((c & 0xC0) != 0x80) return false;
    v = (v << 6) | (c & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
  *cp = v;
  *pos = i + len;
  return true;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsVowel(char c) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Strips `n` letters of a verb suffix when the rest keeps >= 3 letters and a
// vowel; undoubles a final doubled consonant (running -> run).
bool StripVerbSuffix(std::string* t, size_t n) {
  const size_t keep = t->size() - n;
  if (keep < 3) return false;
  if (!std::any_of(t->begin(), t->begin() + keep, IsVowel)) return false;
  t->resize(keep);
  const char last = t->back();
  if (keep >= 2 && last == (*t)[keep - 2] && !IsVowel(last) && last != 'l' && last != 's' &&
      last != 'z') {
    t->pop_back();
  }
  return true;
}

class TokenSink {
 public:
  TokenSink(const TokenizerOptions& options, std::vector<std::string>* out)
      : options_(options), out_(out) {}

  void Flush(std::string* token) {
    size_t lo = 0;
    size_t hi = token->size();
    while (lo < hi && (*token)[lo] == '_') ++lo;
    while (hi > lo && (*token)[hi - 1] == '_') --hi;
    if (lo == hi) {
      token->clear();
      return;
    }
    std::string t = token->substr(lo, hi - lo);
    token->clear();
    if (options_.stopwords && IsStopword(t)) return;
    if (options_.stem) LightStem(&t);
    out_->push_back(std::move(t));
  }

 private:
  const TokenizerOptions& options_;
  std::vector<std::string>* out_;
};

}  // namespace

bool IsStopword(std::string_view token) {
  return std::binary_search(std::begin(kStopwords), std::end(kStopwords), token);
}

void LightStem(std::string* token) {
  std::string& t = *token;
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    return;
  }
  // 1. Plurals.
  if (EndsWith(t, "ies") && t.size() >= 5) {
    t.resize(t.size() - 2);  // studies -> studi
  } else if (EndsWith(t, "sses")) {
    t.resize(t.size() - 2);  // classes -> class
  } else if (t.size() >= 5 && (EndsWith(t, "xes") || EndsWith(t, "ches") || EndsWith(t, "shes"))) {
    t.resize(t.size() - 2);  // boxes -> box, matches -> match
  } else if (t.size() >= 4 && t.back() == 's' && !EndsWith(t, "ss") && !EndsWith(t, "us") &&
             !EndsWith(t, "is")) {
    t.pop_back();  // cats -> cat
  }
  // 2. Verb suffixes.
  if (EndsWith(t, "ing")) {
    StripVerbSuffix(&t, 3);
  } else if (EndsWith(t, "ed") && t.size() >= 3 && t[t.size() - 3] != 'e') {
    StripVerbSuffix(&t, 2);
  }
  // 3. Final y after a consonant -> i; final e (not after e) dropped.
  if (t.size() >= 4 && t.back() == 'y' && !IsVowel(t[t.size() - 2])) {
    t.back() = 'i';
  } else if (t.size() >= 4 && t.back() == 'e' && t[t.size() - 2] != 'e') {
    t.pop_back();
  }
}

Status Tokenize(std::string_view text, const TokenizerOptions& options,
                std::vector<std::string>* out) {
  const size_t first_new = out->size();
  TokenSink sink(options, out);
  std::string current;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t at = pos;
    uint32_t cp;
    if (!DecodeOne(text, &pos, &cp)) {
      out->resize(first_new);
      return Status::InvalidArgument("invalid UTF-8 at byte offset " + std::to_string(at));
    }
    switch (Classify(cp)) {
      case CharClass::kWord:
        AppendUtf8(FoldCase(cp), &current);
        break;
      case CharClass::kIdeograph:
        sink.Flush(&current);
        AppendUtf8(cp, &current);
        sink.Flush(&current);
        break;
      case CharClass::kSeparator:
        sink.Flush(&current);
        break;
    }
  }
  sink.Flush(&current);
  return Status::OK();
}

}  // namespace chitta::bm25
