// csrc/util/json.cc
#include "util/json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace chitta::json {
namespace {

class Reader {
 public:
  Reader(std::string_view s, std::string* error) : s_(s), error_(error) {}

  std::optional<Value> Document() {
    Value v;
    SkipSpace();
    if (!ReadValue(v, 0)) return std::nullopt;
    SkipSpace();
    if (pos_ != s_.size()) return Fail("unexpected text after the value");
    return v;
  }

 private:
  std::nullopt_t Fail(const char* what) {
    if (error_ && error_->empty()) *error_ = std::string(what) + " at byte " + std::to_string(pos_);
    return std::nullopt;
  }
  bool Bad(const char* what) {
    Fail(what);
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Bad("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ReadValue(Value& v, int depth) {
    if (depth > kMaxDepth) return Bad("nesting too deep");
    if (pos_ >= s_.size()) return Bad("unexpected end of input");
    switch (s_[pos_]) {
      case 'n':
        v.type = Value::Type::kNull;
        return Literal("null");
      case 't':
        v.type = Value::Type::kBool;
        v.boolean = true;
        return Literal("true");
      case 'f':
        v.type = Value::Type::kBool;
        return Literal("false");
      case '"':
        v.type = Value::Type::kString;
        return ReadString(v.text);
      case '[':
        v.type = Value::Type::kArray;
        return ReadArray(v, depth);
      case '{':
        v.type = Value::Type::kObject;
        return ReadObject(v, depth);
      default:
        v.type = Value::Type::kNumber;
        return ReadNumber(v);
    }
  }

  bool ReadArray(Value& v, int depth) {
    ++pos_;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      SkipSpace();
      v.items.emplace_back();
      if (!ReadValue(v.items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ >= s_.size()) return Bad("unterminated array");
      if (s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',') return Bad("expected ',' or ']' in an array");
      ++pos_;
    }
  }

  bool ReadObject(Value& v, int depth) {
    ++pos_;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Bad("expected a member name");
      std::string key;
      if (!ReadString(key)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Bad("expected ':' after a member name");
      ++pos_;
      SkipSpace();
      v.members.emplace_back(std::move(key), Value{});
      if (!ReadValue(v.members.back().second, depth + 1)) return false;
      SkipSpace();
      if (pos_ >= s_.size()) return Bad("unterminated object");
      if (s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',') return Bad("expected ',' or '}' in an object");
      ++pos_;
    }
  }

  bool Hex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return Bad("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') out |= c - '0';
      else if (c >= 'a' && c <= 'f') out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') out |= c - 'A' + 10;
      else return Bad("bad hex digit in a \\u escape");
    }
    return true;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool ReadString(std::string& out) {
    ++pos_;  // the opening quote
    const size_t start = pos_;
    for (;;) {
      if (pos_ >= s_.size()) return Bad("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) return Bad("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      if (++pos_ >= s_.size()) return Bad("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
            uint32_t lo;
            if (s_.substr(pos_, 2) != "\\u") return Bad("lone surrogate in a \\u escape");
            pos_ += 2;
            if (!Hex4(lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return Bad("lone surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Bad("lone surrogate in a \\u escape");
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Bad("unknown escape in a string");
      }
    }
    if (!ValidUtf8(out)) {
      pos_ = start;
      return Bad("a string that is not valid UTF-8");
    }
    return true;
  }

  bool ReadNumber(Value& v) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size()) return Bad("invalid number");
    if (s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return Bad("invalid value");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return Bad("digits expected after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Bad("digits expected in an exponent");
    }
    v.text.assign(s_.substr(start, pos_ - start));
    errno = 0;
    v.number = std::strtod(v.text.c_str(), nullptr);
    if (!std::isfinite(v.number)) return Bad("number out of range");
    return true;
  }

  std::string_view s_;
  std::string* error_;
  size_t pos_ = 0;
};

}  // namespace

const Value* Value::Find(std::string_view key) const {
  const Value* found = nullptr;
  for (const auto& [k, v] : members) {
    if (k == key) found = &v;
  }
  return found;
}

std::optional<Value> Parse(std::string_view text, std::string* error) {
  if (error) error->clear();
  return Reader(text, error).Document();
}

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return false;
    if (i + len > s.size()) return false;
    for (int k = 1; k < len; ++k) {
      const unsigned char t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3F);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

void AppendQuoted(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void Dump(const Value& v, std::string& out) {
  switch (v.type) {
    case Value::Type::kNull: out += "null"; return;
    case Value::Type::kBool: out += v.boolean ? "true" : "false"; return;
    case Value::Type::kNumber: out += v.text; return;
    case Value::Type::kString: AppendQuoted(out, v.text); return;
    case Value::Type::kArray:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        Dump(v.items[i], out);
      }
      out += ']';
      return;
    case Value::Type::kObject:
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out += ',';
        AppendQuoted(out, v.members[i].first);
        out += ':';
        Dump(v.members[i].second, out);
      }
      out += '}';
      return;
  }
}

std::optional<uint64_t> AsU64(const Value& v) {
  std::string_view t;
  if (v.is_string() || v.is_number()) t = v.text;
  if (t.empty() || t.size() > 20) return std::nullopt;
  uint64_t out = 0;
  for (const char c : t) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (out > (UINT64_MAX - d) / 10) return std::nullopt;
    out = out * 10 + d;
  }
  return out;
}

}  // namespace chitta::json
