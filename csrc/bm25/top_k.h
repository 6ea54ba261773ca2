// csrc/bm25/top_k.h
// Bounded top-k of (id, score) shared by the exhaustive and the pruned search.
// Order: higher score first, then smaller id (a strict total order, so the top
// k of a set of scored documents is unique whatever order they arrive in).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "bm25/index.h"

namespace chitta::bm25 {

inline bool Better(const Hit& a, const Hit& b) {
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}
// Better as a function object: the heap algorithms inline it (a function
// pointer made every comparison an indirect call).
struct BetterFn {
  bool operator()(const Hit& a, const Hit& b) const { return Better(a, b); }
};

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) {}
  // True when the hit was kept.
  bool Offer(uint64_t id, float score) {
    const Hit h{id, score};
    if (heap_.size() < k_) {
      heap_.push_back(h);
      std::push_heap(heap_.begin(), heap_.end(), BetterFn{});  // top = worst kept
      return true;
    }
    if (!Better(h, heap_.front())) return false;
    std::pop_heap(heap_.begin(), heap_.end(), BetterFn{});
    heap_.back() = h;
    std::push_heap(heap_.begin(), heap_.end(), BetterFn{});
    return true;
  }
  bool full() const { return heap_.size() >= k_; }
  // The score a document must reach (ties then go by id) once full().
  float threshold() const { return heap_.front().score; }
  void Finish(std::vector<Hit>* out) {
    std::sort_heap(heap_.begin(), heap_.end(), BetterFn{});
    out->assign(heap_.begin(), heap_.end());
  }

 private:
  size_t k_;
  std::vector<Hit> heap_;
};

}  // namespace chitta::bm25
