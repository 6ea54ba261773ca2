// csrc/wal/put_payload.cc
#include "wal/put_payload.h"

#include <cstring>

#include "wal/msgpack_reader.h"

namespace chitta::wal {
namespace {

void Put8(std::string* o, uint8_t b) { o->push_back(static_cast<char>(b)); }

void PutBE(std::string* o, uint64_t v, int bytes) {
  for (int s = (bytes - 1) * 8; s >= 0; s -= 8) Put8(o, static_cast<uint8_t>(v >> s));
}

void PutUint(std::string* o, uint64_t v) {
  if (v < 128) {
    Put8(o, static_cast<uint8_t>(v));
  } else if (v <= 0xff) {
    Put8(o, 0xcc);
    PutBE(o, v, 1);
  } else if (v <= 0xffff) {
    Put8(o, 0xcd);
    PutBE(o, v, 2);
  } else if (v <= 0xffffffffu) {
    Put8(o, 0xce);
    PutBE(o, v, 4);
  } else {
    Put8(o, 0xcf);
    PutBE(o, v, 8);
  }
}

void PutInt(std::string* o, int64_t v) {
  if (v >= 0) return PutUint(o, static_cast<uint64_t>(v));
  const uint64_t u = static_cast<uint64_t>(v);
  if (v >= -32) {
    Put8(o, static_cast<uint8_t>(v));
  } else if (v >= -128) {
    Put8(o, 0xd0);
    PutBE(o, u, 1);
  } else if (v >= -32768) {
    Put8(o, 0xd1);
    PutBE(o, u, 2);
  } else if (v >= INT32_MIN) {
    Put8(o, 0xd2);
    PutBE(o, u, 4);
  } else {
    Put8(o, 0xd3);
    PutBE(o, u, 8);
  }
}

void PutDouble(std::string* o, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  Put8(o, 0xcb);
  PutBE(o, bits, 8);
}

void PutStr(std::string* o, std::string_view s) {
  const size_t n = s.size();
  if (n < 32) {
    Put8(o, static_cast<uint8_t>(0xa0 | n));
  } else if (n <= 0xff) {
    Put8(o, 0xd9);
    PutBE(o, n, 1);
  } else if (n <= 0xffff) {
    Put8(o, 0xda);
    PutBE(o, n, 2);
  } else {
    Put8(o, 0xdb);
    PutBE(o, n, 4);
  }
  o->append(s.data(), n);
}

void PutBin(std::string* o, std::string_view s) {
  const size_t n = s.size();
  if (n <= 0xff) {
    Put8(o, 0xc4);
    PutBE(o, n, 1);
  } else if (n <= 0xffff) {
    Put8(o, 0xc5);
    PutBE(o, n, 2);
  } else {
    Put8(o, 0xc6);
    PutBE(o, n, 4);
  }
  o->append(s.data(), n);
}

void PutArrayHeader(std::string* o, size_t n) {
  if (n < 16) {
    Put8(o, static_cast<uint8_t>(0x90 | n));
  } else if (n <= 0xffff) {
    Put8(o, 0xdc);
    PutBE(o, n, 2);
  } else {
    Put8(o, 0xdd);
    PutBE(o, n, 4);
  }
}

void PutOptStr(std::string* o, const std::optional<std::string_view>& s) {
  if (s) PutStr(o, *s);
  else Put8(o, 0xc0);
}

void PutStrArray(std::string* o, const std::vector<std::string_view>& v) {
  PutArrayHeader(o, v.size());
  for (auto s : v) PutStr(o, s);
}

// ---- reading: wal/msgpack_reader.h ----------------------------------------------
using Reader = MsgpackReader;

}  // namespace

void EncodePut(const PutFields& f, std::string* out) {
  out->reserve(out->size() + 64 + f.text.size() + (f.embedding ? f.embedding->size() : 0) +
               (f.meta_msgpack ? f.meta_msgpack->size() : 0));
  Put8(out, 0x90 | kPutFields);
  PutUint(out, f.id);
  PutStr(out, f.text);
  PutStr(out, f.kind);
  PutInt(out, f.created_ms);
  PutOptStr(out, f.realm);
  PutOptStr(out, f.session);
  PutOptStr(out, f.source_tool);
  PutOptStr(out, f.harness);
  PutStrArray(out, f.tags);
  PutDouble(out, f.confidence);
  PutDouble(out, f.strength);
  if (f.embedding) PutBin(out, *f.embedding);
  else Put8(out, 0xc0);
  if (f.meta_msgpack) out->append(f.meta_msgpack->data(), f.meta_msgpack->size());
  else Put8(out, 0xc0);
  PutStrArray(out, f.artifacts);
  PutInt(out, f.written_ms);
}

void EncodeSimplePut(uint64_t id, std::string_view text, int64_t created_ms, int64_t written_ms,
                     std::string* out) {
  out->reserve(out->size() + 64 + text.size());
  Put8(out, 0x90 | kPutFields);
  PutUint(out, id);
  PutStr(out, text);
  static const char kTail[] = "\xab" "observation";  // fixstr of 11
  out->append(kTail, sizeof(kTail) - 1);
  PutInt(out, created_ms);
  // realm, session, source_tool, harness: nil; tags: []; confidence, strength: 1.0;
  // embedding, meta: nil; artifacts: []
  static const uint8_t kMiddle[] = {0xc0, 0xc0, 0xc0, 0xc0, 0x90, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
                                    0xcb, 0x3f, 0xf0, 0,    0,    0,    0,    0, 0, 0xc0, 0xc0, 0x90};
  out->append(reinterpret_cast<const char*>(kMiddle), sizeof(kMiddle));
  PutInt(out, written_ms);
}

bool ParsePut(const uint8_t* p, size_t n, PutView* out) {
  Reader r{p, p + n};
  uint64_t count;
  if (!r.ArrayHeader(&count) || count < 2 || count > kPutFields) return false;
  *out = PutView{};
  for (uint64_t field = 0; field < count; ++field) {
    bool ok = false;
    switch (field) {
      case 0: ok = r.U64(&out->id); break;
      case 1: ok = r.Str(&out->text); break;
      case 2: ok = r.Str(&out->kind); break;
      case 3: ok = r.I64(&out->created_ms); break;
      case 4: ok = r.OptStr(&out->realm); break;
      case 5: ok = r.OptStr(&out->session); break;
      case 6: ok = r.OptStr(&out->source_tool); break;
      case 7: ok = r.OptStr(&out->harness); break;
      case 8: ok = r.StrArray(&out->tags); break;
      case 9: ok = r.Double(&out->confidence); break;
      case 10: ok = r.Double(&out->strength); break;
      case 11: {
        std::string_view emb;
        ok = r.Nil() || (r.Bin(&emb) && (out->embedding = emb, true));
        break;
      }
      case 12: ok = r.Nil(); break;  // a meta map: the general decoder's job
      case 13: ok = r.StrArray(&out->artifacts); break;
      case 14: ok = r.I64(&out->written_ms); break;
    }
    if (!ok) return false;
  }
  return r.p == r.end;
}

bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    if (end - p >= 8) {  // ASCII fast path: 8 bytes at a time
      uint64_t w;
      std::memcpy(&w, p, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        p += 8;
        continue;
      }
    }
    const uint8_t c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xbf;  // bounds of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c == 0xe0) lo = 0xa0;   // overlong
      if (c == 0xed) hi = 0x9f;   // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c == 0xf0) lo = 0x90;   // overlong
      if (c == 0xf4) hi = 0x8f;   // above U+10FFFF
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) <= need) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (size_t k = 2; k <= need; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
    }
    p += need + 1;
  }
  return true;
}

}  // namespace chitta::wal
