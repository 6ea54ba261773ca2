// csrc/bm25/search_pruned.cc
// Block-max MaxScore (Turtle & Flood 1995; block maxima as in Ding & Suel 2011
// and Lucene 9's MaxScoreBulkScorer), and the forward-index scorer for small
// `allowed` sets. Both return exactly what the exhaustive search returns.
//
// Why MaxScore and not WAND: queries are short (a handful of terms), k is
// small, and the long lists belong to frequent, low-idf terms. MaxScore splits
// the terms (sorted by bound) into a non-essential prefix whose bounds sum
// below the current k-th score and the essential rest: candidates come only
// from the essential lists (usually the one or two rarest terms), and the
// frequent terms are probed by galloping search, after their block bound has
// failed to rule the document out. Windows of the essential lists (up to the
// nearest block end) whose block bounds sum below the k-th score are skipped
// whole: this is what keeps queries of only frequent terms (whose lists are
// all essential) from scoring every posting; an essential cursor with no
// posting in the window adds nothing to its bound. WAND re-sorts cursors per
// document, which costs more than it saves at 2-6 terms.
//
// Per-document work (see docs/DECISIONS.md D-011): a run of
// documents that only one essential list holds is checked in a tight loop
// (its contribution plus the non-essential bounds against the k-th score, the
// same test the full path makes first); a non-essential term is probed by
// counting, branch-free, the ordinals below the document in the one block
// that can hold it (found by the block walk that its block bound needs anyway).
//
// Exactness. A document's score is summed in query-term order exactly as the
// exhaustive path sums it (float adds from 0 in the same order), so scores are
// identical bit for bit. A document is skipped only when an upper bound of its
// score is strictly below the k-th score: a document with an equal score could
// still enter on the id tie-break. Bounds come from the largest tf and smallest
// length of a term's list (or block): tf / (tf + a + c * len) grows with tf and
// shrinks with len. They are computed in double and inflated by a relative
// margin far above the float rounding of the contributions and their sum.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>

#include "bm25/index.h"
#include "bm25/top_k.h"

namespace chitta::bm25 {
namespace {

// First position >= pos whose ordinal is >= target (galloping, then binary).
size_t Seek(const uint32_t* ords, size_t n, size_t pos, uint32_t target) {
  if (pos >= n || ords[pos] >= target) return pos;
  size_t lo = pos, step = 1, hi = pos + 1;
  while (hi < n && ords[hi] < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > n) hi = n;
  return static_cast<size_t>(std::lower_bound(ords + lo + 1, ords + hi, target) - ords);
}

struct Cursor {
  const uint32_t* ords;
  const uint16_t* tfs;
  size_t n;
  size_t pos;
  size_t block;    // block index of the last block-bound check
  double ub;       // bound of any contribution of this term
  size_t ub_blk;   // block whose bound ub_blk_val caches (SIZE_MAX: none)
  double ub_blk_val;
  uint32_t term;
  uint32_t qi;     // position in query-term order (the summation order)
  float weight;
};

struct Scratch {
  std::vector<uint64_t> allowed_bits;
};

}  // namespace

void Index::SearchPrunedLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                               const std::vector<uint32_t>* filter, size_t k,
                               std::vector<Hit>* out) const {
  const size_t m = terms.size();
  const double k1 = norm.k1, a = norm.a, c = norm.c;
  auto bound = [&](double weight, uint32_t max_tf, uint32_t min_len) {
    const double f = max_tf;
    return weight * f * (k1 + 1.0) / (f + a + c * static_cast<double>(min_len));
  };
  // Relative margin: each float contribution is within ~5 ulps (2^-24) of its
  // real value and a sum of m of them adds m more; 1e-6 per term is > 10x that.
  const double margin = 1.0 + 1e-6 * static_cast<double>(m + 2);

  std::vector<Cursor> cur(m);
  for (size_t i = 0; i < m; ++i) {
    const PostingList& list = postings_[terms[i].term];
    cur[i] = {list.ords.data(), list.tfs.data(), list.ords.size(), 0, 0,
              bound(terms[i].weight, list.max_tf, list.min_len), SIZE_MAX, 0.0, terms[i].term,
              static_cast<uint32_t>(i), terms[i].weight};
  }
  // Ascending bound: a prefix [0, essential) is non-essential.
  std::sort(cur.begin(), cur.end(), [](const Cursor& x, const Cursor& y) {
    return x.ub < y.ub || (x.ub == y.ub && x.qi < y.qi);
  });
  std::vector<double> prefix(m + 1, 0.0);  // prefix[i] = sum of ub of cur[0, i)
  for (size_t i = 0; i < m; ++i) prefix[i + 1] = prefix[i] + cur[i].ub;

  thread_local Scratch scratch;
  std::vector<uint64_t>& bits = scratch.allowed_bits;
  if (filter != nullptr) {  // all zero between queries
    if (bits.size() < (ord_ids_.size() + 63) / 64) bits.resize((ord_ids_.size() + 63) / 64, 0);
    for (uint32_t ord : *filter) bits[ord >> 6] |= uint64_t{1} << (ord & 63);
  }

  TopK top(k);
  size_t essential = 0;  // cur[essential, m) are the essential terms
  // A lower bound of the final k-th score: from SeedTheta, then the heap's k-th
  // score once it is full (whichever is larger).
  double theta = 0.0;
  if (m >= 2) {
    // Seed documents: the whole lists shorter than k among the highest-bound
    // terms, then the best blocks of the highest-bound term with >= k postings.
    std::vector<uint32_t> seed_docs;
    uint32_t lead = kNoTerm;
    for (size_t i = m; i-- > 0;) {
      if (cur[i].n >= k) {
        lead = cur[i].term;
        break;
      }
      seed_docs.insert(seed_docs.end(), cur[i].ords, cur[i].ords + cur[i].n);
    }
    theta = SeedTheta(terms, norm, lead, std::move(seed_docs), filter != nullptr ? &bits : nullptr, k);
  }
  bool full = theta > 0.0;  // prune against theta (true once it is a real lower bound)
  while (full && essential < m && prefix[essential + 1] * margin < theta) ++essential;
  std::vector<float> contrib(m, 0.0f);
  uint32_t checked_upto = kDeadLen;  // end of the last window that could not be skipped
  auto block_ub = [&](Cursor& cu, size_t blk) {
    if (cu.ub_blk != blk) {
      const BlockBound& bb = postings_[cu.term].blocks[blk];
      cu.ub_blk = blk;
      cu.ub_blk_val = bound(cu.weight, bb.max_tf, bb.min_len);
    }
    return cu.ub_blk_val;
  };
  // Largest block bound of a non-essential term over [lo, hi] (its global
  // bound when the window spans many of its blocks: not worth the walk).
  auto window_ub = [&](Cursor& cu, uint32_t lo, uint32_t hi) {
    const size_t nblocks = postings_[cu.term].blocks.size();
    size_t blk = std::max(cu.block, cu.pos / kBlock);
    while (blk < nblocks && cu.ords[std::min((blk + 1) * kBlock, cu.n) - 1] < lo) ++blk;
    cu.block = blk;
    double best = 0.0;
    for (size_t b = blk; b < nblocks && cu.ords[b * kBlock] <= hi; ++b) {
      if (b - blk == 8) return cu.ub;
      best = std::max(best, block_ub(cu, b));
    }
    return best;
  };
  auto tf_at = [&](const Cursor& cu) {
    const uint16_t tf = cu.tfs[cu.pos];
    return tf != kTfOverflow ? uint32_t{tf} : TfAt(cu.term, postings_[cu.term], cu.pos);
  };

  while (essential < m) {
    // Next candidate: the smallest ordinal under an essential cursor.
    uint32_t doc = kDeadLen;
    for (size_t i = essential; i < m; ++i) {
      if (cur[i].pos < cur[i].n) doc = std::min(doc, cur[i].ords[cur[i].pos]);
    }
    if (doc == kDeadLen) break;
    if (full && (checked_upto == kDeadLen || doc > checked_upto)) {
      // Window [doc, upto]: up to the first end of an essential cursor's block.
      // Every essential posting in it lies in that cursor's current block, and
      // every non-essential one in the blocks overlapping the window: those
      // blocks' bounds bound every score in it. Below the k-th score, the whole
      // window is skipped.
      uint32_t upto = kDeadLen;
      double window = 0.0;
      for (size_t i = essential; i < m; ++i) {
        const Cursor& cu = cur[i];
        if (cu.pos >= cu.n) continue;
        upto = std::min(upto, cu.ords[std::min((cu.pos / kBlock + 1) * kBlock, cu.n) - 1]);
      }
      for (size_t i = essential; i < m; ++i) {  // a cursor past the window adds 0
        Cursor& cu = cur[i];
        if (cu.pos < cu.n && cu.ords[cu.pos] <= upto) window += block_ub(cu, cu.pos / kBlock);
      }
      for (size_t i = 0; i < essential && window * margin < theta; ++i) {
        window += window_ub(cur[i], doc, upto);
      }
      if (window * margin < theta) {
        for (size_t i = essential; i < m; ++i) {
          Cursor& cu = cur[i];
          cu.pos = Seek(cu.ords, cu.n, cu.pos, upto + 1);
        }
        continue;
      }
      checked_upto = upto;  // checked once per window: its documents follow
    }
    if (full && essential >= 1) {
      // Documents that only one essential list holds, before any other
      // essential cursor's next document: skip in a tight loop those whose
      // contribution plus the non-essential bounds stays below the k-th score
      // (the first test of the non-essential loop below, the same expression).
      size_t ei = m;
      uint32_t other = checked_upto + 1;  // full: the window check set it
      for (size_t i = essential; i < m; ++i) {
        const Cursor& cu = cur[i];
        if (cu.pos >= cu.n) continue;
        if (cu.ords[cu.pos] == doc && ei == m) {
          ei = i;
        } else {
          other = std::min(other, cu.ords[cu.pos]);
        }
      }
      if (other > doc) {
        Cursor& e = cur[ei];
        const double rest = prefix[essential];
        size_t pos = e.pos;
        for (; pos < e.n && e.ords[pos] < other; ++pos) {
          const uint32_t d = e.ords[pos];
          const uint32_t len = doc_len_[d];
          if (len == kDeadLen) continue;
          if (filter != nullptr && ((bits[d >> 6] >> (d & 63)) & 1) == 0) continue;
          if (e.tfs[pos] == kTfOverflow) break;
          const double partial = 0.0 + norm.Contribution(e.weight, e.tfs[pos], len);
          if (!((partial + rest) * margin < theta)) break;
        }
        e.pos = pos;
        if (pos == e.n || e.ords[pos] >= other) continue;
        doc = e.ords[pos];
      }
    }
    const uint32_t len = doc_len_[doc];
    const bool live = len != kDeadLen &&
                      (filter == nullptr || ((bits[doc >> 6] >> (doc & 63)) & 1) != 0);
    double partial = 0.0;  // real-valued sum of the contributions found so far
    std::fill(contrib.begin(), contrib.end(), 0.0f);
    for (size_t i = essential; i < m; ++i) {
      Cursor& cu = cur[i];
      if (cu.pos < cu.n && cu.ords[cu.pos] == doc) {
        if (live) {
          const float x = norm.Contribution(cu.weight, tf_at(cu), len);
          contrib[cu.qi] = x;
          partial += x;
        }
        ++cu.pos;
      }
    }
    if (!live) continue;
    // Non-essential terms, largest bound first; stop once the document cannot
    // reach the k-th score.
    bool pruned = false;
    for (size_t i = essential; i-- > 0;) {
      if (full && (partial + prefix[i + 1]) * margin < theta) {
        pruned = true;
        break;
      }
      Cursor& cu = cur[i];
      const PostingList& list = postings_[cu.term];
      // Block bound of the block that would hold `doc`.
      size_t blk = std::max(cu.block, cu.pos / kBlock);
      const size_t nblocks = list.blocks.size();
      while (blk < nblocks && cu.ords[std::min((blk + 1) * kBlock, cu.n) - 1] < doc) ++blk;
      cu.block = blk;
      if (blk == nblocks) {
        cu.pos = cu.n;
        continue;
      }
      if (full) {
        if ((partial + prefix[i] + block_ub(cu, blk)) * margin < theta) {
          pruned = true;
          break;
        }
      }
      {
        // The block holds doc's position (its last ordinal is >= doc): count
        // its ordinals below doc.
        const size_t lo = blk * kBlock, hi = std::min(lo + kBlock, cu.n);
        size_t below = 0;
        for (size_t p = lo; p < hi; ++p) below += cu.ords[p] < doc;
        cu.pos = lo + below;
      }
      if (cu.pos < cu.n && cu.ords[cu.pos] == doc) {
        const float x = norm.Contribution(cu.weight, tf_at(cu), len);
        contrib[cu.qi] = x;
        partial += x;
      }
    }
    if (pruned) continue;
    float score = 0.0f;
    for (size_t q = 0; q < m; ++q) score += contrib[q];  // the exhaustive order
    if (top.Offer(ord_ids_[doc], score) && top.full()) {
      full = true;
      theta = std::max(theta, static_cast<double>(top.threshold()));
      while (essential < m && prefix[essential + 1] * margin < theta) ++essential;
    }
  }
  if (filter != nullptr) {
    for (uint32_t ord : *filter) bits[ord >> 6] = 0;
  }
  top.Finish(out);
}

// The k-th largest exact score among `docs` (the whole lists shorter than k
// of the query's highest-bound terms) and the documents of the best blocks (by
// block bound) of `lead`'s list (the highest-bound term with >= k postings:
// its best blocks hold the likeliest top documents; kNoTerm: none), or 0 with
// fewer than k live, allowed documents. Scores are summed in query-term order
// as every search sums them, so the value is a real document's score and at
// least k distinct documents reach it: the final k-th score is >= it, and
// pruning below it is exact. Starting the search with it makes the long lists
// non-essential from the first document instead of only once the heap has
// filled with the first (weak) candidates.
double Index::SeedTheta(const std::vector<QueryTerm>& terms, const Norm& norm, uint32_t lead,
                        std::vector<uint32_t> docs, const std::vector<uint64_t>* allowed_bits,
                        size_t k) const {
  if (k == 0) return 0.0;
  if (lead != kNoTerm) {
    const PostingList& list = postings_[lead];
    const size_t nblocks = list.blocks.size();
    // Postings to score: room for dead and filtered ones. At 100K Zipf, k = 50, 2k beat 4k and 8k
    // (pruned p50 0.25 vs 0.27-0.38 ms; 0.42-0.47 without a seed).
    const size_t want = 2 * k;
    std::vector<std::pair<float, uint32_t>> order(nblocks);  // (block bound, block)
    for (size_t b = 0; b < nblocks; ++b) {
      const BlockBound& bb = list.blocks[b];
      order[b] = {static_cast<float>(bb.max_tf) / (static_cast<float>(bb.max_tf) + norm.a +
                                                    norm.c * static_cast<float>(bb.min_len)),
                  static_cast<uint32_t>(b)};
    }
    const size_t nb = std::min(nblocks, (want + kBlock - 1) / kBlock + 1);
    std::partial_sort(order.begin(), order.begin() + nb, order.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first || (x.first == y.first && x.second < y.second); });
    for (size_t j = 0; j < nb; ++j) {
      const size_t lo = order[j].second * kBlock, hi = std::min(lo + kBlock, list.ords.size());
      docs.insert(docs.end(), list.ords.begin() + lo, list.ords.begin() + hi);
    }
  }
  // In ordinal order (each term's list is walked forward), each document once.
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  if (docs.size() < k) return 0.0;
  std::vector<size_t> at(terms.size(), 0);  // per query term: position reached in its list
  std::vector<float> scores;
  scores.reserve(docs.size());
  for (const uint32_t doc : docs) {
    const uint32_t len = doc_len_[doc];
    if (len == kDeadLen) continue;
    if (allowed_bits != nullptr && (((*allowed_bits)[doc >> 6] >> (doc & 63)) & 1) == 0) continue;
    float score = 0.0f;
    for (size_t q = 0; q < terms.size(); ++q) {  // the exhaustive summation order
      const QueryTerm& qt = terms[q];
      const PostingList& pl = postings_[qt.term];
      const size_t i = at[q] = Seek(pl.ords.data(), pl.ords.size(), at[q], doc);
      if (i < pl.ords.size() && pl.ords[i] == doc) {
        const uint16_t tf = pl.tfs[i];
        score += norm.Contribution(qt.weight, tf != kTfOverflow ? uint32_t{tf} : TfAt(qt.term, pl, i), len);
      }
    }
    scores.push_back(score);
  }
  if (scores.size() < k) return 0.0;
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k - 1), scores.end(),
                   std::greater<float>());
  return static_cast<double>(scores[k - 1]);
}

void Index::SearchForwardLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                                std::vector<uint32_t> allowed_ords, size_t k,
                                std::vector<Hit>* out) const {
  std::sort(allowed_ords.begin(), allowed_ords.end());
  allowed_ords.erase(std::unique(allowed_ords.begin(), allowed_ords.end()), allowed_ords.end());
  TopK top(k);
  for (uint32_t ord : allowed_ords) {
    const uint32_t len = doc_len_[ord];
    const uint32_t* pairs = fwd_.data() + 2 * fwd_off_[ord];
    const size_t n = fwd_off_[ord + 1] - fwd_off_[ord];
    float score = 0.0f;
    for (const QueryTerm& qt : terms) {  // the exhaustive summation order
      size_t lo = 0, hi = n;  // pairs are sorted by term id
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (pairs[2 * mid] < qt.term) lo = mid + 1; else hi = mid;
      }
      if (lo < n && pairs[2 * lo] == qt.term) score += norm.Contribution(qt.weight, pairs[2 * lo + 1], len);
    }
    if (score > 0.0f) top.Offer(ord_ids_[ord], score);
  }
  top.Finish(out);
}

}  // namespace chitta::bm25
