// csrc/hnsw/brute_force.cc
// Exact scan over every stored vector; removal swaps the last row in.
#include "hnsw/brute_force.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_set>

#include "hnsw/parallel.h"

namespace chitta::hnsw {

BruteForceIndex::BruteForceIndex(uint32_t dim, Metric metric)
    : dim_(dim), metric_(metric), dot_(ChosenDot()) {}

Result<std::unique_ptr<BruteForceIndex>> BruteForceIndex::Create(uint32_t dim, Metric metric) {
  Options o;
  o.dim = dim;
  o.metric = metric;
  Status st = ValidateOptions(o);
  if (!st.ok()) return st;
  return std::make_unique<BruteForceIndex>(dim, metric);
}

Status BruteForceIndex::Add(const uint64_t* ids, const float* vectors, size_t n) {
  if (n == 0) return Status::OK();
  if (ids == nullptr || vectors == nullptr) return Status::InvalidArgument("null input");
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kNoId) {
      return Status::InvalidArgument("id 2^64-1 is reserved (it pads missing results)");
    }
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " appears twice in the batch");
    }
    if (slot_.count(ids[i]) != 0) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " is already in the index");
    }
  }
  CHITTA_RETURN_IF_ERROR(CheckVectors(metric_, vectors, n, dim_));
  const size_t base = labels_.size();
  vectors_.resize((base + n) * dim_);
  for (size_t i = 0; i < n; ++i) {
    (void)PrepareVector(metric_, vectors + i * dim_, dim_, vectors_.data() + (base + i) * dim_);
    labels_.push_back(ids[i]);
    slot_[ids[i]] = base + i;
  }
  return Status::OK();
}

Status BruteForceIndex::MarkDeleted(const uint64_t* ids, size_t n) {
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " appears twice in the batch");
    }
    if (slot_.count(ids[i]) == 0) {
      return Status::NotFound("id " + std::to_string(ids[i]) + " is not in the index");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t s = slot_[ids[i]];
    const size_t last = labels_.size() - 1;
    if (s != last) {
      std::memcpy(&vectors_[s * dim_], &vectors_[last * dim_], dim_ * sizeof(float));
      labels_[s] = labels_[last];
      slot_[labels_[s]] = s;
    }
    labels_.pop_back();
    vectors_.resize(labels_.size() * dim_);
    slot_.erase(ids[i]);
  }
  return Status::OK();
}

Status BruteForceIndex::Search(const float* queries, size_t nq, size_t k, const uint64_t* allowed,
                               size_t n_allowed, bool use_filter, int num_threads,
                               uint64_t* out_ids, float* out_dist) const {
  if (k == 0) return Status::InvalidArgument("k must be positive");
  if (nq > 0 && queries == nullptr) return Status::InvalidArgument("null input");
  CHITTA_RETURN_IF_ERROR(CheckVectors(metric_, queries, nq, dim_));
  std::vector<uint8_t> ok;
  if (use_filter) {
    ok.assign(labels_.size(), 0);
    for (size_t i = 0; i < n_allowed; ++i) {
      auto it = slot_.find(allowed[i]);
      if (it != slot_.end()) ok[it->second] = 1;
    }
  }
  ParallelFor(nq, num_threads, [&](size_t qi) {
    std::vector<float> q(dim_);
    (void)PrepareVector(metric_, queries + qi * dim_, dim_, q.data());
    std::vector<Hit> hits;
    hits.reserve(labels_.size());
    for (size_t s = 0; s < labels_.size(); ++s) {
      if (use_filter && !ok[s]) continue;
      hits.emplace_back(1.0f - dot_(q.data(), &vectors_[s * dim_], dim_), labels_[s]);
    }
    const size_t m = std::min(k, hits.size());
    std::partial_sort(hits.begin(), hits.begin() + m, hits.end());
    for (size_t j = 0; j < k; ++j) {
      out_ids[qi * k + j] = j < m ? hits[j].second : kNoId;
      out_dist[qi * k + j] = j < m ? hits[j].first : std::numeric_limits<float>::infinity();
    }
  });
  return Status::OK();
}

}  // namespace chitta::hnsw
