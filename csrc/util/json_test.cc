// csrc/util/json_test.cc
#include "util/json.h"

#include <gtest/gtest.h>

#include <string>

namespace chitta::json {
namespace {

TEST(Json, ParsesEveryKindOfValue) {
  auto v = Parse(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"y\\z\u00e9\ud83d\ude00"}} )");
  ASSERT_TRUE(v) << "parse failed";
  ASSERT_TRUE(v->is_object());
  const Value* a = v->Find("a");
  ASSERT_TRUE(a && a->is_array());
  ASSERT_EQ(a->items.size(), 5u);
  EXPECT_EQ(a->items[0].number, 1);
  EXPECT_EQ(a->items[1].number, -2500);
  EXPECT_EQ(a->items[1].text, "-2.5e3");
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_EQ(a->items[3].type, Value::Type::kBool);
  EXPECT_FALSE(a->items[3].boolean);
  EXPECT_TRUE(a->items[4].is_null());
  const Value* c = v->Find("b")->Find("c");
  ASSERT_TRUE(c && c->is_string());
  EXPECT_EQ(c->text, "x\"y\\z\xc3\xa9\xf0\x9f\x98\x80");  // é and U+1F600 as UTF-8
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(Json, RejectsMalformedInputWithAnOffset) {
  const char* bad[] = {"",        "{",          "[1,]",       "{\"a\" 1}", "{\"a\":1,}",
                       "01",      "1.",         "1e",         "-",         "tru",
                       "\"abc",   "\"a\\x\"",   "\"\\ud800\"", "\"\\udc00\"", "[1] 2",
                       "\"\x01\"", "nan",       "1e999",      "{1:2}",     "\"\xc3\x28\""};
  for (const char* text : bad) {
    std::string error;
    EXPECT_FALSE(Parse(text, &error)) << text;
    EXPECT_NE(error.find("at byte"), std::string::npos) << text << ": " << error;
  }
}

TEST(Json, NestingIsBounded) {
  std::string deep(kMaxDepth + 2, '[');
  deep += std::string(kMaxDepth + 2, ']');
  std::string error;
  EXPECT_FALSE(Parse(deep, &error));
  EXPECT_NE(error.find("too deep"), std::string::npos);
  std::string ok(kMaxDepth, '[');
  ok += std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok));
}

TEST(Json, QuotingRoundTrips) {
  const std::string tricky = std::string("line\nnext\t\"quoted\" back\\slash \x01 ") + "\xe2\x82\xac";
  std::string doc;
  AppendQuoted(doc, tricky);
  auto v = Parse(doc);
  ASSERT_TRUE(v && v->is_string());
  EXPECT_EQ(v->text, tricky);
}

TEST(Json, DumpKeepsNumbersAndOrder) {
  const std::string doc = R"({"b":[1,2.50,"x\ny"],"a":{"n":18446744073709551615,"t":true,"z":null}})";
  auto v = Parse(doc);
  ASSERT_TRUE(v);
  EXPECT_EQ(Dump(*v), doc);
  auto again = Parse(Dump(*v));
  ASSERT_TRUE(again);
  EXPECT_EQ(Dump(*again), doc);
}

TEST(Json, Utf8Validation) {
  EXPECT_TRUE(ValidUtf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(ValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(ValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(ValidUtf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
  EXPECT_FALSE(ValidUtf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(ValidUtf8("\xff"));
}

TEST(Json, IdsAsStringsOrIntegers) {
  auto v = Parse(R"(["18446744073709551615", 42, "18446744073709551616", "-1", 1.5, "12a", ""])");
  ASSERT_TRUE(v);
  EXPECT_EQ(AsU64(v->items[0]), UINT64_MAX);
  EXPECT_EQ(AsU64(v->items[1]), 42u);
  for (size_t i = 2; i < v->items.size(); ++i) EXPECT_FALSE(AsU64(v->items[i])) << i;
}

}  // namespace
}  // namespace chitta::json
