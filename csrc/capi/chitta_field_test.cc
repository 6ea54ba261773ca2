// csrc/capi/chitta_field_test.cc
// The field half of the C API through its C signatures only: round trip,
// replay order across instances, refresh, damage -> codes, bad arguments.
#include "chitta/chitta_field.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "capi/capi_test_util.h"

namespace {

using capi_test::Append;
using capi_test::Collector;

class CapiField : public ::testing::Test {
 protected:
  void SetUp() override { root_ = capi_test::TempDir(); ASSERT_FALSE(root_.empty()); }
  void TearDown() override { capi_test::RemoveTree(root_); }
  // Opens root_ with `o`, or (no options) creates the field there.
  cf_field_t* Open(const cf_options* o = nullptr) {
    cf_options create;
    cf_options_init(&create);
    create.create = 1;
    cf_field_t* f = nullptr;
    EXPECT_EQ(cf_open_ex(root_.c_str(), o ? o : &create, &f), CF_OK) << cf_last_error();
    return f;
  }
  std::string root_;
};

TEST_F(CapiField, RoundTripThroughReopen) {
  cf_field_t* f = Open();
  ASSERT_NE(f, nullptr);
  uint64_t s1 = 0, s2 = 0, s3 = 0;
  ASSERT_EQ(Append(f, 0, "alpha", &s1), CF_OK);
  ASSERT_EQ(Append(f, 2, "", &s2), CF_OK);
  ASSERT_EQ(cf_append(f, 200, nullptr, 0, &s3), CF_OK);
  EXPECT_LT(s1, s2);
  EXPECT_LT(s2, s3);
  uint32_t inst = 0;
  ASSERT_EQ(cf_instance_id(f, &inst), CF_OK);
  EXPECT_NE(inst, 0u);
  uint64_t clock = 0;
  ASSERT_EQ(cf_clock(f, &clock), CF_OK);
  EXPECT_EQ(clock, s3);
  ASSERT_EQ(cf_close_checked(f), CF_OK);

  cf_field_t* g = nullptr;
  ASSERT_EQ(cf_open(root_.c_str(), &g), CF_OK) << cf_last_error();
  Collector c;
  ASSERT_EQ(cf_replay(g, &Collector::Fn, &c), CF_OK);
  ASSERT_EQ(c.recs.size(), 3u);
  EXPECT_EQ(c.recs[0].payload, "alpha");
  EXPECT_EQ(c.recs[0].op, 0);
  EXPECT_EQ(c.recs[0].seqno, s1);
  EXPECT_EQ(c.recs[0].instance, inst);
  EXPECT_EQ(c.recs[1].op, 2);
  EXPECT_EQ(c.recs[1].payload, "");
  EXPECT_EQ(c.recs[2].op, 200);
  uint32_t inst2 = 0;
  ASSERT_EQ(cf_instance_id(g, &inst2), CF_OK);
  EXPECT_NE(inst2, inst);  // a fresh instance per open
  cf_close(g);
}

TEST_F(CapiField, ReplayMergesInstancesBySeqnoThenInstance) {
  cf_field_t* a = Open();
  cf_field_t* b = Open();
  ASSERT_TRUE(a && b);
  Collector seen;
  ASSERT_EQ(Append(a, 1, "a1"), CF_OK);
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &seen), CF_OK);  // b's clock passes a1
  ASSERT_EQ(Append(b, 1, "b1"), CF_OK);
  ASSERT_EQ(cf_refresh(a, &Collector::Fn, &seen), CF_OK);
  ASSERT_EQ(Append(a, 1, "a2"), CF_OK);
  ASSERT_EQ(Append(b, 1, "b2"), CF_OK);
  for (cf_field_t* f : {a, b}) {
    Collector c;
    ASSERT_EQ(cf_replay(f, &Collector::Fn, &c), CF_OK);  // own records included
    ASSERT_EQ(c.recs.size(), 4u);
    EXPECT_EQ(c.recs[0].payload, "a1");  // causal: b1 was written after reading a1
    EXPECT_EQ(c.recs[1].payload, "b1");
    // a2 and b2 may share a seqno (neither saw the other): then the smaller instance id first.
    for (size_t i = 1; i < c.recs.size(); ++i) {
      const auto& p = c.recs[i - 1];
      const auto& q = c.recs[i];
      EXPECT_TRUE(p.seqno < q.seqno || (p.seqno == q.seqno && p.instance < q.instance));
    }
  }
  cf_close(a);
  cf_close(b);
}

TEST_F(CapiField, ReplayStopsWhenCallbackSaysSo) {
  cf_field_t* f = Open();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Append(f, 1, std::to_string(i)), CF_OK);
  Collector c;
  c.stop_after = 2;
  ASSERT_EQ(cf_replay(f, &Collector::Fn, &c), CF_OK);
  EXPECT_EQ(c.recs.size(), 2u);
  cf_close(f);
}

TEST_F(CapiField, RefreshGivesOnlyUnseenRecordsOfOthers) {
  cf_field_t* a = Open();
  cf_field_t* b = Open();
  ASSERT_EQ(Append(a, 1, "x"), CF_OK);
  ASSERT_EQ(Append(a, 1, "y"), CF_OK);
  ASSERT_EQ(Append(b, 1, "own"), CF_OK);
  Collector c;
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &c), CF_OK);
  ASSERT_EQ(c.recs.size(), 2u);  // not b's own append
  EXPECT_EQ(c.recs[0].payload, "x");
  Collector again;
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &again), CF_OK);
  EXPECT_TRUE(again.recs.empty());
  ASSERT_EQ(Append(a, 1, "z"), CF_OK);
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &again), CF_OK);
  ASSERT_EQ(again.recs.size(), 1u);
  EXPECT_EQ(again.recs[0].payload, "z");
  cf_close(a);
  cf_close(b);
}

TEST_F(CapiField, RefreshStoppedEarlyDeliversTheSameRecordsAgain) {
  cf_field_t* a = Open();
  cf_field_t* b = Open();
  for (const char* s : {"p", "q", "r"}) ASSERT_EQ(Append(a, 1, s), CF_OK);
  Collector stopped;
  stopped.stop_after = 1;
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &stopped), CF_OK);
  EXPECT_EQ(stopped.recs.size(), 1u);
  Collector all;
  ASSERT_EQ(cf_refresh(b, &Collector::Fn, &all), CF_OK);
  ASSERT_EQ(all.recs.size(), 3u);
  EXPECT_EQ(all.recs[0].payload, "p");
  cf_close(a);
  cf_close(b);
}

TEST_F(CapiField, FlippedPayloadByteIsCrcMismatch) {
  cf_field_t* f = Open();
  ASSERT_EQ(Append(f, 1, "first record"), CF_OK);
  ASSERT_EQ(Append(f, 1, "second record"), CF_OK);
  cf_close(f);
  auto segs = capi_test::Segments(root_);
  ASSERT_EQ(segs.size(), 1u);
  capi_test::XorByte(segs[0], 32 + 17 + 2, 0x40);  // a payload byte of the first record

  // Opening reads no records; the first read reports the damage, naming where.
  cf_field_t* g = Open();
  ASSERT_NE(g, nullptr);
  Collector none;
  EXPECT_EQ(cf_replay(g, &Collector::Fn, &none), CF_ECRC);
  EXPECT_NE(std::strstr(cf_last_error(), ".seg"), nullptr) << cf_last_error();
  EXPECT_NE(std::strstr(cf_last_error(), "offset 32"), nullptr) << cf_last_error();
  EXPECT_EQ(cf_refresh(g, &Collector::Fn, &none), CF_ECRC);
  EXPECT_TRUE(none.recs.empty());  // nothing delivered from a damaged read
  cf_close(g);

  cf_verify_report r;
  EXPECT_EQ(cf_verify(root_.c_str(), &r), CF_ECRC);
  EXPECT_EQ(r.damages, 1u);
  EXPECT_EQ(r.records, 1u);
  EXPECT_EQ(r.first_status, CF_ECRC);
  EXPECT_EQ(r.first_offset, 32u);
  EXPECT_NE(std::strstr(segs[0].c_str(), r.first_segment), nullptr);

  cf_options o;
  cf_options_init(&o);
  o.salvage = 1;
  cf_field_t* s = Open(&o);
  ASSERT_NE(s, nullptr);
  Collector c;
  ASSERT_EQ(cf_replay(s, &Collector::Fn, &c), CF_OK);
  ASSERT_EQ(c.recs.size(), 1u);
  EXPECT_EQ(c.recs[0].payload, "second record");
  cf_close(s);
}

TEST_F(CapiField, BadMagicIsCorruptAndTornTailIsNot) {
  cf_field_t* f = Open();
  ASSERT_EQ(Append(f, 1, "kept"), CF_OK);
  cf_close(f);
  auto segs = capi_test::Segments(root_);
  ASSERT_EQ(segs.size(), 1u);
  capi_test::AppendBytes(segs[0], std::string("\x30\x00\x00", 3));  // an unfinished record
  cf_verify_report r;
  EXPECT_EQ(cf_verify(root_.c_str(), &r), CF_OK) << cf_last_error();
  EXPECT_EQ(r.torn_tails, 1u);
  EXPECT_EQ(r.damages, 0u);
  EXPECT_EQ(r.records, 1u);
  EXPECT_STREQ(cf_last_error(), "");

  capi_test::XorByte(segs[0], 0, 0xff);
  EXPECT_EQ(cf_verify(root_.c_str(), &r), CF_ECORRUPT);
  cf_field_t* g = Open();
  Collector c;
  EXPECT_EQ(cf_refresh(g, &Collector::Fn, &c), CF_ECORRUPT) << cf_last_error();
  cf_close(g);
}

TEST_F(CapiField, NotAFieldAndReadOnlyAndLocked) {
  cf_verify_report r;
  EXPECT_EQ(cf_verify(root_.c_str(), &r), CF_ENOTFOUND);
  cf_field_t* none = nullptr;  // cf_open never creates: a mistyped path stays no field
  const std::string typo = root_ + "/typo";
  EXPECT_EQ(cf_open(typo.c_str(), &none), CF_ENOTFOUND);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(std::strstr(cf_last_error(), "create"), nullptr) << cf_last_error();
  EXPECT_NE(access(typo.c_str(), F_OK), 0);
  EXPECT_EQ(cf_open(root_.c_str(), &none), CF_ENOTFOUND);
  cf_options o;
  cf_options_init(&o);
  o.create = 0;
  cf_field_t* f = nullptr;
  EXPECT_EQ(cf_open_ex(root_.c_str(), &o, &f), CF_ENOTFOUND);

  cf_field_t* w = Open();
  uint32_t inst = 0;
  ASSERT_EQ(cf_instance_id(w, &inst), CF_OK);
  cf_options_init(&o);
  o.instance_id = inst;
  EXPECT_EQ(cf_open_ex(root_.c_str(), &o, &f), CF_ELOCKED) << cf_last_error();
  ASSERT_EQ(Append(w, 3, "w"), CF_OK);

  cf_options_init(&o);
  o.read_only = 1;
  cf_field_t* ro = Open(&o);
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(Append(ro, 1, "nope"), CF_EINVAL);
  Collector c;
  ASSERT_EQ(cf_replay(ro, &Collector::Fn, &c), CF_OK);
  EXPECT_EQ(c.recs.size(), 1u);
  cf_close(ro);
  cf_close(w);
}

int Nop(void*, uint64_t, uint32_t, uint8_t, const uint8_t*, size_t) { return 0; }

TEST_F(CapiField, NullAndInvalidArgumentsAreEinval) {
  cf_field_t* f = nullptr;
  EXPECT_EQ(cf_open(nullptr, &f), CF_EINVAL);
  EXPECT_NE(std::strlen(cf_last_error()), 0u);
  EXPECT_EQ(cf_open("", &f), CF_EINVAL);
  EXPECT_EQ(cf_open(root_.c_str(), nullptr), CF_EINVAL);
  cf_options o;
  cf_options_init(&o);
  o.durability = 7;
  EXPECT_EQ(cf_open_ex(root_.c_str(), &o, &f), CF_EINVAL);
  cf_options_init(&o);
  o.segment_bytes = 10;
  EXPECT_EQ(cf_open_ex(root_.c_str(), &o, &f), CF_EINVAL);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(cf_open("/proc/self/status", &f), CF_EINVAL);  // a file, not a directory

  uint32_t u32 = 0;
  uint64_t u64 = 0;
  EXPECT_EQ(cf_instance_id(nullptr, &u32), CF_EINVAL);
  EXPECT_EQ(cf_clock(nullptr, &u64), CF_EINVAL);
  EXPECT_EQ(cf_append(nullptr, 0, nullptr, 0, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_flush(nullptr), CF_EINVAL);
  EXPECT_EQ(cf_sync(nullptr), CF_EINVAL);
  EXPECT_EQ(cf_replay(nullptr, &Nop, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_refresh(nullptr, &Nop, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_close_checked(nullptr), CF_EINVAL);
  cf_close(nullptr);
  EXPECT_EQ(cf_verify(nullptr, nullptr), CF_EINVAL);
  cf_verify_report r;
  EXPECT_EQ(cf_verify(nullptr, &r), CF_EINVAL);
  EXPECT_EQ(cf_verify(root_.c_str(), nullptr), CF_EINVAL);
  cf_options_init(nullptr);

  f = Open();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(cf_instance_id(f, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_clock(f, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_append(f, 1, nullptr, 4, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_replay(f, nullptr, nullptr), CF_EINVAL);
  EXPECT_EQ(cf_refresh(f, nullptr, nullptr), CF_EINVAL);
  std::string big((64u << 20) + 1, 'x');
  EXPECT_EQ(Append(f, 1, big), CF_EINVAL);
  Collector c;
  ASSERT_EQ(cf_replay(f, &Collector::Fn, &c), CF_OK);
  EXPECT_TRUE(c.recs.empty());  // nothing written by the refused calls
  EXPECT_EQ(cf_flush(f), CF_OK);
  EXPECT_EQ(cf_sync(f), CF_OK);
  EXPECT_STREQ(cf_last_error(), "");
  cf_close(f);
}

TEST(CapiMisc, StatusNamesAndVersion) {
  EXPECT_EQ(CF_OK, 0);
  EXPECT_EQ(cf_abi_version(), CF_ABI_VERSION);
  EXPECT_STREQ(cf_status_name(CF_ECRC), "CF_ECRC");
  EXPECT_STREQ(cf_status_name(CF_EINTERNAL), "CF_EINTERNAL");
  EXPECT_STREQ(cf_status_name(static_cast<cf_status>(99)), "CF_UNKNOWN");
}

TEST_F(CapiField, BufferedRecordsAppearAfterFlush) {
  cf_options o;
  cf_options_init(&o);
  o.durability = CF_DURABILITY_BUFFERED;
  o.create = 1;
  cf_field_t* w = Open(&o);
  cf_field_t* r = Open();
  ASSERT_EQ(Append(w, 1, "buffered"), CF_OK);
  Collector c;
  ASSERT_EQ(cf_refresh(r, &Collector::Fn, &c), CF_OK);
  EXPECT_TRUE(c.recs.empty());
  ASSERT_EQ(cf_flush(w), CF_OK);
  ASSERT_EQ(cf_refresh(r, &Collector::Fn, &c), CF_OK);
  ASSERT_EQ(c.recs.size(), 1u);
  EXPECT_EQ(cf_close_checked(w), CF_OK);
  cf_close(r);
}

}  // namespace
