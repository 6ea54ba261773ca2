#include "hnsw/search_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "hnsw/test_util.h"
#include "hnsw/tiered.h"

namespace chitta::hnsw {
namespace {

constexpr size_t kDim = 16;
constexpr size_t kK = 10;

std::unique_ptr<TieredIndex> Graph(size_t n) {
  TieredOptions o;
  o.graph.dim = kDim;
  o.graph.ef_construction = 60;
  o.threshold = n * 3 / 4;  // both tiers hold nodes
  o.merge_ratio = 10.0;
  auto t = std::make_unique<TieredIndex>(o);
  auto data = testing::Clustered(n, kDim, 6, 7);
  auto ids = testing::Iota(n, 1);
  EXPECT_TRUE(t->Add(ids.data(), data.data(), n, 1).ok());
  return t;
}

struct Out {
  std::vector<uint64_t> ids = std::vector<uint64_t>(kK);
  std::vector<float> dist = std::vector<float>(kK);
  Status status;
};

Status SearchOne(const TieredIndex& t, const float* q, const std::vector<uint64_t>* allowed, Out* o) {
  return t.Search(q, 1, kK, 32, allowed ? allowed->data() : nullptr, allowed ? allowed->size() : 0,
                  allowed != nullptr, MergeMode::kDistance, 1, o->ids.data(), o->dist.data());
}

void ExpectSame(const Out& a, const Out& b) {
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(0, std::memcmp(a.dist.data(), b.dist.data(), kK * sizeof(float)));  // bit for bit
}

TEST(SearchWorker, ResultsEqualSearch) {
  auto t = Graph(600);
  auto qs = testing::Near(testing::Clustered(600, kDim, 6, 7), kDim, 50, 3);
  std::vector<uint64_t> allowed;
  for (uint64_t id = 1; id <= 600; id += 3) allowed.push_back(id);
  SearchWorker w;
  for (int filtered = 0; filtered < 2; ++filtered) {
    for (size_t i = 0; i < 50; ++i) {
      const float* q = qs.data() + i * kDim;
      const auto* f = filtered ? &allowed : nullptr;
      Out want;
      ASSERT_TRUE(SearchOne(*t, q, f, &want).ok());
      Out got;
      auto ticket = w.Submit([&] { return SearchOne(*t, q, f, &got); });
      ASSERT_TRUE(ticket->Wait().ok());
      ExpectSame(want, got);
    }
  }
}

TEST(SearchWorker, ErrorsComeBackAtWait) {
  auto t = Graph(100);
  std::vector<float> bad(kDim, 0.0f);  // a zero vector: the cosine metric refuses it
  Out want;
  const Status direct = SearchOne(*t, bad.data(), nullptr, &want);
  ASSERT_FALSE(direct.ok());
  SearchWorker w;
  Out got;
  const Status st = w.Submit([&] { return SearchOne(*t, bad.data(), nullptr, &got); })->Wait();
  EXPECT_EQ(direct.code(), st.code());
  EXPECT_EQ(direct.message(), st.message());
}

TEST(SearchWorker, ManyQueriesFromSeveralThreads) {
  auto t = Graph(800);
  auto qs = testing::Near(testing::Clustered(800, kDim, 6, 7), kDim, 64, 5);
  std::vector<Out> want(64);
  for (size_t i = 0; i < 64; ++i) ASSERT_TRUE(SearchOne(*t, qs.data() + i * kDim, nullptr, &want[i]).ok());
  SearchWorker w;
  std::atomic<int> mismatches{0};
  std::atomic<int> on_worker{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = c; i < 64; i += 4) {
          Out got;
          auto ticket = w.Submit([&] { return SearchOne(*t, qs.data() + i * kDim, nullptr, &got); });
          if (!ticket->Wait().ok() || got.ids != want[i].ids ||
              std::memcmp(got.dist.data(), want[i].dist.data(), kK * sizeof(float)) != 0) {
            ++mismatches;
          }
          if (ticket->ran_on_worker()) ++on_worker;
        }
      }
    });
  }
  for (auto& th : callers) th.join();
  EXPECT_EQ(0, mismatches.load());
  EXPECT_GE(on_worker.load(), 0);  // either side may run a job; both give the same answer
}

TEST(SearchWorker, JobRunsExactlyOnce) {
  SearchWorker w;
  std::atomic<int> runs{0};
  std::vector<std::shared_ptr<SearchTicket>> tickets;
  for (int i = 0; i < 500; ++i) tickets.push_back(w.Submit([&] { ++runs; return Status::OK(); }));
  for (auto& t : tickets) ASSERT_TRUE(t->Wait().ok());
  for (auto& t : tickets) ASSERT_TRUE(t->Wait().ok());  // a second Wait returns the same status
  EXPECT_EQ(500, runs.load());
}

TEST(SearchWorker, ShutdownWithASearchInFlight) {
  auto t = Graph(400);
  auto qs = testing::Near(testing::Clustered(400, kDim, 6, 7), kDim, 8, 9);
  std::vector<Out> want(8);
  for (size_t i = 0; i < 8; ++i) ASSERT_TRUE(SearchOne(*t, qs.data() + i * kDim, nullptr, &want[i]).ok());
  std::vector<Out> got(8);
  std::vector<std::shared_ptr<SearchTicket>> tickets;
  std::atomic<bool> started{false};
  {
    SearchWorker w;
    tickets.push_back(w.Submit([&] {
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // still running at shutdown
      return SearchOne(*t, qs.data(), nullptr, &got[0]);
    }));
    for (size_t i = 1; i < 8; ++i) {
      tickets.push_back(w.Submit([&, i] { return SearchOne(*t, qs.data() + i * kDim, nullptr, &got[i]); }));
    }
    while (!started) std::this_thread::yield();
  }  // the destructor waits for the job in flight; the queued ones are left to Wait()
  EXPECT_TRUE(tickets[0]->done());
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(tickets[i]->Wait().ok());
    ExpectSame(want[i], got[i]);
  }
}

TEST(SearchWorker, SubmitAfterStopRunsInWait) {
  auto w = std::make_unique<SearchWorker>();
  SearchWorker& process = ProcessSearchWorker();
  EXPECT_EQ(&process, &ProcessSearchWorker());  // one per process
  std::atomic<int> runs{0};
  auto ticket = process.Submit([&] { ++runs; return Status::OK(); });
  EXPECT_TRUE(ticket->Wait().ok());
  EXPECT_EQ(1, runs.load());
  w.reset();
}

}  // namespace
}  // namespace chitta::hnsw
