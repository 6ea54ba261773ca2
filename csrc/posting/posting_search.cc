// csrc/posting/posting_search.cc
// Search: a counting pass over the query's posting lists into a per-thread u8
// counter array plus a list of touched ordinals, then a selection by count
// buckets (counts are small integers, so a 256-bin histogram finds the k-th
// count without sorting), then an exact ordering of the few survivors.
#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <thread>

#include "posting/posting_index.h"

namespace chitta::posting {

struct Candidate {
  uint32_t ordinal;
  uint32_t count;
  double activation;  // summed stored activations over the shared features
};

// Invariant between calls: counts is all zero. Each thread owns one, shared by
// every index used on that thread (it only ever grows).
struct SearchScratch {
  std::vector<uint8_t> counts;
  std::vector<uint32_t> touched;
  size_t n_touched = 0;
  std::vector<uint32_t> sorted_query;
  std::vector<Candidate> winners;
  std::vector<Candidate> boundary;
  std::vector<uint8_t> block_max;
};

namespace {

constexpr size_t kBlock = 64;  // counters per block of the dense scan
// Dense scan once the postings reach 1/kDenseRatio of the ordinals.
constexpr size_t kDenseRatio = 32;
// Posting entries ahead to prefetch the counter of: at 1M ordinals the counter
// array lives in L2 and a random increment otherwise waits for it (~1.7x).
constexpr size_t kPrefetchAhead = 24;

SearchScratch& ThreadScratch() {
  thread_local SearchScratch scratch;
  return scratch;
}

// Higher count, then higher summed activation, then the earlier ordinal.
inline bool Better(const Candidate& x, const Candidate& y) {
  if (x.count != y.count) return x.count > y.count;
  if (x.activation != y.activation) return x.activation > y.activation;
  return x.ordinal < y.ordinal;
}

}  // namespace

namespace {

template <typename T>
uint32_t OverlapRow(const T* row, size_t a, const uint32_t* q, size_t width) {
  size_t i = 0, j = 0;
  uint32_t c = 0;
  while (i < a && j < width) {
    if (row[i] < q[j]) {
      ++i;
    } else if (q[j] < row[i]) {
      ++j;
    } else {
      ++c, ++i, ++j;
    }
  }
  return c;
}

}  // namespace

uint32_t PostingIndex::Overlap(uint32_t ordinal, const uint32_t* q, size_t width) const {
  const size_t a = options_.active;
  return features_.With(ordinal, [&](const auto* row) { return OverlapRow(row, a, q, width); });
}

template <typename T>
double PostingIndex::SharedActivationRow(const T* row, const float* act, const uint32_t* q,
                                         size_t width) const {
  const size_t a = options_.active;
  size_t i = 0, j = 0;
  double sum = 0.0;
  while (i < a && j < width) {
    if (row[i] < q[j]) {
      ++i;
    } else if (q[j] < row[i]) {
      ++j;
    } else {
      sum += static_cast<double>(act[i]);  // ascending feature order
      ++i, ++j;
    }
  }
  return sum;
}

double PostingIndex::SharedActivation(uint32_t ordinal, const uint32_t* q, size_t width) const {
  const float* act = activations_.data() + size_t{ordinal} * options_.active;
  return features_.With(ordinal, [&](const auto* row) { return SharedActivationRow(row, act, q, width); });
}

Status PostingIndex::ValidateQueries(const uint32_t* queries, size_t n_queries,
                                     size_t width) const {
  std::vector<uint32_t> row(width);
  for (size_t qi = 0; qi < n_queries; ++qi) {
    std::copy_n(queries + qi * width, width, row.begin());
    std::sort(row.begin(), row.end());
    if (row.back() >= options_.n_features) {
      return Status::InvalidArgument("query " + std::to_string(qi) + " has feature id " +
                                     std::to_string(row.back()) + ", not below n_features=" +
                                     std::to_string(options_.n_features));
    }
    if (std::adjacent_find(row.begin(), row.end()) != row.end()) {
      return Status::InvalidArgument("query " + std::to_string(qi) +
                                     " repeats a feature id");
    }
  }
  return Status::OK();
}

Status PostingIndex::Search(const uint32_t* queries, size_t n_queries, size_t width, size_t k,
                            const AllowedIds* allowed, uint64_t* out_ids, uint32_t* out_counts,
                            unsigned num_threads) const {
  if (k == 0) return Status::InvalidArgument("k must be at least 1");
  if (width == 0) return Status::InvalidArgument("a query needs at least one feature id");
  std::shared_lock<std::shared_mutex> lock(mu_);
  CHITTA_RETURN_IF_ERROR(ValidateQueries(queries, n_queries, width));
  if (n_queries == 0) return Status::OK();

  // Resolve the allowed ids to live ordinals once for the whole batch.
  std::vector<uint32_t> allowed_ordinals;
  std::vector<uint8_t> mask;
  if (allowed != nullptr) {
    allowed_ordinals.reserve(allowed->n);
    for (size_t i = 0; i < allowed->n; ++i) {
      const uint32_t o = id_to_ordinal_.Find(allowed->ids[i]);
      if (o != IdMap::kMissing) allowed_ordinals.push_back(o);
    }
    std::sort(allowed_ordinals.begin(), allowed_ordinals.end());
    allowed_ordinals.erase(std::unique(allowed_ordinals.begin(), allowed_ordinals.end()),
                           allowed_ordinals.end());
    if (allowed_strategy_ != AllowedStrategy::kScanAllowed) {
      mask.assign(ids_.size(), 0);
      for (uint32_t o : allowed_ordinals) mask[o] = 1;
    }
  }
  const uint8_t* mask_ptr = allowed != nullptr && !mask.empty() ? mask.data() : nullptr;
  const std::vector<uint32_t>* allowed_ptr = allowed != nullptr ? &allowed_ordinals : nullptr;

  auto run_range = [&](size_t lo, size_t hi) {
    for (size_t qi = lo; qi < hi; ++qi) {
      SearchOne(queries + qi * width, width, k, mask_ptr, allowed_ptr, out_ids + qi * k,
                out_counts + qi * k);
    }
  };

  unsigned threads = num_threads;
  if (threads == 0) {
    // hardware_concurrency() reads /sys on Linux: ask once, and only for batches.
    static const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    threads = n_queries < 8 ? 1u
                            : static_cast<unsigned>(std::min<size_t>(hw, n_queries / 4));
  }
  threads = static_cast<unsigned>(std::min<size_t>(threads, n_queries));
  if (threads <= 1) {
    run_range(0, n_queries);
    return Status::OK();
  }
  std::vector<std::thread> pool;
  const size_t per = (n_queries + threads - 1) / threads;
  size_t next_lo = per;  // first query not yet handed to a thread
  for (unsigned t = 1; t < threads && next_lo < n_queries; ++t) {
    const size_t hi = std::min(n_queries, next_lo + per);
    try {
      pool.emplace_back(run_range, next_lo, hi);
    } catch (const std::system_error&) {
      break;  // no more threads: this thread does the rest below
    }
    next_lo = hi;
  }
  run_range(0, std::min(per, n_queries));
  run_range(next_lo, n_queries);
  for (auto& th : pool) th.join();
  return Status::OK();
}

void PostingIndex::SearchOne(const uint32_t* query, size_t width, size_t k,
                             const uint8_t* allowed_mask,
                             const std::vector<uint32_t>* allowed_ordinals, uint64_t* out_ids,
                             uint32_t* out_counts) const {
  SearchScratch& s = ThreadScratch();
  s.sorted_query.assign(query, query + width);
  std::sort(s.sorted_query.begin(), s.sorted_query.end());
  const uint32_t* q = s.sorted_query.data();
  if (s.counts.size() < ids_.size()) s.counts.resize(ids_.size(), 0);

  size_t total_postings = 0;
  for (size_t j = 0; j < width; ++j) total_postings += postings_[q[j]].size();

  bool scan_allowed = false;
  if (allowed_ordinals != nullptr) {
    switch (allowed_strategy_) {
      case AllowedStrategy::kScanAllowed: scan_allowed = true; break;
      case AllowedStrategy::kCountPostings: scan_allowed = false; break;
      case AllowedStrategy::kAuto:
        // A row merge costs ~(active + width) steps; a posting entry ~4x less.
        scan_allowed = allowed_mask == nullptr ||
                       allowed_ordinals->size() * (options_.active + width) < 4 * total_postings;
        break;
    }
  }

  uint8_t* counts = s.counts.data();
  if (scan_allowed) {
    if (s.touched.size() < allowed_ordinals->size()) s.touched.resize(allowed_ordinals->size());
    size_t nt = 0;
    for (uint32_t o : *allowed_ordinals) {
      const uint32_t c = Overlap(o, q, width);
      if (c == 0) continue;
      counts[o] = static_cast<uint8_t>(c);
      s.touched[nt++] = o;
    }
    s.n_touched = nt;
    SelectTopK(s, q, width, k, nullptr, out_ids, out_counts);
    return;
  }

  bool dense = false;
  switch (count_mode_) {
    case CountMode::kTouchedList: dense = false; break;
    case CountMode::kDenseScan: dense = true; break;
    case CountMode::kAuto: dense = total_postings * kDenseRatio >= ids_.size(); break;
  }
  if (dense) {
    for (size_t j = 0; j < width; ++j) {
      const std::vector<uint32_t>& list = postings_[q[j]];
      const uint32_t* p = list.data();
      const size_t len = list.size();
      size_t i = 0;
      for (; i + kPrefetchAhead < len; ++i) {
        __builtin_prefetch(counts + p[i + kPrefetchAhead], 1);
        ++counts[p[i]];
      }
      for (; i < len; ++i) ++counts[p[i]];
    }
    CollectDense(s, k, allowed_mask);
    SelectTopK(s, q, width, k, nullptr, out_ids, out_counts);
    std::fill(counts, counts + ids_.size(), uint8_t{0});
    return;
  }

  if (s.touched.size() < total_postings) s.touched.resize(total_postings);
  uint32_t* touched = s.touched.data();
  size_t nt = 0;
  for (size_t j = 0; j < width; ++j) {
    const std::vector<uint32_t>& list = postings_[q[j]];
    const uint32_t* p = list.data();
    const size_t len = list.size();
    for (size_t i = 0; i < len; ++i) {
      if (i + kPrefetchAhead < len) __builtin_prefetch(counts + p[i + kPrefetchAhead], 1);
      const uint32_t o = p[i];
      const uint8_t c = counts[o];
      counts[o] = static_cast<uint8_t>(c + 1);
      touched[nt] = o;     // kept only when this is the first touch
      nt += (c == 0);
    }
  }
  s.n_touched = nt;
  SelectTopK(s, q, width, k, allowed_mask, out_ids, out_counts);
}

// Leaves in s.touched the eligible ordinals whose count is at least tb, the
// k-th largest block maximum. Every block holds an element equal to its
// maximum, so the k-th largest count overall is >= tb: nothing of the top k
// is missed, and whole blocks below tb are skipped after one max() pass.
void PostingIndex::CollectDense(SearchScratch& s, size_t k, const uint8_t* allowed_mask) const {
  const uint8_t* counts = s.counts.data();
  const size_t n = ids_.size();
  const size_t n_blocks = (n + kBlock - 1) / kBlock;
  const uint8_t* live = num_dead_ > 0 ? live_.data() : nullptr;
  if (s.block_max.size() < n_blocks) s.block_max.resize(n_blocks);
  uint8_t* block_max = s.block_max.data();
  // Eligible count of ordinal o: 0 when removed or not allowed (masks are 0/1).
  auto eligible = [&](size_t o) -> uint8_t {
    uint8_t c = counts[o];
    if (live) c &= static_cast<uint8_t>(-live[o]);
    if (allowed_mask) c &= static_cast<uint8_t>(-allowed_mask[o]);
    return c;
  };
  size_t hist[kMaxActive + 1] = {0};
  for (size_t b = 0; b < n_blocks; ++b) {
    const size_t lo = b * kBlock, hi = std::min(n, lo + kBlock);
    uint8_t m = 0;
    if (hi - lo == kBlock && live == nullptr && allowed_mask == nullptr) {
      for (size_t i = 0; i < kBlock; ++i) m = std::max(m, counts[lo + i]);  // vectorised
    } else {
      for (size_t o = lo; o < hi; ++o) m = std::max(m, eligible(o));
    }
    block_max[b] = m;
    ++hist[m];
  }
  uint32_t tb = 1;
  size_t cumulative = 0;
  for (uint32_t c = kMaxActive; c >= 1; --c) {
    cumulative += hist[c];
    if (cumulative >= k) {
      tb = c;
      break;
    }
  }
  if (s.touched.size() < n) s.touched.resize(n);
  size_t nt = 0;
  for (size_t b = 0; b < n_blocks; ++b) {
    if (block_max[b] < tb) continue;
    const size_t lo = b * kBlock, hi = std::min(n, lo + kBlock);
    for (size_t o = lo; o < hi; ++o) {
      if (eligible(o) >= tb) s.touched[nt++] = static_cast<uint32_t>(o);
    }
  }
  s.n_touched = nt;
}

void PostingIndex::SelectTopK(SearchScratch& s, const uint32_t* q, size_t width, size_t k,
                              const uint8_t* allowed_mask, uint64_t* out_ids,
                              uint32_t* out_counts) const {
  uint8_t* counts = s.counts.data();
  const uint32_t* touched = s.touched.data();
  const size_t nt = s.n_touched;
  const uint8_t* live = num_dead_ > 0 ? live_.data() : nullptr;
  const bool filtered = live != nullptr || allowed_mask != nullptr;
  auto keep = [&](uint32_t o) {
    return (live == nullptr || live[o]) && (allowed_mask == nullptr || allowed_mask[o]);
  };

  // Pass 1: histogram of counts over the eligible touched ordinals.
  size_t hist[kMaxActive + 1] = {0};
  if (!filtered) {
    for (size_t i = 0; i < nt; ++i) ++hist[counts[touched[i]]];
  } else {
    for (size_t i = 0; i < nt; ++i) {
      const uint32_t o = touched[i];
      if (keep(o)) ++hist[counts[o]];
    }
  }
  // The threshold count t: everything above t is in, `need` of the t bucket.
  uint32_t t = 1;
  size_t above = 0, cumulative = 0;
  bool reached = false;
  for (uint32_t c = kMaxActive; c >= 1; --c) {
    if (cumulative + hist[c] >= k) {
      t = c;
      above = cumulative;
      reached = true;
      break;
    }
    cumulative += hist[c];
  }
  if (!reached) above = cumulative - hist[1];
  const size_t need = reached ? k - above : hist[1];

  // Pass 2: collect the survivors and reset the counters.
  s.winners.clear();
  s.boundary.clear();
  for (size_t i = 0; i < nt; ++i) {
    const uint32_t o = touched[i];
    const uint32_t c = counts[o];
    counts[o] = 0;
    if (c < t || (filtered && !keep(o))) continue;
    (c > t ? s.winners : s.boundary).push_back(Candidate{o, c, 0.0});
  }

  const bool unit = activations_.empty();
  if (!unit) {
    for (Candidate& c : s.winners) c.activation = SharedActivation(c.ordinal, q, width);
    for (Candidate& c : s.boundary) c.activation = SharedActivation(c.ordinal, q, width);
  }
  if (s.boundary.size() > need) {
    // With unit activations every sum in the bucket is equal: Better() falls
    // through to the ordinal, as it must.
    std::nth_element(s.boundary.begin(), s.boundary.begin() + need, s.boundary.end(), Better);
    s.boundary.resize(need);
  }
  s.winners.insert(s.winners.end(), s.boundary.begin(), s.boundary.end());
  std::sort(s.winners.begin(), s.winners.end(), Better);

  const size_t m = std::min(k, s.winners.size());
  for (size_t r = 0; r < m; ++r) {
    out_ids[r] = ids_[s.winners[r].ordinal];
    out_counts[r] = s.winners[r].count;
  }
  std::fill(out_ids + m, out_ids + k, kPadId);
  std::fill(out_counts + m, out_counts + k, 0u);
}

}  // namespace chitta::posting
