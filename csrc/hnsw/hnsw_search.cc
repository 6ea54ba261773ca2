// csrc/hnsw/hnsw_search.cc
// Query-time HNSW search: greedy descent through the upper layers, then a
// beam search (ef) on layer 0 that walks through deleted and filtered-out
// nodes but only returns live, allowed ones. A selective filter widens ef; a
// very selective one (few allowed nodes) is answered by an exact scan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "hnsw/hnsw.h"
#include "hnsw/parallel.h"

namespace chitta::hnsw {
namespace {

// At or below this many allowed nodes an exact scan of them is cheaper than a
// graph walk that has to step over the rest.
constexpr size_t kExactFilterFloor = 1024;
constexpr size_t kExactFilterPerEf = 16;
// A filter admitting a fraction f of the live nodes multiplies ef by
// min(1/sqrt(f), kMaxFilterWiden).
constexpr double kMaxFilterWiden = 4.0;

}  // namespace

AllowedSet HnswIndex::MakeAllowedSet(const uint64_t* allowed, size_t n) const {
  AllowedSet set;
  set.bits.assign((count_ + 63) / 64 + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    auto it = label_to_node_.find(allowed[i]);
    if (it == label_to_node_.end()) continue;
    const uint32_t node = it->second;
    uint64_t& word = set.bits[node >> 6];
    const uint64_t bit = uint64_t{1} << (node & 63);
    if ((word & bit) == 0) {
      word |= bit;
      ++set.count;
    }
  }
  return set;
}

void HnswIndex::SearchBase(const float* q, uint32_t ep, size_t ef, const AllowedSet* filter,
                           VisitedList* visited, std::vector<Candidate>* out) const {
  const auto accept = [&](uint32_t i) {
    return deleted_[i] == 0 && (filter == nullptr || filter->Has(i));
  };
  std::priority_queue<Candidate, std::vector<Candidate>, Closer> cand;
  std::priority_queue<Candidate, std::vector<Candidate>, Farther> res;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  visited->TestAndSet(ep);
  const float d0 = Dist(q, ep);
  cand.push({d0, ep});
  if (accept(ep)) res.push({d0, ep});
  float bound = res.size() >= ef ? res.top().dist : kInf;
  while (!cand.empty()) {
    const Candidate c = cand.top();
    if (c.dist > bound) break;
    cand.pop();
    // The next candidate's links will be read soon: start fetching them.
    if (!cand.empty()) __builtin_prefetch(Links0(cand.top().id));
    const uint32_t* l = Links0(c.id);
    const uint32_t cnt = l[0];
    const uint16_t* marks = visited->data();
    for (uint32_t j = 1; j <= cnt; ++j) __builtin_prefetch(marks + l[j]);
    if (cnt > 0) __builtin_prefetch(VectorOf(l[1]));
    for (uint32_t j = 1; j <= cnt; ++j) {
      const uint32_t nb = l[j];
      if (j < cnt) __builtin_prefetch(VectorOf(l[j + 1]));
      if (visited->TestAndSet(nb)) continue;
      const float d = Dist(q, nb);
      if (d < bound) {
        cand.push({d, nb});
        if (accept(nb)) {
          res.push({d, nb});
          if (res.size() > ef) res.pop();
          if (res.size() >= ef) bound = res.top().dist;
        }
      }
    }
  }
  out->resize(res.size());
  for (size_t i = out->size(); i-- > 0;) {
    (*out)[i] = res.top();
    res.pop();
  }
}

void HnswIndex::SearchExact(const float* q, size_t k, const AllowedSet* filter,
                            std::vector<Candidate>* out) const {
  std::priority_queue<Candidate, std::vector<Candidate>, Farther> res;
  const auto consider = [&](uint32_t i) {
    if (deleted_[i]) return;
    const float d = Dist(q, i);
    if (res.size() < k || d < res.top().dist) {
      res.push({d, i});
      if (res.size() > k) res.pop();
    }
  };
  if (filter == nullptr) {
    for (uint32_t i = 0; i < count_; ++i) consider(i);
  } else {
    for (size_t w = 0; w < filter->bits.size(); ++w) {
      uint64_t word = filter->bits[w];
      while (word != 0) {
        const uint32_t i = static_cast<uint32_t>(w * 64 + __builtin_ctzll(word));
        word &= word - 1;
        if (i < count_) consider(i);
      }
    }
  }
  out->resize(res.size());
  for (size_t i = out->size(); i-- > 0;) {
    (*out)[i] = res.top();
    res.pop();
  }
}

size_t HnswIndex::UnreachableCount() const {
  if (count_ == 0) return 0;
  std::vector<uint8_t> seen(count_, 0);
  std::vector<uint32_t> stack = {entry_point_};
  seen[entry_point_] = 1;
  size_t reached = 1;
  while (!stack.empty()) {
    const uint32_t c = stack.back();
    stack.pop_back();
    const uint32_t* l = Links0(c);
    for (uint32_t j = 1; j <= l[0]; ++j) {
      if (!seen[l[j]]) {
        seen[l[j]] = 1;
        ++reached;
        stack.push_back(l[j]);
      }
    }
  }
  return count_ - reached;
}

void HnswIndex::SearchPrepared(const float* query, size_t k, size_t ef, const AllowedSet* filter,
                               std::vector<Hit>* out) const {
  out->clear();
  if (max_level_ < 0 || k == 0 || size() == 0) return;
  size_t ef_eff = std::max(ef, k);
  std::vector<Candidate> found;
  if (ef_eff >= count_) {
    // A beam as wide as the graph visits every node anyway: scan exactly
    // (this also reaches nodes that pruning left without in-links).
    SearchExact(query, k, filter, &found);
    ef_eff = 0;
  } else if (filter != nullptr) {
    if (filter->count == 0) return;
    if (filter->count <= std::max(kExactFilterFloor, kExactFilterPerEf * ef_eff)) {
      SearchExact(query, k, filter, &found);
      ef_eff = 0;
    } else {
      const double f = static_cast<double>(filter->count) / static_cast<double>(size());
      const double widen = std::min(1.0 / std::sqrt(std::max(f, 1e-9)), kMaxFilterWiden);
      ef_eff = static_cast<size_t>(std::ceil(static_cast<double>(ef_eff) * widen));
    }
  }
  if (ef_eff > 0) {
    const uint32_t ep = GreedyDescend(query, entry_point_, max_level_, 0, /*locked=*/false);
    auto visited = visited_pool_.Acquire(count_);
    SearchBase(query, ep, ef_eff, filter, visited.get(), &found);
  }
  const size_t n = std::min(k, found.size());
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) out->emplace_back(found[i].dist, labels_[found[i].id]);
}

Status HnswIndex::Search(const float* queries, size_t nq, size_t k, size_t ef,
                         const uint64_t* allowed, size_t n_allowed, bool use_filter,
                         int num_threads, uint64_t* out_ids, float* out_dist) const {
  if (k == 0) return Status::InvalidArgument("k must be positive");
  if (nq > 0 && queries == nullptr) return Status::InvalidArgument("null input");
  CHITTA_RETURN_IF_ERROR(CheckVectors(options_.metric, queries, nq, options_.dim));
  AllowedSet filter;
  if (use_filter) filter = MakeAllowedSet(allowed, n_allowed);
  const size_t dim = options_.dim;
  ParallelFor(nq, num_threads, [&](size_t qi) {
    std::vector<float> q(dim);
    (void)PrepareVector(options_.metric, queries + qi * dim, dim, q.data());
    std::vector<Hit> hits;
    SearchPrepared(q.data(), k, ef, use_filter ? &filter : nullptr, &hits);
    for (size_t j = 0; j < k; ++j) {
      const bool have = j < hits.size();
      out_ids[qi * k + j] = have ? hits[j].second : kNoId;
      out_dist[qi * k + j] = have ? hits[j].first : std::numeric_limits<float>::infinity();
    }
  });
  return Status::OK();
}

}  // namespace chitta::hnsw
