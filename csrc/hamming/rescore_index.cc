// csrc/hamming/rescore_index.cc
#include "hamming/rescore_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "hamming/binarize.h"

namespace chitta::hamming {
namespace {

constexpr size_t kMaxDim = 65536;
constexpr size_t kBaseCandidates = 400;
constexpr size_t kPrefetchRows = 4;

// Normalises rows[0..n) of dim into out; InvalidArgument on NaN/inf or zero.
Status NormaliseRows(const float* rows, size_t n, size_t dim, const char* what,
                     std::vector<float>* out) {
  const size_t bad = FindNonFinite(rows, n * dim);
  if (bad != n * dim) {
    return Status::InvalidArgument(std::string(what) + " " + std::to_string(bad / dim) +
                                   " has a NaN or inf");
  }
  out->resize(n * dim);
  for (size_t r = 0; r < n; ++r) {
    const float* v = rows + r * dim;
    double sq = 0.0;
    for (size_t i = 0; i < dim; ++i) sq += static_cast<double>(v[i]) * v[i];
    if (!(sq > 0.0) || !std::isfinite(sq)) {
      return Status::InvalidArgument(std::string(what) + " " + std::to_string(r) +
                                     " has zero (or overflowing) norm");
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(sq));
    float* o = out->data() + r * dim;
    for (size_t i = 0; i < dim; ++i) o[i] = v[i] * inv;
  }
  return Status::OK();
}

struct Scored {
  uint64_t slot;
  float score;
};

}  // namespace

float Dot(const float* a, const float* b, size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

Result<std::unique_ptr<RescoreIndex>> RescoreIndex::Create(size_t dim, size_t candidates,
                                                           bool external_rows) {
  if (dim == 0 || dim > kMaxDim) {
    return Status::InvalidArgument("dim must be in 1..65536, got " + std::to_string(dim));
  }
  return std::unique_ptr<RescoreIndex>(new RescoreIndex(dim, candidates, external_rows));
}

size_t RescoreIndex::DefaultCandidates(size_t n) {
  return std::max(kBaseCandidates, (n + 999) / 1000);
}

size_t RescoreIndex::CandidatesLocked(size_t requested, size_t k) const {
  size_t c = requested != 0 ? requested : candidates_;
  if (c == 0) c = DefaultCandidates(store_.live());
  return std::max(c, k);
}

size_t RescoreIndex::EffectiveCandidates() const {
  std::shared_lock lock(mu_);
  return CandidatesLocked(0, 0);
}

size_t RescoreIndex::size() const {
  std::shared_lock lock(mu_);
  return store_.live();
}

bool RescoreIndex::Contains(uint64_t id) const {
  std::shared_lock lock(mu_);
  return store_.Contains(id);
}

size_t RescoreIndex::MemoryBytes() const {
  std::shared_lock lock(mu_);
  return sizeof(*this) - sizeof(store_) + store_.MemoryBytes() + mean_.capacity() * sizeof(float);
}

Status RescoreIndex::SetMean(const float* mean) {
  std::unique_lock lock(mu_);
  if (!mean_.empty()) return Status::InvalidArgument("the mean is fixed once set or first used");
  if (FindNonFinite(mean, dim()) != dim()) return Status::InvalidArgument("mean has a NaN or inf");
  mean_.assign(mean, mean + dim());
  return Status::OK();
}

bool RescoreIndex::GetMean(std::vector<float>* out) const {
  std::shared_lock lock(mu_);
  if (mean_.empty()) return false;
  *out = mean_;
  return true;
}

Status RescoreIndex::Add(const uint64_t* ids, const float* vectors, size_t n) {
  if (external_rows()) return Status::InvalidArgument("this index refers to external rows: use add_refs");
  if (n == 0) return Status::OK();
  std::vector<float> unit;
  CHITTA_RETURN_IF_ERROR(NormaliseRows(vectors, n, dim(), "vector", &unit));
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(store_.CheckAdd(ids, n));
  std::vector<float> mean = mean_;
  if (mean.empty()) {
    std::vector<double> sum(dim(), 0.0);
    for (size_t r = 0; r < n; ++r) {
      for (size_t i = 0; i < dim(); ++i) sum[i] += unit[r * dim() + i];
    }
    mean.resize(dim());
    for (size_t i = 0; i < dim(); ++i) mean[i] = static_cast<float>(sum[i] / static_cast<double>(n));
  }
  std::vector<uint64_t> codes(n * words());
  BinarizeUnchecked(unit.data(), n, dim(), mean.data(), codes.data());
  store_.Append(ids, codes.data(), unit.data(), n);
  mean_ = std::move(mean);
  return Status::OK();
}

Status RescoreIndex::CheckCodes(const uint64_t* codes, size_t n) const {
  const size_t tail_bits = dim() % 64;
  if (tail_bits != 0) {
    const uint64_t stray = ~uint64_t{0} << tail_bits;
    for (size_t r = 0; r < n; ++r) {
      if (codes[r * words() + words() - 1] & stray) {
        return Status::InvalidArgument("code " + std::to_string(r) + " has bits set past dim");
      }
    }
  }
  return Status::OK();
}

Status RescoreIndex::AddCoded(const uint64_t* ids, const float* unit_rows, const uint64_t* codes,
                              size_t n) {
  if (external_rows()) return Status::InvalidArgument("this index refers to external rows: use add_refs");
  if (n == 0) return Status::OK();
  const size_t bad = FindNonFinite(unit_rows, n * dim());
  if (bad != n * dim()) {
    return Status::InvalidArgument("vector " + std::to_string(bad / dim()) + " has a NaN or inf");
  }
  CHITTA_RETURN_IF_ERROR(CheckCodes(codes, n));
  std::unique_lock lock(mu_);
  if (mean_.empty()) return Status::InvalidArgument("add_coded needs the mean the codes were made with (set_mean first)");
  CHITTA_RETURN_IF_ERROR(store_.CheckAdd(ids, n));
  store_.Reserve(n);
  store_.Append(ids, codes, unit_rows, n);
  return Status::OK();
}

Status RescoreIndex::AddRefs(const uint64_t* ids, const int64_t* refs, const uint64_t* codes,
                             size_t n) {
  if (!external_rows()) return Status::InvalidArgument("this index keeps its own rows: use add or add_coded");
  if (n == 0) return Status::OK();
  for (size_t r = 0; r < n; ++r) {
    if (refs[r] < 0) return Status::InvalidArgument("row " + std::to_string(r) + " is negative");
  }
  CHITTA_RETURN_IF_ERROR(CheckCodes(codes, n));
  std::unique_lock lock(mu_);
  if (mean_.empty()) return Status::InvalidArgument("add_refs needs the mean the codes were made with (set_mean first)");
  CHITTA_RETURN_IF_ERROR(store_.CheckAdd(ids, n));
  store_.Reserve(n);
  store_.Append(ids, codes, nullptr, n, refs);
  return Status::OK();
}

Status RescoreIndex::Remove(const uint64_t* ids, size_t n) {
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(store_.CheckRemove(ids, n));
  store_.Erase(ids, n);
  return Status::OK();
}

Status RescoreIndex::PrepareQueries(const float* queries, size_t nq, std::vector<float>* unit,
                                    std::vector<uint64_t>* codes) const {
  CHITTA_RETURN_IF_ERROR(NormaliseRows(queries, nq, dim(), "query", unit));
  codes->assign(nq * words(), 0);
  // Before any add there is no mean and nothing to find: codes stay zero.
  if (!mean_.empty()) BinarizeUnchecked(unit->data(), nq, dim(), mean_.data(), codes->data());
  return Status::OK();
}

Status RescoreIndex::Search(const float* queries, size_t nq, size_t k, size_t candidates,
                            uint64_t* out_ids, float* out_scores, const float* matrix,
                            size_t matrix_rows) const {
  if (k == 0) return Status::InvalidArgument("k must be positive");
  const bool external = external_rows();
  if (external && matrix == nullptr) return Status::InvalidArgument("this index refers to external rows: give the matrix");
  const FilterFn filter = ActiveFilter();
  std::shared_lock lock(mu_);
  auto row_of = [&](uint64_t slot) -> const float* {
    return external ? matrix + static_cast<size_t>(store_.ref_at(slot)) * dim() : store_.row_at(slot);
  };
  std::vector<float> unit;
  std::vector<uint64_t> codes;
  CHITTA_RETURN_IF_ERROR(PrepareQueries(queries, nq, &unit, &codes));
  const size_t c = CandidatesLocked(candidates, k);
  std::vector<Neighbor> hits;
  std::vector<Scored> scored;
  for (size_t q = 0; q < nq; ++q) {
    const float* query = unit.data() + q * dim();
    store_.Search(filter, codes.data() + q * words(), c, &hits);
    scored.clear();
    if (external) {  // every row read must lie inside the matrix given
      for (const Neighbor& h : hits) {
        if (static_cast<uint64_t>(store_.ref_at(h.slot)) >= matrix_rows) {
          return Status::InvalidArgument("id " + std::to_string(store_.id_at(h.slot)) + " refers to row " +
                                         std::to_string(store_.ref_at(h.slot)) + ", past the matrix's " +
                                         std::to_string(matrix_rows) + " rows");
        }
      }
    }
    // Candidate rows are scattered 1 KB reads: prefetch a few rows ahead so
    // their memory latency overlaps the dot products.
    const size_t row_bytes = dim() * sizeof(float);
    for (size_t j = 0; j < hits.size(); ++j) {
      if (j + kPrefetchRows < hits.size()) {
        const char* ahead = reinterpret_cast<const char*>(row_of(hits[j + kPrefetchRows].slot));
        for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(ahead + b);
      }
      scored.push_back({hits[j].slot, Dot(query, row_of(hits[j].slot), dim())});
    }
    const size_t take = std::min(k, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(take),
                      scored.end(), [](const Scored& a, const Scored& b) {
                        return a.score != b.score ? a.score > b.score : a.slot < b.slot;
                      });
    for (size_t j = 0; j < k; ++j) {
      out_ids[q * k + j] = j < take ? store_.id_at(scored[j].slot) : kPadId;
      out_scores[q * k + j] = j < take ? scored[j].score : -std::numeric_limits<float>::infinity();
    }
  }
  return Status::OK();
}

Status RescoreIndex::CandidateIds(const float* query, size_t candidates,
                                  std::vector<uint64_t>* out) const {
  std::shared_lock lock(mu_);
  std::vector<float> unit;
  std::vector<uint64_t> codes;
  CHITTA_RETURN_IF_ERROR(PrepareQueries(query, 1, &unit, &codes));
  std::vector<Neighbor> hits;
  store_.Search(ActiveFilter(), codes.data(), CandidatesLocked(candidates, 0), &hits);
  out->clear();
  for (const Neighbor& h : hits) out->push_back(store_.id_at(h.slot));
  return Status::OK();
}

}  // namespace chitta::hamming
