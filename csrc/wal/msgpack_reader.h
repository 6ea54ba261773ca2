// csrc/wal/msgpack_reader.h
// A bounds-checked reader of the msgpack shapes op payloads use (ints of
// every width, str, bin, arrays, float64/float32, nil). Each call either
// consumes one well-formed value and returns true, or returns false: callers
// treat false as "not the shape I parse" and hand the record to the general
// (msgspec) decoder, which has the last word on damage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace chitta::wal {

struct MsgpackReader {
  const uint8_t* p;
  const uint8_t* end;

  bool Take(size_t n, const uint8_t** at) {
    if (static_cast<size_t>(end - p) < n) return false;
    *at = p;
    p += n;
    return true;
  }
  bool BE(size_t n, uint64_t* v) {
    const uint8_t* at;
    if (!Take(n, &at)) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i) x = (x << 8) | at[i];
    *v = x;
    return true;
  }
  bool Byte(uint8_t* b) {
    if (p == end) return false;
    *b = *p++;
    return true;
  }
  bool Peek(uint8_t* b) const {
    if (p == end) return false;
    *b = *p;
    return true;
  }
  // Any msgpack integer as a signed 128-bit-free pair: (negative?, magnitude bits).
  bool Int(bool* negative, uint64_t* v) {
    uint8_t t;
    if (!Byte(&t)) return false;
    *negative = false;
    if (t < 0x80) {
      *v = t;
      return true;
    }
    if (t >= 0xe0) {
      *negative = true;
      *v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(t)));
      return true;
    }
    uint64_t x;
    switch (t) {
      case 0xcc: return BE(1, v);
      case 0xcd: return BE(2, v);
      case 0xce: return BE(4, v);
      case 0xcf: return BE(8, v);
      case 0xd0:
        if (!BE(1, &x)) return false;
        *v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(x)));
        break;
      case 0xd1:
        if (!BE(2, &x)) return false;
        *v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(x)));
        break;
      case 0xd2:
        if (!BE(4, &x)) return false;
        *v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(x)));
        break;
      case 0xd3:
        if (!BE(8, &x)) return false;
        *v = x;
        break;
      default: return false;
    }
    *negative = static_cast<int64_t>(*v) < 0;
    return true;
  }
  bool U64(uint64_t* v) {
    bool neg;
    return Int(&neg, v) && !neg;
  }
  bool I64(int64_t* v) {
    bool neg;
    uint64_t u;
    if (!Int(&neg, &u)) return false;
    if (!neg && u > static_cast<uint64_t>(INT64_MAX)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Str(std::string_view* s) {
    uint8_t t;
    if (!Byte(&t)) return false;
    uint64_t n;
    if ((t & 0xe0) == 0xa0) n = t & 0x1f;
    else if (t == 0xd9) { if (!BE(1, &n)) return false; }
    else if (t == 0xda) { if (!BE(2, &n)) return false; }
    else if (t == 0xdb) { if (!BE(4, &n)) return false; }
    else return false;
    const uint8_t* at;
    if (!Take(n, &at)) return false;
    *s = std::string_view(reinterpret_cast<const char*>(at), n);
    return true;
  }
  bool Nil() {
    uint8_t t;
    if (Peek(&t) && t == 0xc0) {
      ++p;
      return true;
    }
    return false;
  }
  bool OptStr(std::optional<std::string_view>* s) {
    if (Nil()) {
      s->reset();
      return true;
    }
    std::string_view v;
    if (!Str(&v)) return false;
    *s = v;
    return true;
  }
  bool Bin(std::string_view* s) {
    uint8_t t;
    if (!Byte(&t)) return false;
    uint64_t n;
    if (t == 0xc4) { if (!BE(1, &n)) return false; }
    else if (t == 0xc5) { if (!BE(2, &n)) return false; }
    else if (t == 0xc6) { if (!BE(4, &n)) return false; }
    else return false;
    const uint8_t* at;
    if (!Take(n, &at)) return false;
    *s = std::string_view(reinterpret_cast<const char*>(at), n);
    return true;
  }
  bool ArrayHeader(uint64_t* n) {
    uint8_t t;
    if (!Byte(&t)) return false;
    if ((t & 0xf0) == 0x90) {
      *n = t & 0x0f;
      return true;
    }
    if (t == 0xdc) return BE(2, n);
    if (t == 0xdd) return BE(4, n);
    return false;
  }
  bool StrArray(std::vector<std::string_view>* v) {
    uint64_t n;
    if (!ArrayHeader(&n) || n > static_cast<uint64_t>(end - p)) return false;
    v->clear();
    v->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view s;
      if (!Str(&s)) return false;
      v->push_back(s);
    }
    return true;
  }
  bool Double(double* d) {
    uint8_t t;
    if (!Byte(&t)) return false;
    uint64_t bits;
    if (t == 0xcb) {
      if (!BE(8, &bits)) return false;
      std::memcpy(d, &bits, 8);
      return true;
    }
    if (t == 0xca) {
      if (!BE(4, &bits)) return false;
      const uint32_t b32 = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b32, 4);
      *d = f;
      return true;
    }
    return false;  // ints in float fields: the general decoder converts them
  }
  // Skips one complete value of any type (containers at most kMaxDepth deep).
  static constexpr int kMaxDepth = 64;
  bool SkipValue(int depth) {
    if (depth > kMaxDepth) return false;
    uint8_t t;
    if (!Byte(&t)) return false;
    const uint8_t* at;
    uint64_t n = 0;
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) return true;  // fixint, nil, bool
    if ((t & 0xe0) == 0xa0) return Take(t & 0x1f, &at);                           // fixstr
    if ((t & 0xf0) == 0x90) return SkipItems(t & 0x0f, depth);                    // fixarray
    if ((t & 0xf0) == 0x80) return SkipItems(uint64_t{2} * (t & 0x0f), depth);    // fixmap
    switch (t) {
      case 0xcc: case 0xd0: return Take(1, &at);
      case 0xcd: case 0xd1: return Take(2, &at);
      case 0xce: case 0xd2: case 0xca: return Take(4, &at);
      case 0xcf: case 0xd3: case 0xcb: return Take(8, &at);
      case 0xd4: return Take(2, &at);  // fixext 1..16: type byte + data
      case 0xd5: return Take(3, &at);
      case 0xd6: return Take(5, &at);
      case 0xd7: return Take(9, &at);
      case 0xd8: return Take(17, &at);
      case 0xc4: case 0xd9: return BE(1, &n) && Take(n, &at);
      case 0xc5: case 0xda: return BE(2, &n) && Take(n, &at);
      case 0xc6: case 0xdb: return BE(4, &n) && Take(n, &at);
      case 0xc7: return BE(1, &n) && Take(n + 1, &at);  // ext 8/16/32: length, type, data
      case 0xc8: return BE(2, &n) && Take(n + 1, &at);
      case 0xc9: return BE(4, &n) && Take(n + 1, &at);
      case 0xdc: return BE(2, &n) && SkipItems(n, depth);
      case 0xdd: return BE(4, &n) && SkipItems(n, depth);
      case 0xde: return BE(2, &n) && SkipItems(2 * n, depth);
      case 0xdf: return BE(4, &n) && SkipItems(2 * n, depth);
      default: return false;  // 0xc1 is never used
    }
  }
  bool SkipItems(uint64_t n, int depth) {
    if (n > static_cast<uint64_t>(end - p)) return false;  // each item takes at least one byte
    for (uint64_t i = 0; i < n; ++i) {
      if (!SkipValue(depth + 1)) return false;
    }
    return true;
  }
};

}  // namespace chitta::wal
