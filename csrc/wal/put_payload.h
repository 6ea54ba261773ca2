// csrc/wal/put_payload.h
// The PutPayload op's msgpack payload (docs/OPS.md, op 0) without Python:
// EncodePut writes exactly the bytes chitta.ops.encode(PutPayload(...)) writes
// (msgspec, order="deterministic": smallest int formats, float64, str8..32,
// bin8..32, fields in declaration order); ParsePut reads the common shapes of
// that array into views. Both serve the hot paths (Field.remember, replay);
// the Python codec stays the reference, and tests compare the two byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chitta::wal {

constexpr size_t kPutFields = 15;  // PutPayload fields in format order

// One PutPayload, field for field (UTF-8 views; the caller owns the bytes).
struct PutFields {
  uint64_t id = 0;
  std::string_view text;
  std::string_view kind = "observation";
  int64_t created_ms = 0;
  std::optional<std::string_view> realm, session, source_tool, harness;
  std::vector<std::string_view> tags;
  double confidence = 1.0;
  double strength = 1.0;
  std::optional<std::string_view> embedding;  // little-endian float32 bytes
  std::optional<std::string_view> meta_msgpack;  // an already encoded msgpack map, spliced as is
  std::vector<std::string_view> artifacts;
  int64_t written_ms = 0;
};

// Appends the payload of `f` to *out.
void EncodePut(const PutFields& f, std::string* out);

// The payload with every field but these at its default.
void EncodeSimplePut(uint64_t id, std::string_view text, int64_t created_ms, int64_t written_ms,
                     std::string* out);

// A parsed payload. Strings point into the parsed buffer. `meta` is never set:
// ParsePut refuses payloads whose meta is not nil (the caller decodes those
// the general way).
struct PutView {
  uint64_t id = 0;
  std::string_view text;
  std::string_view kind = "observation";
  int64_t created_ms = 0;
  std::optional<std::string_view> realm, session, source_tool, harness;
  std::vector<std::string_view> tags;
  double confidence = 1.0;
  double strength = 1.0;
  std::optional<std::string_view> embedding;
  std::vector<std::string_view> artifacts;
  int64_t written_ms = 0;
};

// True when [p, p+n) is exactly one msgpack array of 2..15 elements whose
// types are the schema's own (uint id, str text, ..., nil meta); trailing
// fields missing take their defaults. False for anything else - damage, an
// int where a float belongs, a meta map, extra fields of a newer writer - so
// the caller falls back to the general decoder, which has the last word.
// Text validity (UTF-8) is not checked here.
bool ParsePut(const uint8_t* p, size_t n, PutView* out);

// True when s is well-formed UTF-8 as Python's strict decoder (and msgspec)
// take it: no overlong forms, no surrogates (U+D800..DFFF), nothing above U+10FFFF.
bool ValidUtf8(std::string_view s);

}  // namespace chitta::wal
