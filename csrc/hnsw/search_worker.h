// csrc/hnsw/search_worker.h
// A persistent background thread that runs searches handed to it, so that a
// caller can start a graph search, do other work (the BM25 lane) and collect
// the result later. One thread, started when the worker is made, no thread
// per job; jobs are handed over under a mutex + condition variable.
//
// A job is claimed exactly once: by the worker, or by Wait() when the worker
// has not started it yet (a caller never waits for a worker that did not get
// a CPU: it runs the job itself). Either way the job's own code runs once and
// its Status comes back from Wait().
//
// Shutdown (the destructor) lets the job in flight finish and joins the
// thread; jobs still queued are left to their Wait(), which runs them inline.
// ProcessSearchWorker() is one worker per process, made on first use (made
// afresh in a forked child) and never destroyed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "chitta/status.h"

namespace chitta::hnsw {

class SearchTicket {
 public:
  explicit SearchTicket(std::function<Status()> job) : job_(std::move(job)) {}
  SearchTicket(const SearchTicket&) = delete;
  SearchTicket& operator=(const SearchTicket&) = delete;

  // The job's Status once it has run (running it here if nobody started it).
  Status Wait();
  bool done() const { return state_.load(std::memory_order_acquire) == kDone; }
  // True if the worker thread (not Wait) ran the job; valid once done().
  bool ran_on_worker() const { return on_worker_; }

 private:
  friend class SearchWorker;
  enum State : int { kQueued = 0, kRunning = 1, kDone = 2 };
  bool Claim() {
    int expected = kQueued;
    return state_.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel);
  }
  void Run(bool on_worker);

  std::function<Status()> job_;
  Status status_;
  bool on_worker_ = false;
  std::atomic<int> state_{kQueued};
  std::mutex mu_;
  std::condition_variable cv_;
};

class SearchWorker {
 public:
  SearchWorker();
  ~SearchWorker();  // finishes the job in flight, joins; queued jobs run in their Wait()
  SearchWorker(const SearchWorker&) = delete;
  SearchWorker& operator=(const SearchWorker&) = delete;

  // Queues job; its result comes back from the ticket's Wait().
  std::shared_ptr<SearchTicket> Submit(std::function<Status()> job);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<SearchTicket>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

// The process's worker (made on first use; a forked child makes its own).
SearchWorker& ProcessSearchWorker();

}  // namespace chitta::hnsw
