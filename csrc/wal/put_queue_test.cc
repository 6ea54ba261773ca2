// csrc/wal/put_queue_test.cc
// PutQueue: the records on disk are EncodeSimplePut's bytes, Take hands over
// the queue in order as columns, ids come from one counter and stop at 2**32,
// a refused append queues nothing, concurrent Puts (flush and fsync) each
// land once in the log and once in the queue.
#include "wal/put_queue.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wal/put_payload.h"

namespace chitta::wal {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/chitta-pq-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { (void)std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::shared_ptr<Log> OpenLog(const std::string& root, Durability d, bool read_only = false) {
  LogOptions o;
  o.instance_id = read_only ? 0 : 9;
  o.durability = d;
  o.read_only = read_only;
  std::unique_ptr<Log> log;
  EXPECT_TRUE(Log::Open(root, o, &log).ok());
  return std::shared_ptr<Log>(std::move(log));
}

ReadBatch ReadAll(const std::string& root) {
  auto reader = OpenLog(root, Durability::kFlush, /*read_only=*/true);
  ReadBatch b;
  EXPECT_TRUE(reader->ReadNew(&b).ok());
  return b;
}

TEST(PutQueue, RecordsAreSimplePutsAndTakeIsInOrder) {
  TempDir dir;
  auto log = OpenLog(dir.path(), Durability::kFlush);
  PutQueue q(log, 9);
  const std::vector<std::string> texts = {"one", "caf\xc3\xa9", std::string(3000, 'z')};
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    uint64_t id;
    ASSERT_TRUE(q.NewId(&id));
    ASSERT_TRUE(q.Put(id, texts[i], 1700000000000 + static_cast<int64_t>(i)).ok());
    ids.push_back(id);
  }
  EXPECT_EQ(ids[0], (9ull << 32) | 1);
  EXPECT_EQ(q.size(), 3u);
  PutRun run;
  q.Take(&run);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(run.ids, ids);
  EXPECT_EQ(run.ms, (std::vector<int64_t>{1700000000000, 1700000000001, 1700000000002}));
  EXPECT_EQ(run.arena, texts[0] + texts[1] + texts[2]);
  EXPECT_EQ(run.offsets, (std::vector<int64_t>{0, 3, 8, 3008}));
  PutRun empty;
  q.Take(&empty);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.offsets, std::vector<int64_t>{0});
  ASSERT_TRUE(log->Close().ok());

  const ReadBatch b = ReadAll(dir.path());
  ASSERT_EQ(b.records.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string want;
    EncodeSimplePut(ids[i], texts[i], 1700000000000 + static_cast<int64_t>(i),
                    1700000000000 + static_cast<int64_t>(i), &want);
    const auto& r = b.records[i];
    EXPECT_EQ(r.op_type, 0);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(r.payload), r.len), want);
  }
}

TEST(PutQueue, IdsStopAtTwoToThe32) {
  TempDir dir;
  PutQueue q(OpenLog(dir.path(), Durability::kFlush), 3);
  q.StartIds(PutQueue::kMaxLocalId);
  uint64_t id = 0;
  ASSERT_TRUE(q.NewId(&id));
  EXPECT_EQ(id, (3ull << 32) | PutQueue::kMaxLocalId);
  EXPECT_FALSE(q.NewId(&id));
  EXPECT_FALSE(q.NewId(&id));  // stays used up; the counter does not wrap
  EXPECT_EQ(q.next_local(), PutQueue::kMaxLocalId + 1);
}

TEST(PutQueue, RefusedAppendQueuesNothing) {
  TempDir dir;
  { auto w = OpenLog(dir.path(), Durability::kFlush); }  // create the field
  PutQueue ro(OpenLog(dir.path(), Durability::kFlush, /*read_only=*/true), 0);
  EXPECT_EQ(ro.Put(1, "x", 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(ro.size(), 0u);
  auto log = OpenLog(dir.path(), Durability::kFlush);
  PutQueue q(log, 9);
  ASSERT_TRUE(log->Close().ok());
  EXPECT_EQ(q.Put(1, "x", 0).code(), Code::kClosed);
  EXPECT_EQ(q.size(), 0u);
}

void Hammer(Durability d) {
  TempDir dir;
  auto log = OpenLog(dir.path(), d);
  PutQueue q(log, 9);
  const int kThreads = 8, kPer = d == Durability::kFsync ? 25 : 400;
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  PutRun taken;  // a reader takes runs while the writers put
  std::atomic<bool> done{false};
  std::thread reader([&] {
    PutRun r;
    while (!done.load()) {
      q.Take(&r);
      taken.ids.insert(taken.ids.end(), r.ids.begin(), r.ids.end());
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string text = r.arena.substr(r.offsets[i], r.offsets[i + 1] - r.offsets[i]);
        if (text != "note " + std::to_string(r.ids[i] & 0xffffffff)) failures++;
      }
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < kPer; ++i) {
        uint64_t id;
        if (!q.NewId(&id)) failures++;
        if (!q.Put(id, "note " + std::to_string(id & 0xffffffff), 5).ok()) failures++;
      }
    });
  }
  for (auto& th : pool) th.join();
  done = true;
  reader.join();
  PutRun rest;
  q.Take(&rest);
  taken.ids.insert(taken.ids.end(), rest.ids.begin(), rest.ids.end());
  EXPECT_EQ(failures.load(), 0);
  const std::set<uint64_t> unique(taken.ids.begin(), taken.ids.end());
  EXPECT_EQ(taken.ids.size(), static_cast<size_t>(kThreads * kPer));
  EXPECT_EQ(unique.size(), taken.ids.size());
  ASSERT_TRUE(log->Close().ok());
  EXPECT_EQ(ReadAll(dir.path()).records.size(), static_cast<size_t>(kThreads * kPer));
}

TEST(PutQueue, ConcurrentPutsFlush) { Hammer(Durability::kFlush); }
TEST(PutQueue, ConcurrentPutsFsync) { Hammer(Durability::kFsync); }

}  // namespace
}  // namespace chitta::wal
