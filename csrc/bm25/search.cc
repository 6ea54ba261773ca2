// csrc/bm25/search.cc
// Index::Search: term-at-a-time BM25 scoring (formula in index.h) with a dense
// per-thread accumulator or a sparse sort-based one, then a bounded top-k heap.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "bm25/index.h"
#include "bm25/top_k.h"

namespace chitta::bm25 {
namespace {

struct DenseScratch {
  std::vector<float> acc;
  std::vector<uint32_t> touched;
};

}  // namespace

Status Index::Search(std::string_view query, size_t k, const std::vector<uint64_t>* allowed,
                     std::vector<Hit>* out, Accumulator accumulator, Method method) const {
  out->clear();
  if (k == 0) return Status::InvalidArgument("k must be >= 1");
  std::vector<std::string> tokens;
  CHITTA_RETURN_IF_ERROR(Tokenize(query, tokenizer_, &tokens));
  if (tokens.empty()) return Status::OK();
  std::sort(tokens.begin(), tokens.end());

  std::shared_lock lock(mu_);
  if (live_ == 0) return Status::OK();
  const double n_docs = static_cast<double>(live_);
  std::vector<QueryTerm> terms;
  for (size_t i = 0; i < tokens.size();) {
    size_t j = i;
    while (j < tokens.size() && tokens[j] == tokens[i]) ++j;
    auto it = term_ids_.find(tokens[i]);
    if (it != term_ids_.end() && postings_[it->second].df > 0) {
      const double df = postings_[it->second].df;
      const double idf = std::log(1.0 + (n_docs - df + 0.5) / (df + 0.5));
      terms.push_back({it->second, static_cast<float>(idf * static_cast<double>(j - i))});
    }
    i = j;
  }
  if (terms.empty()) return Status::OK();

  const double avgdl = static_cast<double>(total_len_) / n_docs;
  // An index whose documents are all empty has avgdl 0 but then no postings either.
  const Norm norm{static_cast<float>(k1_), static_cast<float>(k1_ * (1.0 - b_)),
                  avgdl > 0 ? static_cast<float>(k1_ * b_ / avgdl) : 0.0f};

  // Allowed ids -> ordinals (unknown ids and padding are ignored).
  std::vector<uint32_t> allowed_ords;
  if (allowed != nullptr) {
    allowed_ords.reserve(allowed->size());
    for (uint64_t id : *allowed) {
      auto it = id_to_ord_.find(id);
      if (it != id_to_ord_.end()) allowed_ords.push_back(it->second);
    }
    if (allowed_ords.empty()) return Status::OK();
  }
  const std::vector<uint32_t>* filter = allowed != nullptr ? &allowed_ords : nullptr;
  size_t postings = 0;
  for (const QueryTerm& qt : terms) postings += postings_[qt.term].ords.size();
  // Short lists: the term-at-a-time scan costs less than the pruned search's
  // per-document cursor work (measured on LoCoMo questions: docs/DECISIONS.md D-010).
  if (method == Method::kExhaustive || (method == Method::kAuto && postings < kPrunedMinPostings)) {
    SearchExhaustiveLocked(terms, norm, filter, accumulator, k, out);
    return Status::OK();
  }
  if (filter != nullptr) {
    // Few allowed documents: score each from the forward index (cost ~ allowed
    // x terms) instead of walking posting lists (cost ~ the lists' lengths).
    if (allowed_ords.size() * terms.size() * 4 <= postings) {
      EnsureForward();
      SearchForwardLocked(terms, norm, std::move(allowed_ords), k, out);
      return Status::OK();
    }
  }
  SearchPrunedLocked(terms, norm, filter, k, out);
  return Status::OK();
}

void Index::SearchExhaustiveLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                                   const std::vector<uint32_t>* filter, Accumulator accumulator,
                                   size_t k, std::vector<Hit>* out) const {
  auto contribution = [&](float weight, uint32_t tf, uint32_t len) {
    return norm.Contribution(weight, tf, len);
  };
  const bool filtered = filter != nullptr;
  std::vector<uint32_t> allowed_ords = filtered ? *filter : std::vector<uint32_t>();
  TopK top(k);
  if (accumulator == Accumulator::kSparse) {
    std::vector<std::pair<uint32_t, float>> pairs;
    for (const QueryTerm& qt : terms) {
      const PostingList& list = postings_[qt.term];
      for (size_t i = 0; i < list.ords.size(); ++i) {
        const uint32_t ord = list.ords[i];
        const uint32_t len = doc_len_[ord];
        if (len == kDeadLen) continue;
        pairs.emplace_back(ord, contribution(qt.weight, TfAt(qt.term, list, i), len));
      }
    }
    // Stable: contributions of one ordinal are summed in query-term order, the
    // same order the dense accumulator uses, so both give identical floats.
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    if (filtered) {
      std::sort(allowed_ords.begin(), allowed_ords.end());
      allowed_ords.erase(std::unique(allowed_ords.begin(), allowed_ords.end()),
                         allowed_ords.end());
    }
    size_t ai = 0;
    for (size_t i = 0; i < pairs.size();) {
      const uint32_t ord = pairs[i].first;
      float sum = 0.0f;
      for (; i < pairs.size() && pairs[i].first == ord; ++i) sum += pairs[i].second;
      if (filtered) {
        while (ai < allowed_ords.size() && allowed_ords[ai] < ord) ++ai;
        if (ai == allowed_ords.size() || allowed_ords[ai] != ord) continue;
      }
      top.Offer(ord_ids_[ord], sum);
    }
  } else {
    thread_local DenseScratch scratch;
    if (scratch.acc.size() < ord_ids_.size()) scratch.acc.resize(ord_ids_.size(), 0.0f);
    float* acc = scratch.acc.data();
    std::vector<uint32_t>& touched = scratch.touched;
    size_t postings = 0;
    for (const QueryTerm& qt : terms) postings += postings_[qt.term].ords.size();
    // room for every posting: the loop appends through a plain pointer, without a branch
    if (touched.size() < postings) touched.resize(postings);
    uint32_t* first_touch = touched.data();
    size_t n_touched = 0;
    const uint32_t* lens = doc_len_.data();
    // In blocks of kScoreBlock postings: numerators and denominators first, then the
    // divisions as one loop the compiler vectorizes (one division per posting was the
    // loop's latency), then the sums. Each contribution is Norm::Contribution's
    // arithmetic in its order ((w * f) * (k1 + 1)) / ((f + a) + c * len), so the
    // floats are the same as the pruned search's, bit for bit.
    constexpr size_t kScoreBlock = 64;
    float num[kScoreBlock], den[kScoreBlock];
    uint32_t blk_ords[kScoreBlock];
    const float k1p = norm.k1 + 1.0f;
    for (const QueryTerm& qt : terms) {
      const PostingList& list = postings_[qt.term];
      const uint32_t* ords = list.ords.data();
      const uint16_t* tfs = list.tfs.data();
      const size_t m = list.ords.size();
      for (size_t lo = 0; lo < m; lo += kScoreBlock) {
        const size_t hi = std::min(m, lo + kScoreBlock);
        size_t live = 0;
        for (size_t i = lo; i < hi; ++i) {
          const uint32_t ord = ords[i];
          const uint32_t len = lens[ord];
          if (len == kDeadLen) continue;
          const float f = static_cast<float>(tfs[i] == kTfOverflow ? TfAt(qt.term, list, i) : tfs[i]);
          blk_ords[live] = ord;
          num[live] = qt.weight * f * k1p;
          den[live] = f + norm.a + norm.c * static_cast<float>(len);
          ++live;
        }
        for (size_t j = 0; j < live; ++j) num[j] /= den[j];
        for (size_t j = 0; j < live; ++j) {
          const uint32_t ord = blk_ords[j];
          first_touch[n_touched] = ord;
          n_touched += acc[ord] == 0.0f;  // kept when first touched (contributions are > 0)
          acc[ord] += num[j];
        }
      }
    }
    const uint32_t* touched_end = first_touch + n_touched;
    if (!filtered) {
      for (const uint32_t* t = first_touch; t != touched_end; ++t) top.Offer(ord_ids_[*t], acc[*t]);
    } else {
      // Reading zeroes the slot, so an id listed twice in `allowed` counts once.
      for (uint32_t ord : allowed_ords) {
        const float s = acc[ord];
        if (s > 0.0f) top.Offer(ord_ids_[ord], s);
        acc[ord] = 0.0f;
      }
    }
    for (const uint32_t* t = first_touch; t != touched_end; ++t) acc[*t] = 0.0f;
  }
  top.Finish(out);
}

}  // namespace chitta::bm25
