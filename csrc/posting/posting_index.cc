// csrc/posting/posting_index.cc
// Mutation side of the posting index: create, add, remove, compact, accessors.
// Search lives in posting_search.cc, persistence in posting_io.cc.
#include "posting/posting_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>

namespace chitta::posting {
namespace {

constexpr uint32_t kDeadOrdinal = ~uint32_t{0};

std::string IdText(uint64_t id) { return std::to_string(id); }

}  // namespace

PostingIndex::PostingIndex(const Options& options)
    : options_(options), postings_(options.n_features) {
  features_.Configure(options.n_features, options.active);
}

Status PostingIndex::ValidateOptions(const Options& o) {
  if (o.n_features == 0 || o.n_features > kMaxFeatures) {
    return Status::InvalidArgument("n_features must be in [1, " + std::to_string(kMaxFeatures) +
                                   "], got " + std::to_string(o.n_features));
  }
  if (o.active == 0 || o.active > kMaxActive || o.active > o.n_features) {
    return Status::InvalidArgument("active must be in [1, min(255, n_features)], got " +
                                   std::to_string(o.active));
  }
  if (!(o.compact_fraction > 0.0 && o.compact_fraction <= 1.0)) {
    return Status::InvalidArgument("compact_fraction must be in (0, 1]");
  }
  return Status::OK();
}

Result<std::unique_ptr<PostingIndex>> PostingIndex::Create(const Options& options) {
  Status st = ValidateOptions(options);
  if (!st.ok()) return st;
  return std::unique_ptr<PostingIndex>(new PostingIndex(options));
}

Status PostingIndex::Add(const uint64_t* ids, size_t n, const uint32_t* features,
                         const float* activations) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (n == 0) return Status::OK();
  const size_t a = options_.active;
  if (ids_.size() + n > kMaxOrdinals) {
    return Status::InvalidArgument("index full: at most 2**32-2 ordinals (compact first)");
  }

  // Validate the whole batch before touching the index.
  IdMap batch;
  batch.Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = ids[i];
    if (id == kPadId) {
      return Status::InvalidArgument("id 2**64-1 is reserved as result padding (row " +
                                     std::to_string(i) + ")");
    }
    if (id_to_ordinal_.Contains(id)) {
      return Status::InvalidArgument("id " + IdText(id) + " is already in the index (row " +
                                     std::to_string(i) + ")");
    }
    if (!batch.Insert(id, static_cast<uint32_t>(i))) {
      return Status::InvalidArgument("duplicate id " + IdText(id) + " in batch (rows " +
                                     std::to_string(batch.Find(id)) + " and " +
                                     std::to_string(i) + ")");
    }
  }
  std::vector<uint32_t> rows(n * a);
  std::vector<float> acts(activations ? n * a : 0);
  std::vector<uint32_t> perm(a);
  bool batch_unit = true;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t* f = features + i * a;
    bool sorted = true;
    for (size_t j = 0; j < a; ++j) {
      if (f[j] >= options_.n_features) {
        return Status::InvalidArgument("feature id " + std::to_string(f[j]) + " at row " +
                                       std::to_string(i) + " is not below n_features=" +
                                       std::to_string(options_.n_features));
      }
      if (j > 0 && f[j] <= f[j - 1]) sorted = false;
      if (activations) {
        const float v = activations[i * a + j];
        if (!std::isfinite(v)) {
          return Status::InvalidArgument("activation at row " + std::to_string(i) +
                                         " is not finite");
        }
        if (v != 1.0f) batch_unit = false;
      }
    }
    std::iota(perm.begin(), perm.end(), 0u);
    if (!sorted) std::sort(perm.begin(), perm.end(), [f](uint32_t x, uint32_t y) { return f[x] < f[y]; });
    uint32_t* row = rows.data() + i * a;
    for (size_t j = 0; j < a; ++j) {
      row[j] = f[perm[j]];
      if (j > 0 && row[j] == row[j - 1]) {
        return Status::InvalidArgument("duplicate feature id " + std::to_string(row[j]) +
                                       " in row " + std::to_string(i));
      }
      if (activations) acts[i * a + j] = activations[i * a + perm[j]];
    }
  }

  // Commit.
  const size_t base = ids_.size();
  const bool store_acts = !activations_.empty() || !batch_unit;
  if (store_acts && activations_.empty()) activations_.assign(base * a, 1.0f);
  ids_.insert(ids_.end(), ids, ids + n);
  live_.resize(base + n, 1);
  features_.Append(rows.data(), n);
  if (store_acts) {
    if (activations) {
      activations_.insert(activations_.end(), acts.begin(), acts.end());
    } else {
      activations_.resize(activations_.size() + n * a, 1.0f);
    }
  }
  id_to_ordinal_.Reserve(id_to_ordinal_.size() + n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t ordinal = static_cast<uint32_t>(base + i);
    (void)id_to_ordinal_.Insert(ids[i], ordinal);
    const uint32_t* row = rows.data() + i * a;
    for (size_t j = 0; j < a; ++j) postings_[row[j]].push_back(ordinal);
  }
  return Status::OK();
}

void PostingIndex::Reserve(size_t rows, const uint32_t* feature_counts, bool activations) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  const size_t total = ids_.size() + rows;
  ids_.reserve(total);
  live_.reserve(total);
  features_.ReserveRows(total);
  if (activations || !activations_.empty()) activations_.reserve(total * options_.active);
  id_to_ordinal_.Reserve(id_to_ordinal_.size() + rows);
  if (feature_counts != nullptr) {
    for (uint32_t f = 0; f < options_.n_features; ++f) {
      if (feature_counts[f] != 0) postings_[f].reserve(postings_[f].size() + feature_counts[f]);
    }
  }
}

Status PostingIndex::Remove(const uint64_t* ids, size_t n) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  IdMap seen;
  seen.Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!id_to_ordinal_.Contains(ids[i])) {
      return Status::NotFound("id " + IdText(ids[i]) + " is not in the index");
    }
    if (!seen.Insert(ids[i], static_cast<uint32_t>(i))) {
      return Status::InvalidArgument("duplicate id " + IdText(ids[i]) + " in remove batch");
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t ordinal = id_to_ordinal_.Find(ids[i]);
    live_[ordinal] = 0;
    (void)id_to_ordinal_.Erase(ids[i]);
    ++num_dead_;
  }
  if (num_dead_ > 0 &&
      static_cast<double>(num_dead_) > options_.compact_fraction * static_cast<double>(ids_.size())) {
    CompactLocked();
  }
  return Status::OK();
}

void PostingIndex::Compact() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  CompactLocked();
}

void PostingIndex::CompactLocked() {
  if (num_dead_ == 0) return;
  const size_t a = options_.active;
  std::vector<uint32_t> remap(ids_.size(), kDeadOrdinal);
  uint32_t next = 0;
  for (size_t o = 0; o < ids_.size(); ++o) {
    if (live_[o]) remap[o] = next++;
  }
  for (auto& list : postings_) {
    size_t w = 0;
    for (uint32_t o : list) {
      const uint32_t r = remap[o];
      if (r != kDeadOrdinal) list[w++] = r;  // remap is monotone: order kept
    }
    list.resize(w);
    list.shrink_to_fit();
  }
  const bool has_acts = !activations_.empty();
  bool all_unit = true;
  for (size_t o = 0; o < ids_.size(); ++o) {
    const uint32_t r = remap[o];
    if (r == kDeadOrdinal) continue;
    ids_[r] = ids_[o];  // r <= o: moving left never overwrites a pending row
    features_.MoveRow(o, r);
    if (has_acts) {
      std::copy_n(activations_.begin() + o * a, a, activations_.begin() + size_t{r} * a);
      for (size_t j = 0; j < a; ++j) all_unit = all_unit && activations_[size_t{r} * a + j] == 1.0f;
    }
  }
  ids_.resize(next);
  ids_.shrink_to_fit();
  features_.Truncate(next);
  if (has_acts && all_unit) {
    activations_.clear();
  } else if (has_acts) {
    activations_.resize(size_t{next} * a);
  }
  activations_.shrink_to_fit();
  live_.assign(next, 1);
  live_.shrink_to_fit();
  id_to_ordinal_.Clear();
  id_to_ordinal_.Reserve(next);
  for (uint32_t o = 0; o < next; ++o) (void)id_to_ordinal_.Insert(ids_[o], o);
  num_dead_ = 0;
}

bool PostingIndex::Contains(uint64_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return id_to_ordinal_.Contains(id);
}

size_t PostingIndex::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return ids_.size() - num_dead_;
}

size_t PostingIndex::num_tombstones() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return num_dead_;
}

bool PostingIndex::unit_activations() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return activations_.empty();
}

size_t PostingIndex::MemoryBytes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  size_t bytes = sizeof(*this) + postings_.capacity() * sizeof(postings_[0]);
  for (const auto& list : postings_) bytes += list.capacity() * sizeof(uint32_t);
  bytes += ids_.capacity() * sizeof(uint64_t) + live_.capacity();
  bytes += features_.MemoryBytes() + activations_.capacity() * sizeof(float);
  return bytes + id_to_ordinal_.MemoryBytes();
}

std::vector<uint64_t> PostingIndex::LiveIds() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<uint64_t> out;
  out.reserve(ids_.size() - num_dead_);
  for (size_t o = 0; o < ids_.size(); ++o) {
    if (live_[o]) out.push_back(ids_[o]);
  }
  return out;
}

Status PostingIndex::Get(uint64_t id, uint32_t* features, float* activations) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const uint32_t o = id_to_ordinal_.Find(id);
  if (o == IdMap::kMissing) return Status::NotFound("id " + IdText(id) + " is not in the index");
  const size_t a = options_.active;
  features_.Read(o, features);
  if (activations_.empty()) {
    std::fill_n(activations, a, 1.0f);
  } else {
    std::copy_n(activations_.begin() + size_t{o} * a, a, activations);
  }
  return Status::OK();
}

}  // namespace chitta::posting
