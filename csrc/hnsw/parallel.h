// csrc/hnsw/parallel.h
// ParallelFor: runs fn(i) for i in [0, n) on up to num_threads threads
// (num_threads <= 1 runs inline, in order). Items are handed out one at a
// time from an atomic counter.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace chitta::hnsw {

inline int ResolveThreads(int num_threads) {
  if (num_threads > 0) return num_threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

template <typename Fn>
void ParallelFor(size_t n, int num_threads, Fn&& fn) {
  const size_t threads = std::min<size_t>(static_cast<size_t>(ResolveThreads(num_threads)), n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

}  // namespace chitta::hnsw
