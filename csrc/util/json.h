// csrc/util/json.h
// A small strict JSON (RFC 8259) reader and the string quoting of its writer,
// for the C API's memory-level calls, which talk to the daemon's JSON dialect
// (docs/DAEMON.md). Input is checked before use: nesting at most kMaxDepth,
// strings valid UTF-8, numbers finite; anything else is an error naming the
// byte offset. Numbers keep their text, so an integer beyond 2^53 loses nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chitta::json {

inline constexpr int kMaxDepth = 128;

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;     // kNumber
  std::string text;      // kString: the decoded string; kNumber: the literal as written
  std::vector<Value> items;                           // kArray
  std::vector<std::pair<std::string, Value>> members;  // kObject, in document order

  bool is_null() const { return type == Type::kNull; }
  bool is_object() const { return type == Type::kObject; }
  bool is_string() const { return type == Type::kString; }
  bool is_number() const { return type == Type::kNumber; }
  bool is_array() const { return type == Type::kArray; }
  // The member named key (the last one if repeated), or nullptr.
  const Value* Find(std::string_view key) const;
};

// Parses exactly one JSON value (surrounding whitespace allowed). On failure
// returns nullopt and sets *error (if not null) to a text with the offset.
std::optional<Value> Parse(std::string_view text, std::string* error = nullptr);

// True if s is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool ValidUtf8(std::string_view s);

// Appends s as a JSON string literal (quotes included; control characters escaped).
void AppendQuoted(std::string& out, std::string_view s);

// v as JSON text: numbers as they were written, strings quoted, members in order.
void Dump(const Value& v, std::string& out);
inline std::string Dump(const Value& v) {
  std::string out;
  Dump(v, out);
  return out;
}

// An id as the daemon writes it: a decimal string or a non-negative integer
// literal, up to 2^64 - 1. nullopt for anything else.
std::optional<uint64_t> AsU64(const Value& v);

}  // namespace chitta::json
