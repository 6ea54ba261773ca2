// csrc/wal/segment_writer_test.cc
// Group commit under stress: many appenders on a small segment size (every
// rotation syncs and raises the durable seqno behind the leaders' backs) with
// explicit Sync() calls alongside. Every Append must return (no follower left
// asleep), every record must be read back once, and the statistics add up.
#include "wal/segment_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <mutex>
#include <vector>

#include "wal/log.h"

namespace chitta::wal {
namespace {

// Every record's seqno in the log at dir, read back by a fresh read-only Log.
std::set<uint64_t> SeqnosOnDisk(const std::string& dir, size_t* count = nullptr) {
  LogOptions ro;
  ro.read_only = true;
  std::unique_ptr<Log> reader;
  EXPECT_TRUE(Log::Open(dir, ro, &reader).ok());
  ReadBatch b;
  EXPECT_TRUE(reader->ReadNew(&b).ok());
  std::set<uint64_t> seqnos;
  for (const auto& r : b.records) seqnos.insert(r.seqno);
  if (count) *count = b.records.size();
  return seqnos;
}

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
  size_t count = 0;
  EXPECT_EQ(SeqnosOnDisk(tmpl, &count), all);
  EXPECT_EQ(count, static_cast<size_t>(threads * per));
  EXPECT_EQ(std::system((std::string("rm -rf ") + tmpl).c_str()), 0);
}

TEST(GroupCommitStress, ManyAppendersWithRotations) { Stress(64, 20, 4096, false); }
TEST(GroupCommitStress, ManyAppendersWithRotationsAndSyncs) { Stress(48, 20, 4096, true); }
TEST(GroupCommitStress, MoreAppendersThanWaitWords) { Stress(150, 6, 1 << 20, false); }

// A write(2) that fails under fsync (here: the file size limit, EFBIG) loses
// the leader's whole pending group. Every appender of that group, and every
// later Append, gets the error; the file keeps exactly the acknowledged
// records, and lifting the limit does not bring the writer back.
TEST(GroupCommitFailure, FailedGroupWriteFailsTheWriterForGood) {
  char tmpl[] = "/tmp/chitta-gcf-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  LogOptions o;
  o.instance_id = 12;
  o.durability = Durability::kFsync;
  std::unique_ptr<Log> log;
  ASSERT_TRUE(Log::Open(tmpl, o, &log).ok());
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  rlimit small = saved;
  small.rlim_cur = 48 << 10;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);

  const int kThreads = 16;
  const std::string payload(200, 'f');
  std::mutex mu;
  std::set<uint64_t> acked;
  std::atomic<int> failed_then_ok{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&] {
      bool failed = false;
      for (int i = 0; i < 400; ++i) {
        uint64_t s = 0;
        const Status st = log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s);
        if (st.ok()) {
          if (failed) failed_then_ok++;
          std::lock_guard<std::mutex> l(mu);
          acked.insert(s);
        } else {
          EXPECT_EQ(st.code(), Code::kIOError) << st.ToString();
          failed = true;
          errors++;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  signal(SIGXFSZ, old_handler);

  EXPECT_GT(errors.load(), 0);
  EXPECT_EQ(failed_then_ok.load(), 0);  // sticky: no success after a thread saw the failure
  EXPECT_LT(acked.size() * (payload.size() + 17), size_t{48} << 10);
  uint64_t s = 0;  // the limit is gone, the failure stays
  const Status again = log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s);
  EXPECT_EQ(again.code(), Code::kIOError);
  EXPECT_NE(again.message().find("reopen"), std::string::npos) << again.message();
  EXPECT_TRUE(log->Close().ok());

  const std::set<uint64_t> on_disk = SeqnosOnDisk(tmpl);
  std::vector<uint64_t> only_disk, only_acked;
  std::set_difference(on_disk.begin(), on_disk.end(), acked.begin(), acked.end(), std::back_inserter(only_disk));
  std::set_difference(acked.begin(), acked.end(), on_disk.begin(), on_disk.end(), std::back_inserter(only_acked));
  EXPECT_TRUE(only_disk.empty()) << "on disk, not acknowledged: " << only_disk.size() << " from " << only_disk[0];
  EXPECT_TRUE(only_acked.empty()) << "acknowledged, not on disk: " << only_acked.size() << " from " << only_acked[0];
  EXPECT_EQ(std::system((std::string("rm -rf ") + tmpl).c_str()), 0);
}

// A buffered flush that fails (EFBIG under RLIMIT_FSIZE, as ENOSPC would) keeps
// the acknowledged records it lost, exactly those acknowledged and not on disk,
// and fails the writer: later Append, Flush and Close all return the error.
TEST(BufferedFailure, FailedFlushReportsExactlyTheLostRecords) {
  char tmpl[] = "/tmp/chitta-bff-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  LogOptions o;
  o.instance_id = 14;
  o.durability = Durability::kBuffered;
  std::unique_ptr<Log> log;
  ASSERT_TRUE(Log::Open(tmpl, o, &log).ok());
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 32 << 10;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string payload(300, 'b');
  std::set<uint64_t> acked;
  Status failure;
  for (int i = 0; i < 1000 && failure.ok(); ++i) {
    uint64_t s = 0;
    Status st = log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s);
    if (st.ok()) acked.insert(s);
    if (st.ok() && i % 5 == 4) st = log->Flush();
    failure = st;
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  signal(SIGXFSZ, old_handler);
  ASSERT_EQ(failure.code(), Code::kIOError) << failure.ToString();
  EXPECT_NE(failure.message().find("buffered records were lost"), std::string::npos);
  EXPECT_TRUE(log->writer_failed());
  const std::vector<LostRecord> lost = log->lost_records();
  ASSERT_FALSE(lost.empty());
  std::set<uint64_t> lost_seqnos;
  for (const LostRecord& r : lost) {
    EXPECT_EQ(r.op_type, 1);
    EXPECT_EQ(std::string(r.payload.begin(), r.payload.end()), payload);
    lost_seqnos.insert(r.seqno);
  }
  uint64_t s = 0;
  EXPECT_EQ(log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s).code(),
            Code::kIOError);
  EXPECT_EQ(log->Flush().code(), Code::kIOError);
  EXPECT_EQ(log->Close().code(), Code::kIOError);
  const std::set<uint64_t> on_disk = SeqnosOnDisk(tmpl);
  std::set<uint64_t> missing;
  std::set_difference(acked.begin(), acked.end(), on_disk.begin(), on_disk.end(),
                      std::inserter(missing, missing.begin()));
  EXPECT_EQ(missing, lost_seqnos);  // the disk is the oracle
  EXPECT_TRUE(std::includes(acked.begin(), acked.end(), on_disk.begin(), on_disk.end()));
  EXPECT_EQ(std::system((std::string("rm -rf ") + tmpl).c_str()), 0);
}

// Close() while appenders wait on a pending group: it writes and syncs the
// group and wakes them; every Append returns (OK and on disk, or Closed).
TEST(GroupCommitClose, CloseWakesWaitingAppenders) {
  for (int round = 0; round < 20; ++round) {
    char tmpl[] = "/tmp/chitta-gcc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    LogOptions o;
    o.instance_id = 13;
    o.durability = Durability::kFsync;
    std::unique_ptr<Log> log;
    ASSERT_TRUE(Log::Open(tmpl, o, &log).ok());
    const std::string payload(64, 'c');
    std::mutex mu;
    std::set<uint64_t> acked;
    std::atomic<int> started{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 24; ++t) {
      pool.emplace_back([&] {
        started++;
        for (int i = 0; i < 50; ++i) {
          uint64_t s = 0;
          const Status st = log->Append(1, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &s);
          if (!st.ok()) {
            EXPECT_EQ(st.code(), Code::kClosed) << st.ToString();
            return;
          }
          std::lock_guard<std::mutex> l(mu);
          acked.insert(s);
        }
      });
    }
    while (started.load() < 24) std::this_thread::yield();
    EXPECT_TRUE(log->Close().ok());
    for (auto& th : pool) th.join();  // hangs if Close() left a waiter asleep
    const std::set<uint64_t> on_disk = SeqnosOnDisk(tmpl);
    for (uint64_t s : acked) EXPECT_TRUE(on_disk.count(s)) << s;
    EXPECT_EQ(std::system((std::string("rm -rf ") + tmpl).c_str()), 0);
  }
}

}  // namespace
}  // namespace chitta::wal
