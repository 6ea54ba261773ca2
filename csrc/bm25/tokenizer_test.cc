// csrc/bm25/tokenizer_test.cc
#include "bm25/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bm25/unicode_class.h"

namespace chitta::bm25 {
namespace {

std::vector<std::string> Tok(std::string_view text, bool stem = false, bool stop = true) {
  std::vector<std::string> out;
  EXPECT_TRUE(Tokenize(text, {stem, stop}, &out).ok()) << text;
  return out;
}

using V = std::vector<std::string>;

TEST(Tokenizer, SplitsOnPunctuationAndLowercasesAscii) {
  EXPECT_EQ(Tok("Hello, WORLD! foo-bar/baz"), (V{"hello", "world", "foo", "bar", "baz"}));
}

TEST(Tokenizer, KeepsAlnumAndSnakeCaseWhole) {
  EXPECT_EQ(Tok("port8080 v2 snake_case"), (V{"port8080", "v2", "snake_case"}));
}

TEST(Tokenizer, DotSplitsAndUnderscoresAreTrimmed) {
  EXPECT_EQ(Tok("v2.1 __init__ ___"), (V{"v2", "1", "init"}));
}

TEST(Tokenizer, DropsStopwordsUnlessDisabled) {
  EXPECT_EQ(Tok("The cat is on the mat"), (V{"cat", "mat"}));
  EXPECT_EQ(Tok("The cat", false, false), (V{"the", "cat"}));
  EXPECT_EQ(Tok("don't"), (V{"don"}));  // "t" is a stopword
}

TEST(Tokenizer, StopwordListIsSortedForBinarySearch) {
  for (const char* w : {"a", "the", "with", "s", "t", "such", "into"}) EXPECT_TRUE(IsStopword(w));
  for (const char* w : {"cat", "i", "we", ""}) EXPECT_FALSE(IsStopword(w));
}

TEST(Tokenizer, LowercasesLatin1GreekCyrillic) {
  EXPECT_EQ(Tok("ÜBER Ærø ŁÓDŹ"), (V{"über", "ærø", "łódź"}));
  EXPECT_EQ(Tok("ΣΟΦΟΣ σοφος Άλφα"), (V{"σοφοσ", "σοφοσ", "άλφα"}));
  EXPECT_EQ(Tok("МОСКВА Ёлка"), (V{"москва", "ёлка"}));
}

TEST(Tokenizer, FullWidthFoldsToAscii) { EXPECT_EQ(Tok("ＡＢＣ１２３"), (V{"abc123"})); }

TEST(Tokenizer, CjkIdeographsAreSingleTokensKatakanaRunsWhole) {
  EXPECT_EQ(Tok("東京タワーへ行く"), (V{"東", "京", "タワー", "へ", "行", "く"}));
  EXPECT_EQ(Tok("한국어 텍스트"), (V{"한국어", "텍스트"}));
}

TEST(Tokenizer, CombiningMarksStayInWord) {
  EXPECT_EQ(Tok("cafe\xCC\x81 ok"), (V{"cafe\xCC\x81", "ok"}));  // e + U+0301
}

TEST(Tokenizer, EmojiAndSymbolsSeparate) { EXPECT_EQ(Tok("a\xF0\x9F\x98\x80" "b+c"), (V{"b", "c"})); }

TEST(Tokenizer, InvalidUtf8IsInvalidArgument) {
  const char* bad[] = {"\xFF", "ab\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80x"};
  for (const char* s : bad) {
    std::vector<std::string> out{"keep"};
    Status st = Tokenize(s, {}, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << s;
    EXPECT_EQ(out, (V{"keep"}));  // unchanged on error
  }
}

TEST(Tokenizer, LightStemmerRules) {
  EXPECT_EQ(Tok("studies study studied running cats boxes classes status", true),
            (V{"studi", "studi", "studi", "run", "cat", "box", "class", "status"}));
  EXPECT_EQ(Tok("based base making painted paints stopped falling", true),
            (V{"bas", "bas", "mak", "paint", "paint", "stop", "fall"}));
  EXPECT_EQ(Tok("sing thing speed port8080s", true), (V{"sing", "thing", "speed", "port8080s"}));
}

TEST(UnicodeClass, ClassifiesRanges) {
  EXPECT_EQ(Classify('_'), CharClass::kWord);
  EXPECT_EQ(Classify('.'), CharClass::kSeparator);
  EXPECT_EQ(Classify(0x00D7), CharClass::kSeparator);  // multiplication sign
  EXPECT_EQ(Classify(0x4E2D), CharClass::kIdeograph);
  EXPECT_EQ(Classify(0x20000), CharClass::kIdeograph);
  EXPECT_EQ(Classify(0x0660), CharClass::kWord);  // Arabic-Indic digit zero
  EXPECT_EQ(Classify(0x3000), CharClass::kSeparator);  // ideographic space
  EXPECT_EQ(FoldCase(0x0130), static_cast<uint32_t>('i'));
  EXPECT_EQ(FoldCase(0x0178), 0xFFu);
  EXPECT_EQ(FoldCase(0x1E9E), 0xDFu);
}

}  // namespace
}  // namespace chitta::bm25
