// csrc/hnsw/visited.h
// Visited-node marks for graph searches. A VisitedList stamps nodes with the
// current epoch, so clearing between searches is O(1) (a full wipe only every
// 65535 searches). VisitedPool hands lists to concurrent searches and keeps
// them for reuse.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace chitta::hnsw {

class VisitedList {
 public:
  explicit VisitedList(size_t n) : marks_(n, 0) {}

  // Starts a new search over at least n nodes.
  void Begin(size_t n) {
    if (marks_.size() < n) marks_.assign(n, 0), epoch_ = 0;
    if (++epoch_ == 0) {
      std::memset(marks_.data(), 0, marks_.size() * sizeof(uint16_t));
      epoch_ = 1;
    }
  }
  // True if i was already visited in this search; marks it either way.
  bool TestAndSet(uint32_t i) {
    if (marks_[i] == epoch_) return true;
    marks_[i] = epoch_;
    return false;
  }
  bool Test(uint32_t i) const { return marks_[i] == epoch_; }
  const uint16_t* data() const { return marks_.data(); }

 private:
  std::vector<uint16_t> marks_;
  uint16_t epoch_ = 0;
};

class VisitedPool {
 public:
  class Handle {
   public:
    Handle(VisitedPool* pool, std::unique_ptr<VisitedList> list)
        : pool_(pool), list_(std::move(list)) {}
    ~Handle() { pool_->Release(std::move(list_)); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    VisitedList* operator->() { return list_.get(); }
    VisitedList* get() { return list_.get(); }

   private:
    VisitedPool* pool_;
    std::unique_ptr<VisitedList> list_;
  };

  // A list ready for a search over n nodes.
  Handle Acquire(size_t n) {
    std::unique_ptr<VisitedList> list;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        list = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!list) list = std::make_unique<VisitedList>(n);
    list->Begin(n);
    return Handle(this, std::move(list));
  }

  // Drops the cached lists (their memory scales with the index).
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    free_.clear();
  }

 private:
  void Release(std::unique_ptr<VisitedList> list) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(list));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<VisitedList>> free_;
};

}  // namespace chitta::hnsw
