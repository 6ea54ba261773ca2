// csrc/hamming/topk.cc
#include "hamming/topk.h"

#include <algorithm>
#include <limits>

namespace chitta::hamming {
namespace {

// Tracks the kept candidates and the threshold they imply.
class Selector {
 public:
  Selector(size_t k, size_t bits) : k_(k), hist_(bits + 1, 0) {
    kept_.reserve(2 * k + kMaxBlock);
  }

  uint32_t threshold() const { return threshold_; }

  void Push(uint64_t slot, uint32_t dist) {
    kept_.push_back(Neighbor{slot, dist});
    ++hist_[dist];
  }

  // Called after each block: lower the threshold, and cut the list to k when
  // it has grown past 2k + one block.
  void Settle() {
    if (kept_.size() < k_) return;
    uint32_t d = 0;
    size_t below = 0;  // kept candidates with distance < d
    while (below + hist_[d] < k_) below += hist_[d++];
    threshold_ = d;  // the k-th smallest kept distance
    if (kept_.size() < 2 * k_ + kMaxBlock) return;
    // Keep every candidate below d and the first (k - below) at d: kept_ is in
    // slot order, so those are the ones with the smallest slots.
    size_t at_cut = k_ - below;
    size_t w = 0;
    for (const Neighbor& n : kept_) {
      if (n.dist < d || (n.dist == d && at_cut > 0)) {
        if (n.dist == d) --at_cut;
        kept_[w++] = n;
      }
    }
    kept_.resize(w);
    hist_[d] = static_cast<uint32_t>(k_ - below);
    std::fill(hist_.begin() + d + 1, hist_.end(), 0u);
  }

  void Finish(std::vector<Neighbor>* out) {
    const size_t take = std::min(k_, kept_.size());
    std::partial_sort(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(take), kept_.end(),
                      NeighborLess);
    out->assign(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(take));
  }

 private:
  size_t k_;
  std::vector<uint32_t> hist_;
  std::vector<Neighbor> kept_;
  uint32_t threshold_ = std::numeric_limits<uint32_t>::max();
};

}  // namespace

void TopK(FilterFn filter, const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
          const uint8_t* dead, size_t k, std::vector<Neighbor>* out) {
  out->clear();
  if (k == 0 || n == 0) return;
  Selector sel(k, 64 * words);
  uint32_t index[kMaxBlock];
  uint32_t dist[kMaxBlock];
  for (size_t base = 0; base < n; base += kMaxBlock) {
    const size_t len = std::min(kMaxBlock, n - base);
    const size_t m =
        filter(query, codes + base * words, len, words, sel.threshold(), index, dist);
    for (size_t j = 0; j < m; ++j) {
      const uint64_t slot = base + index[j];
      if (dead != nullptr && dead[slot] != 0) continue;
      sel.Push(slot, dist[j]);
    }
    sel.Settle();
  }
  sel.Finish(out);
}

}  // namespace chitta::hamming
