#include "wal/sparse_code_payload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace chitta::wal {
namespace {

// [id, [features...], bin(activations), version] as msgspec writes it (small shapes).
std::string Payload(uint64_t id, const std::vector<uint32_t>& feats, const std::vector<float>& acts,
                    int version /* -1: omitted */) {
  std::string s;
  s.push_back(static_cast<char>(0x90 | (version < 0 ? 3 : 4)));
  if (id < 128) {
    s.push_back(static_cast<char>(id));
  } else {
    s.push_back(static_cast<char>(0xcf));
    for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(id >> (8 * i)));
  }
  s.push_back(static_cast<char>(0x90 | feats.size()));
  for (uint32_t f : feats) {
    s.push_back(static_cast<char>(0xce));
    for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>(f >> (8 * i)));
  }
  s.push_back(static_cast<char>(0xc4));
  s.push_back(static_cast<char>(4 * acts.size()));
  s.append(reinterpret_cast<const char*>(acts.data()), 4 * acts.size());
  if (version >= 0) s.push_back(static_cast<char>(version));
  return s;
}

bool Parse(const std::string& s, uint32_t active, uint64_t* id, std::vector<uint32_t>* f,
           std::vector<float>* a, uint32_t* v) {
  f->assign(active, 0);
  a->assign(active, 0);
  return ParseSparseCode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), active, id, f->data(),
                         a->data(), v);
}

TEST(SparseCodePayload, ReadsTheFields) {
  uint64_t id;
  uint32_t v;
  std::vector<uint32_t> f;
  std::vector<float> a;
  const std::string s = Payload((uint64_t{7} << 32) | 9, {3, 70000, 4294967295u}, {0.5f, -1.0f, 2.25f}, 5);
  ASSERT_TRUE(Parse(s, 3, &id, &f, &a, &v));
  EXPECT_EQ(id, (uint64_t{7} << 32) | 9);
  EXPECT_EQ(f, (std::vector<uint32_t>{3, 70000, 4294967295u}));
  EXPECT_EQ(a, (std::vector<float>{0.5f, -1.0f, 2.25f}));
  EXPECT_EQ(v, 5u);
  // Version omitted: 0.
  ASSERT_TRUE(Parse(Payload(1, {2}, {1.0f}, -1), 1, &id, &f, &a, &v));
  EXPECT_EQ(v, 0u);
}

TEST(SparseCodePayload, RefusesOtherShapes) {
  uint64_t id;
  uint32_t v;
  std::vector<uint32_t> f;
  std::vector<float> a;
  const std::string good = Payload(1, {1, 2}, {1.0f, 2.0f}, 0);
  EXPECT_FALSE(Parse(good, 3, &id, &f, &a, &v));         // another feature count
  EXPECT_FALSE(Parse(good + "x", 2, &id, &f, &a, &v));   // trailing byte
  for (size_t cut = 0; cut < good.size(); ++cut) {       // every truncation
    EXPECT_FALSE(Parse(good.substr(0, cut), 2, &id, &f, &a, &v)) << cut;
  }
  std::string neg = good;
  neg[1] = static_cast<char>(0xff);  // id -1 (negative fixint)
  EXPECT_FALSE(Parse(neg, 2, &id, &f, &a, &v));
  std::string bad_bin = good;
  bad_bin[bad_bin.size() - 10] = 7;  // bin length 7, not 8
  EXPECT_FALSE(Parse(bad_bin, 2, &id, &f, &a, &v));
  std::string big = good;  // a feature of 2^32: 0xcf + 8 bytes instead of 0xce + 4
  big.replace(3, 5, std::string("\xcf\x00\x00\x00\x01\x00\x00\x00\x00", 9));
  EXPECT_FALSE(Parse(big, 2, &id, &f, &a, &v));
  std::string five = good;
  five[0] = static_cast<char>(0x95);
  EXPECT_FALSE(Parse(five + "\x00", 2, &id, &f, &a, &v));  // a fifth field
}

}  // namespace
namespace {

// [id, bin(u16 deltas), bin(u8 levels), float64 scale, version] (op 68, small shapes).
std::string Packed(uint64_t id, const std::vector<uint16_t>& deltas, const std::vector<uint8_t>& levels,
                   double scale, int version /* -1: omitted */) {
  std::string s;
  s.push_back(static_cast<char>(0x90 | (version < 0 ? 4 : 5)));
  s.push_back(static_cast<char>(id));  // id < 128
  s.push_back(static_cast<char>(0xc4));
  s.push_back(static_cast<char>(2 * deltas.size()));
  for (uint16_t d : deltas) {
    s.push_back(static_cast<char>(d & 0xff));
    s.push_back(static_cast<char>(d >> 8));
  }
  s.push_back(static_cast<char>(0xc4));
  s.push_back(static_cast<char>(levels.size()));
  s.append(reinterpret_cast<const char*>(levels.data()), levels.size());
  uint64_t bits;
  std::memcpy(&bits, &scale, 8);
  s.push_back(static_cast<char>(0xcb));
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(bits >> (8 * i)));
  if (version >= 0) s.push_back(static_cast<char>(version));
  return s;
}

bool ParsePacked(const std::string& s, uint32_t active, uint64_t* id, std::vector<uint32_t>* f,
                 std::vector<float>* a, uint32_t* v) {
  f->assign(active, 0);
  a->assign(active, 0);
  return ParsePackedSparseCode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), active, id,
                               f->data(), a->data(), v);
}

TEST(PackedSparseCodePayload, SumsTheDeltasAndScalesTheLevels) {
  uint64_t id;
  uint32_t v;
  std::vector<uint32_t> f;
  std::vector<float> a;
  ASSERT_TRUE(ParsePacked(Packed(9, {3, 65535, 1}, {255, 0, 7}, 0.1, 4), 3, &id, &f, &a, &v));
  EXPECT_EQ(id, 9u);
  EXPECT_EQ(f, (std::vector<uint32_t>{3, 65538, 65539}));
  const float scale = static_cast<float>(0.1);
  EXPECT_EQ(a, (std::vector<float>{255.0f * scale, 0.0f, 7.0f * scale}));
  EXPECT_EQ(v, 4u);
  ASSERT_TRUE(ParsePacked(Packed(1, {0}, {1}, 0.0, -1), 1, &id, &f, &a, &v));  // id 0, scale 0
  EXPECT_EQ(f[0], 0u);
  EXPECT_EQ(a[0], 0.0f);
  EXPECT_EQ(v, 0u);
}

TEST(PackedSparseCodePayload, RefusesWhatValidateRefuses) {
  uint64_t id;
  uint32_t v;
  std::vector<uint32_t> f;
  std::vector<float> a;
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 0}, {1, 2}, 1.0, 0), 2, &id, &f, &a, &v));  // repeated id
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 1}, {1, 2}, -1.0, 0), 2, &id, &f, &a, &v));  // negative
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 1}, {1, 2}, 1e300, 0), 2, &id, &f, &a, &v));  // inf as f32
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 1}, {1, 2}, std::nan(""), 0), 2, &id, &f, &a, &v));
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 1}, {1}, 1.0, 0), 2, &id, &f, &a, &v));  // 2 ids, 1 level
  EXPECT_FALSE(ParsePacked(Packed(1, {3, 1}, {1, 2}, 1.0, 0), 3, &id, &f, &a, &v));  // other width
  std::string s = Packed(1, {3, 1}, {1, 2}, 1.0, 0);
  EXPECT_FALSE(ParsePacked(s + "x", 2, &id, &f, &a, &v));  // trailing bytes
  EXPECT_FALSE(ParsePacked(s.substr(0, s.size() - 1), 2, &id, &f, &a, &v));  // cut short
}

}  // namespace

}  // namespace chitta::wal
