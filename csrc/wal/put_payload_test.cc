// csrc/wal/put_payload_test.cc
// EncodePut/ParsePut round trips and edge formats; group commit under threads
// (every acknowledged seqno once, records-per-sync statistics add up).
#include "wal/put_payload.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wal/log.h"

namespace chitta::wal {
namespace {

TEST(PutPayload, SimpleEqualsFullWithDefaults) {
  PutFields f;
  f.id = 1ull << 40;
  f.text = "hello";
  f.created_ms = -5;
  f.written_ms = 1700000000123;
  std::string full, simple;
  EncodePut(f, &full);
  EncodeSimplePut(f.id, f.text, f.created_ms, f.written_ms, &simple);
  EXPECT_EQ(full, simple);
}

TEST(PutPayload, RoundTripsEveryField) {
  PutFields f;
  f.id = ~0ull;
  std::string text(300, 'x');
  f.text = text;
  f.kind = "thought";
  f.created_ms = INT64_MIN;
  f.realm = "r";
  f.session = std::string_view("s");
  f.tags = {"a", "b"};
  f.confidence = 0.25;
  f.strength = 2.0;
  std::string emb(70000, '\1');
  f.embedding = emb;
  f.artifacts = {"x/y"};
  f.written_ms = INT64_MAX;
  std::string buf;
  EncodePut(f, &buf);
  PutView v;
  ASSERT_TRUE(ParsePut(reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), &v));
  EXPECT_EQ(v.id, f.id);
  EXPECT_EQ(v.text, text);
  EXPECT_EQ(v.kind, "thought");
  EXPECT_EQ(v.created_ms, INT64_MIN);
  EXPECT_EQ(*v.realm, "r");
  EXPECT_FALSE(v.harness.has_value());
  EXPECT_EQ(v.tags.size(), 2u);
  EXPECT_EQ(v.confidence, 0.25);
  EXPECT_EQ(v.embedding->size(), emb.size());
  EXPECT_EQ(v.written_ms, INT64_MAX);
  // Every truncation is refused, never read past the end.
  for (size_t n = 0; n < buf.size(); n += 7) {
    EXPECT_FALSE(ParsePut(reinterpret_cast<const uint8_t*>(buf.data()), n, &v)) << n;
  }
}

TEST(PutPayload, MetaMapIsLeftToTheGeneralDecoder) {
  PutFields f;
  f.id = 1;
  f.text = "t";
  f.meta_msgpack = std::string_view("\x81\xa1k\x01", 4);
  std::string buf;
  EncodePut(f, &buf);
  PutView v;
  EXPECT_FALSE(ParsePut(reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), &v));
}

TEST(GroupCommit, EveryAcknowledgedSeqnoOnceAndCounted) {
  char tmpl[] = "/tmp/chitta-gc-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  LogOptions o;
  o.instance_id = 5;
  o.durability = Durability::kFsync;
  std::unique_ptr<Log> log;
  ASSERT_TRUE(Log::Open(tmpl, o, &log).ok());
  constexpr int kThreads = 16, kPer = 30;
  std::vector<std::vector<uint64_t>> seqnos(kThreads);
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      std::string buf;
      for (int i = 0; i < kPer; ++i) {
        buf.clear();
        EncodeSimplePut(t * 1000 + i, "x", 0, 0, &buf);
        uint64_t s = 0;
        if (!log->Append(0, reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), &s).ok()) failures++;
        seqnos[t].push_back(s);
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<uint64_t> all;
  for (auto& run : seqnos) all.insert(run.begin(), run.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPer));
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), static_cast<uint64_t>(kThreads * kPer));
  const SyncStats s = log->sync_stats();
  EXPECT_EQ(s.records, static_cast<uint64_t>(kThreads * kPer));
  uint64_t hist = 0;
  for (uint64_t c : s.per_sync) hist += c;
  EXPECT_EQ(hist, s.syncs);
  ASSERT_TRUE(log->Close().ok());
  std::unique_ptr<Log> reader;
  LogOptions ro;
  ro.read_only = true;
  ASSERT_TRUE(Log::Open(tmpl, ro, &reader).ok());
  ReadBatch batch;
  ASSERT_TRUE(reader->ReadNew(&batch).ok());
  EXPECT_EQ(batch.records.size(), static_cast<size_t>(kThreads * kPer));
  std::string cmd = std::string("rm -rf ") + tmpl;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(PutPayload, ValidUtf8AgreesWithStrictDecoding) {
  EXPECT_TRUE(ValidUtf8(""));
  EXPECT_TRUE(ValidUtf8("plain ascii text, longer than eight bytes"));
  EXPECT_TRUE(ValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
  EXPECT_TRUE(ValidUtf8("\xed\x9f\xbf"));               // U+D7FF
  EXPECT_FALSE(ValidUtf8("\xc0\xaf"));                  // overlong '/'
  EXPECT_FALSE(ValidUtf8("\xc1\xbf"));
  EXPECT_FALSE(ValidUtf8("\xe0\x80\xaf"));              // overlong 3-byte
  EXPECT_FALSE(ValidUtf8("\xf0\x80\x80\xaf"));          // overlong 4-byte
  EXPECT_FALSE(ValidUtf8("\xed\xa0\x80"));              // surrogate U+D800
  EXPECT_FALSE(ValidUtf8("\xf4\x90\x80\x80"));          // above U+10FFFF
  EXPECT_FALSE(ValidUtf8("\xf5\x80\x80\x80"));
  EXPECT_FALSE(ValidUtf8("abcdefgh\x80"));              // stray continuation after the fast path
  EXPECT_FALSE(ValidUtf8("\xc3"));                      // cut short
  EXPECT_FALSE(ValidUtf8("\xe2\x82"));
  EXPECT_FALSE(ValidUtf8("\xe2\x28\xa1"));              // bad continuation
  EXPECT_FALSE(ValidUtf8(std::string_view("\xff", 1)));
}

}  // namespace
}  // namespace chitta::wal
