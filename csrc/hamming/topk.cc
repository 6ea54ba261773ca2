// csrc/hamming/topk.cc
#include "hamming/topk.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace chitta::hamming {
namespace {

// Tracks the kept candidates and the threshold they imply.
class Selector {
 public:
  // Between blocks at most 2k + kMaxBlock - 1 are kept (Settle cuts back),
  // so one more block always fits; and never more than n can be kept.
  Selector(size_t k, size_t bits, size_t n)
      : k_(k), hist_(bits + 1, 0), kept_(new Neighbor[std::min(2 * k + 2 * kMaxBlock, n)]) {}

  uint32_t threshold() const { return threshold_; }

  // Appends one block's survivors (block-relative index, distance), skipping
  // dead slots. Locals only in the loop: a vector push_back here kept its end
  // pointer in memory and cost ~9 ns per survivor.
  void Append(uint64_t base, const uint32_t* index, const uint32_t* dist, size_t m,
              const uint8_t* dead) {
    Neighbor* out = kept_.get() + size_;
    uint32_t* hist = hist_.data();
    size_t w = 0;
    for (size_t j = 0; j < m; ++j) {
      const uint64_t slot = base + index[j];
      if (dead != nullptr && dead[slot] != 0) continue;
      out[w].slot = slot;
      out[w].dist = dist[j];
      ++hist[dist[j]];
      ++w;
    }
    size_ += w;
    at_or_below_ += w;  // once settled, every survivor is below the threshold
  }

  // Called after each block: lower the threshold, and cut the list to k when
  // it has grown past 2k + one block. The first time, the threshold is found
  // by a scan of the histogram; after that it only moves down, tracked by the
  // count of kept candidates at or below it (every later survivor is below).
  void Settle() {
    if (size_ < k_) return;
    if (!settled_) {
      uint32_t d = 0;
      size_t below = 0;
      while (below + hist_[d] < k_) below += hist_[d++];
      threshold_ = d;
      at_or_below_ = below + hist_[d];
      settled_ = true;
    }
    while (at_or_below_ - hist_[threshold_] >= k_) at_or_below_ -= hist_[threshold_--];
    if (size_ < 2 * k_ + kMaxBlock) return;
    const uint32_t d = threshold_;
    const size_t below = at_or_below_ - hist_[d];
    // Keep every candidate below d and the first (k - below) at d: kept_ is in
    // slot order, so those are the ones with the smallest slots.
    size_t at_cut = k_ - below;
    size_t w = 0;
    for (size_t r = 0; r < size_; ++r) {
      const Neighbor n = kept_[r];
      if (n.dist < d || (n.dist == d && at_cut > 0)) {
        if (n.dist == d) --at_cut;
        kept_[w++] = n;
      }
    }
    size_ = w;
    hist_[d] = static_cast<uint32_t>(k_ - below);
    std::fill(hist_.begin() + d + 1, hist_.end(), 0u);
    at_or_below_ = k_;
  }

  // Writes the k best in (dist, slot) order with a counting sort by distance:
  // kept_ is already in slot order and the histogram is exact, so one stable
  // pass places everything. O(kept + bits), no comparison sort.
  void Finish(std::vector<Neighbor>* out) {
    size_t take = size_;
    uint32_t cut = static_cast<uint32_t>(hist_.size());  // keep every distance < cut
    size_t at_cut = 0;  // and this many at distance == cut
    if (take > k_) {
      take = k_;
      size_t below = 0;
      cut = 0;
      while (below + hist_[cut] < k_) below += hist_[cut++];
      at_cut = k_ - below;
    }
    std::vector<uint32_t>& offset = hist_;  // reused: prefix sums of counts
    uint32_t sum = 0;
    for (size_t d = 0; d < offset.size(); ++d) {
      const uint32_t c = offset[d];
      offset[d] = sum;
      sum += c;
    }
    out->resize(take);
    for (size_t r = 0; r < size_; ++r) {
      const Neighbor n = kept_[r];
      if (n.dist > cut) continue;
      if (n.dist == cut) {
        if (at_cut == 0) continue;
        --at_cut;
      }
      // Entries below the cut fill [offset, ...); those at the cut come after
      // all of them, which is where their prefix sum points.
      (*out)[offset[n.dist]++] = n;
    }
  }

 private:
  size_t k_;
  std::vector<uint32_t> hist_;
  std::unique_ptr<Neighbor[]> kept_;  // [0, size_) in use, in slot order; not zeroed
  size_t size_ = 0;
  bool settled_ = false;     // threshold_ and at_or_below_ are valid
  size_t at_or_below_ = 0;   // kept candidates with dist <= threshold_
  uint32_t threshold_ = std::numeric_limits<uint32_t>::max();
};

}  // namespace

void TopK(FilterFn filter, const uint64_t* query, const uint64_t* codes, size_t n, size_t words,
          const uint8_t* dead, size_t k, std::vector<Neighbor>* out) {
  out->clear();
  if (k == 0 || n == 0) return;
  Selector sel(k, 64 * words, n);
  uint32_t index[kMaxBlock];
  uint32_t dist[kMaxBlock];
  for (size_t base = 0; base < n; base += kMaxBlock) {
    const size_t len = std::min(kMaxBlock, n - base);
    const size_t m =
        filter(query, codes + base * words, len, words, sel.threshold(), index, dist);
    sel.Append(base, index, dist, m, dead);
    sel.Settle();
  }
  sel.Finish(out);
}

}  // namespace chitta::hamming
