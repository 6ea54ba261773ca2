// csrc/wal/segment_writer_test.cc
// Group commit under stress: many appenders on a small segment size (every
// rotation syncs and raises the durable seqno behind the leaders' backs) with
// explicit Sync() calls alongside. Every Append must return (no follower left
// asleep), every record must be read back once, and the statistics add up.
#include "wal/segment_writer.h"

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

void Stress(int threads, int per, uint64_t segment_bytes, bool with_syncs) {
  char tmpl[] = "/tmp/chitta-gcs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  LogOptions o;
  o.instance_id = 11;
  o.durability = Durability::kFsync;
  o.segment_bytes = segment_bytes;
  std::unique_ptr<Log> log;
  ASSERT_TRUE(Log::Open(tmpl, o, &log).ok());
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::vector<uint64_t>> seqnos(threads);
  std::thread syncer;
  if (with_syncs) {
    syncer = std::thread([&] {
      while (!done.load()) {
        if (!log->Sync().ok()) failures++;
        std::this_thread::yield();
      }
    });
  }
  std::vector<std::thread> pool;
  const std::string payload(100, 'p');
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per; ++i) {
        uint64_t s = 0;
        if (!log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s).ok()) {
          failures++;
        }
        seqnos[t].push_back(s);
      }
    });
  }
  for (auto& th : pool) th.join();
  done = true;
  if (syncer.joinable()) syncer.join();
  EXPECT_EQ(failures.load(), 0);
  std::set<uint64_t> all;
  for (auto& run : seqnos) all.insert(run.begin(), run.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(threads * per));
  const SyncStats st = log->sync_stats();
  uint64_t hist = 0;
  for (uint64_t c : st.per_sync) hist += c;
  EXPECT_EQ(hist, st.syncs);
  EXPECT_LE(st.records, static_cast<uint64_t>(threads * per));  // rotations and Sync() cover the rest
  ASSERT_TRUE(log->Close().ok());
  LogOptions ro;
  ro.read_only = true;
  std::unique_ptr<Log> reader;
  ASSERT_TRUE(Log::Open(tmpl, ro, &reader).ok());
  ReadBatch b;
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  EXPECT_EQ(b.records.size(), static_cast<size_t>(threads * per));
  EXPECT_EQ(std::system((std::string("rm -rf ") + tmpl).c_str()), 0);
}

TEST(GroupCommitStress, ManyAppendersWithRotations) { Stress(64, 20, 4096, false); }
TEST(GroupCommitStress, ManyAppendersWithRotationsAndSyncs) { Stress(48, 20, 4096, true); }
TEST(GroupCommitStress, MoreAppendersThanWaitWords) { Stress(150, 6, 1 << 20, false); }

}  // namespace
}  // namespace chitta::wal
