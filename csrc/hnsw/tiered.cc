// csrc/hnsw/tiered.cc
// Routing of inserts and deletes between the tiers, the merged search, and
// the copy-and-swap merge.
#include "hnsw/tiered.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "hnsw/parallel.h"

namespace chitta::hnsw {

Status ValidateTieredOptions(const TieredOptions& o) {
  CHITTA_RETURN_IF_ERROR(ValidateOptions(o.graph));
  if (!(o.merge_ratio > 0.0) || o.merge_ratio > 1000.0) {
    return Status::InvalidArgument("merge_ratio must be in (0, 1000]");
  }
  return Status::OK();
}

TieredIndex::TieredIndex(const TieredOptions& options)
    : options_(options),
      base_(std::make_shared<HnswIndex>(options.graph)),
      delta_(std::make_shared<HnswIndex>(DeltaOptions(0))) {}

Result<std::unique_ptr<TieredIndex>> TieredIndex::Create(const TieredOptions& options) {
  Status st = ValidateTieredOptions(options);
  if (!st.ok()) return st;
  return std::make_unique<TieredIndex>(options);
}

Options TieredIndex::DeltaOptions(size_t generation) const {
  Options o = options_.graph;
  o.seed = options_.graph.seed + 0x9E3779B97F4A7C15ull * (generation + 1);
  return o;
}

Status TieredIndex::Add(const uint64_t* ids, const float* vectors, size_t n, int num_threads) {
  std::lock_guard<std::mutex> writer(write_mu_);
  // Readers never mutate, so the tiers can be checked without the rw lock.
  CHITTA_RETURN_IF_ERROR(base_->CheckAdd(ids, vectors, n));
  for (size_t i = 0; i < n; ++i) {
    if (delta_->Contains(ids[i])) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " is already in the index");
    }
  }
  const uint64_t in_base = base_->node_count();
  const size_t to_base =
      in_base >= options_.threshold ? 0 : std::min<uint64_t>(n, options_.threshold - in_base);
  std::unique_lock<std::shared_mutex> lock(rw_);
  const size_t dim = options_.graph.dim;
  CHITTA_RETURN_IF_ERROR(base_->Add(ids, vectors, to_base, num_threads));
  return delta_->Add(ids + to_base, vectors + to_base * dim, n - to_base, num_threads);
}

Status TieredIndex::MarkDeleted(const uint64_t* ids, size_t n) {
  std::lock_guard<std::mutex> writer(write_mu_);
  std::vector<uint64_t> in_base;
  std::vector<uint64_t> in_delta;
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " appears twice in the batch");
    }
    if (base_->Contains(ids[i])) {
      in_base.push_back(ids[i]);
    } else if (delta_->Contains(ids[i])) {
      in_delta.push_back(ids[i]);
    } else {
      return Status::NotFound("id " + std::to_string(ids[i]) + " is not in the index");
    }
  }
  std::unique_lock<std::shared_mutex> lock(rw_);
  CHITTA_RETURN_IF_ERROR(base_->MarkDeleted(in_base.data(), in_base.size()));
  return delta_->MarkDeleted(in_delta.data(), in_delta.size());
}

namespace {

// Merges two nearest-first hit lists into the best k.
void MergeHits(const std::vector<Hit>& a, const std::vector<Hit>& b, size_t k, MergeMode mode,
               std::vector<Hit>* out) {
  out->clear();
  if (mode == MergeMode::kDistance) {
    out->resize(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), out->begin());
    if (out->size() > k) out->resize(k);
    return;
  }
  // RRF: each id sits in one tier, so its fused score is 1 / (60 + rank).
  // Ties (same rank in both tiers) go to the smaller distance.
  struct Scored {
    double score;
    Hit hit;
  };
  std::vector<Scored> all;
  all.reserve(a.size() + b.size());
  for (size_t r = 0; r < a.size(); ++r) all.push_back({1.0 / (kRrfK + r + 1), a[r]});
  for (size_t r = 0; r < b.size(); ++r) all.push_back({1.0 / (kRrfK + r + 1), b[r]});
  std::stable_sort(all.begin(), all.end(), [](const Scored& x, const Scored& y) {
    return x.score != y.score ? x.score > y.score : x.hit < y.hit;
  });
  for (size_t i = 0; i < all.size() && i < k; ++i) out->push_back(all[i].hit);
}

}  // namespace

Status TieredIndex::Search(const float* queries, size_t nq, size_t k, size_t ef,
                           const uint64_t* allowed, size_t n_allowed, bool use_filter,
                           MergeMode mode, int num_threads, uint64_t* out_ids,
                           float* out_dist) const {
  if (k == 0) return Status::InvalidArgument("k must be positive");
  if (nq > 0 && queries == nullptr) return Status::InvalidArgument("null input");
  const size_t dim = options_.graph.dim;
  CHITTA_RETURN_IF_ERROR(CheckVectors(options_.graph.metric, queries, nq, dim));
  std::shared_lock<std::shared_mutex> lock(rw_);
  const HnswIndex& base = *base_;
  const HnswIndex& delta = *delta_;
  AllowedSet base_filter;
  AllowedSet delta_filter;
  if (use_filter) {
    base_filter = base.MakeAllowedSet(allowed, n_allowed);
    delta_filter = delta.MakeAllowedSet(allowed, n_allowed);
  }
  ParallelFor(nq, num_threads, [&](size_t qi) {
    std::vector<float> q(dim);
    (void)PrepareVector(options_.graph.metric, queries + qi * dim, dim, q.data());
    std::vector<Hit> a;
    std::vector<Hit> b;
    std::vector<Hit> hits;
    base.SearchPrepared(q.data(), k, ef, use_filter ? &base_filter : nullptr, &a);
    delta.SearchPrepared(q.data(), k, ef, use_filter ? &delta_filter : nullptr, &b);
    MergeHits(a, b, k, mode, &hits);
    for (size_t j = 0; j < k; ++j) {
      const bool have = j < hits.size();
      out_ids[qi * k + j] = have ? hits[j].second : kNoId;
      out_dist[qi * k + j] = have ? hits[j].first : std::numeric_limits<float>::infinity();
    }
  });
  return Status::OK();
}

bool TieredIndex::NeedsMergeLocked() const {
  const size_t d = delta_->size();
  const size_t b = base_->size();
  return d > 0 && static_cast<double>(d) > options_.merge_ratio * static_cast<double>(b);
}

bool TieredIndex::NeedsMerge() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return NeedsMergeLocked();
}

Status TieredIndex::Merge(bool force, int num_threads, bool* merged) {
  *merged = false;
  std::lock_guard<std::mutex> writer(write_mu_);
  if (delta_->node_count() == 0 || !(force || NeedsMergeLocked())) return Status::OK();
  // Build beside the live tiers; searches keep reading them meanwhile.
  std::shared_ptr<HnswIndex> next = base_->Clone();
  std::vector<uint64_t> ids;
  std::vector<float> vectors;
  ids.reserve(delta_->size());
  vectors.reserve(delta_->size() * options_.graph.dim);
  delta_->ForEachLive([&](uint64_t id, const float* v) {
    ids.push_back(id);
    vectors.insert(vectors.end(), v, v + options_.graph.dim);
  });
  next->AddPrepared(ids.data(), vectors.data(), ids.size(), num_threads);
  auto fresh = std::make_shared<HnswIndex>(DeltaOptions(merges_ + 1));
  std::shared_ptr<HnswIndex> old_base;
  std::shared_ptr<HnswIndex> old_delta;
  {
    std::unique_lock<std::shared_mutex> lock(rw_);
    old_base = std::exchange(base_, std::move(next));
    old_delta = std::exchange(delta_, std::move(fresh));
    ++merges_;
  }
  *merged = true;
  return Status::OK();  // the old tiers are freed here, outside the lock
}

Status TieredIndex::Save(const std::string& base_path, const std::string& delta_path,
                         const RowSource* rows) const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  CHITTA_RETURN_IF_ERROR(base_->Save(base_path, rows));
  return delta_->Save(delta_path, rows);
}

Result<std::unique_ptr<TieredIndex>> TieredIndex::Load(const std::string& base_path,
                                                       const std::string& delta_path,
                                                       uint64_t threshold, double merge_ratio,
                                                       const RowSource* rows) {
  auto base = HnswIndex::Load(base_path, rows);
  if (!base.ok()) return base.status();
  auto delta = HnswIndex::Load(delta_path, rows);
  if (!delta.ok()) return delta.status();
  const Options& bo = base.value()->options();
  const Options& d = delta.value()->options();
  if (bo.dim != d.dim || bo.M != d.M || bo.metric != d.metric ||
      bo.ef_construction != d.ef_construction) {
    return Status::Corruption("base and delta files have different parameters: " + base_path +
                              ", " + delta_path);
  }
  TieredOptions o;
  o.graph = bo;
  o.threshold = threshold;
  o.merge_ratio = merge_ratio;
  Status st = ValidateTieredOptions(o);
  if (!st.ok()) return st;
  bool clash = false;
  const HnswIndex& b = *base.value();
  delta.value()->ForEachLive([&](uint64_t id, const float*) { clash = clash || b.Contains(id); });
  if (clash) {
    return Status::Corruption("an id is live in both the base and the delta (mismatched pair?): " +
                              delta_path);
  }
  auto index = std::make_unique<TieredIndex>(o);
  index->base_ = std::shared_ptr<HnswIndex>(std::move(base.value()));
  index->delta_ = std::shared_ptr<HnswIndex>(std::move(delta.value()));
  return index;
}

size_t TieredIndex::size() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return base_->size() + delta_->size();
}
size_t TieredIndex::base_size() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return base_->size();
}
size_t TieredIndex::delta_size() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return delta_->size();
}
size_t TieredIndex::merge_count() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return merges_;
}
bool TieredIndex::Contains(uint64_t id) const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return base_->Contains(id) || delta_->Contains(id);
}
size_t TieredIndex::MemoryBytes() const {
  std::shared_lock<std::shared_mutex> lock(rw_);
  return base_->MemoryBytes() + delta_->MemoryBytes();
}

}  // namespace chitta::hnsw
