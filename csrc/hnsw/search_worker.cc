// csrc/hnsw/search_worker.cc
#include "hnsw/search_worker.h"

#include <unistd.h>

#include <utility>

namespace chitta::hnsw {

void SearchTicket::Run(bool on_worker) {
  Status st = job_();
  job_ = nullptr;  // drop what the job holds as soon as it has run
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(st);
    on_worker_ = on_worker;
    state_.store(kDone, std::memory_order_release);
  }
  cv_.notify_all();
}

Status SearchTicket::Wait() {
  if (Claim()) {
    Run(false);
  } else {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return state_.load(std::memory_order_acquire) == kDone; });
  }
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

SearchWorker::SearchWorker() : thread_([this] { Loop(); }) {}

SearchWorker::~SearchWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<SearchTicket> SearchWorker::Submit(std::function<Status()> job) {
  auto ticket = std::make_shared<SearchTicket>(std::move(job));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) queue_.push_back(ticket);  // stopped: Wait() runs it
  }
  cv_.notify_one();
  return ticket;
}

void SearchWorker::Loop() {
  for (;;) {
    std::shared_ptr<SearchTicket> ticket;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;  // queued tickets are run by their Wait()
      ticket = std::move(queue_.front());
      queue_.pop_front();
    }
    if (ticket->Claim()) ticket->Run(true);
  }
}

SearchWorker& ProcessSearchWorker() {
  // Never destroyed: an idle thread blocked on its condition variable needs no
  // teardown at exit. After fork() the child has no worker thread: make one.
  static std::mutex mu;
  static SearchWorker* worker = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  const pid_t pid = getpid();
  if (worker == nullptr || owner != pid) {
    worker = new SearchWorker();  // a forked child's old one is leaked, never joined
    owner = pid;
  }
  return *worker;
}

}  // namespace chitta::hnsw
