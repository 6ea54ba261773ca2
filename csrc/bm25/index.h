// csrc/bm25/index.h
// Incremental BM25 keyword index: term-at-a-time scoring over compact posting
// lists (u32 document ordinals + u16 term frequencies, with an overflow map for
// the rare tf >= 65535).
//
// Scoring (Lucene / bm25s "lucene" variant), per distinct query term t with
// query multiplicity qtf (a term repeated in the query counts qtf times, as in
// Lucene and bm25s):
//   idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//   s(t, D) = qtf * idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |D| / avgdl))
// (bm25s "lucene" and Lucene >= 8 drop the constant factor (k1 + 1): same
// ranking, scores smaller by that factor.)
// N = live documents, df = live documents containing t, |D| = token count of D
// after stopword removal, avgdl = total live tokens / N. All are exact under
// add and remove: removed documents leave tombstones that are skipped and
// compacted away once they outnumber the live ones.
//
// Search strategies (identical results, bit for bit): kExhaustive scores every
// posting of every query term (term at a time, search.cc); kPruned is block-max
// MaxScore (search_pruned.cc): per-term and per-block (32 postings) bounds on
// tf and length, kept on add, let it skip documents that cannot reach the top k;
// a small `allowed` set is scored straight from the forward index instead.
//
// Thread safety: Search() may run concurrently from many threads (shared lock,
// per-thread scratch); Add/Remove/SetParams take the lock exclusively. Every
// mutator validates the whole batch first and changes nothing on error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bm25/tokenizer.h"
#include "chitta/status.h"

namespace chitta::bm25 {

inline constexpr uint64_t kPadId = ~uint64_t{0};  // reserved: never a document id

struct Hit {
  uint64_t id;
  float score;
};

// How Search() sums term contributions. kDense: a per-thread float array over
// all ordinals plus a touched list; kSparse: collect (ordinal, score) pairs and
// sort them. kAuto picks dense (measured faster: see docs/DECISIONS.md D-009).
enum class Accumulator { kAuto, kDense, kSparse };

// Which algorithm Search() runs. kAuto: kExhaustive when the query terms'
// lists hold fewer than kPrunedMinPostings postings, else kPruned. Results
// are identical whichever runs.
enum class Method { kAuto, kExhaustive, kPruned };
inline constexpr size_t kPrunedMinPostings = 65536;

class Index {
 public:
  Index(double k1, double b, TokenizerOptions tokenizer);

  // k1 must be finite and >= 0; b finite and in [0, 1].
  [[nodiscard]] static Status ValidateParams(double k1, double b);
  [[nodiscard]] Status SetParams(double k1, double b);
  double k1() const;
  double b() const;
  const TokenizerOptions& tokenizer() const { return tokenizer_; }

  // Adds n documents. Errors (nothing added): an id equal to kPadId, repeated in
  // the batch or already present; invalid UTF-8 in a text; more than 2^32 - 2
  // ordinals.
  [[nodiscard]] Status Add(const uint64_t* ids, const std::string_view* texts, size_t n);

  // Removes n documents. Errors (nothing removed): an id not present, or repeated.
  [[nodiscard]] Status Remove(const uint64_t* ids, size_t n);

  // Top-k documents for `query`, best first: higher score, then smaller id.
  // Only documents with score > 0 are returned, so `out` may hold fewer than k.
  // An empty query, or one of only stopwords or unknown terms, gives no hits.
  // allowed != nullptr restricts hits to those ids (unknown ids are ignored).
  // Errors: k == 0, invalid UTF-8 in the query.
  [[nodiscard]] Status Search(std::string_view query, size_t k,
                              const std::vector<uint64_t>* allowed, std::vector<Hit>* out,
                              Accumulator accumulator = Accumulator::kAuto,
                              Method method = Method::kAuto) const;

  // Writes the live documents to `path` (docs/FORMAT.md section 8, "bm25.idx"):
  // tokenizer options, k1, b, ids, lengths, terms and posting lists, CRC-32C.
  [[nodiscard]] Status Save(const std::string& path) const;
  // Reads a file written by Save. Corruption (bad magic, lengths, CRC, any
  // inconsistency) or Unsupported (another major version); never crashes.
  static Result<std::unique_ptr<Index>> Load(const std::string& path);

  size_t size() const;
  bool Contains(uint64_t id) const;
  // Live documents containing `term` (a token as the tokenizer produces it).
  uint32_t DocFreq(std::string_view term) const;
  // Distinct terms with df > 0.
  size_t VocabularySize() const;
  double AverageDocLength() const;
  // Ordinal slots including tombstones (for tests of compaction).
  size_t OrdinalSlots() const;

  // Every live document as (id, its (term, tf) pairs), for save and tests.
  struct DocTerms {
    uint64_t id;
    std::vector<std::pair<std::string, uint32_t>> terms;
  };
  std::vector<DocTerms> ExportDocs() const;
  // Adds pre-tokenized documents (from ExportDocs or a file); same checks as Add.
  [[nodiscard]] Status ImportDocs(const std::vector<DocTerms>& docs);

 private:
  // Bounds of one block of kBlock postings (positions [i * kBlock, ...)): the
  // largest tf and the smallest document length in it. Removal leaves them
  // (still bounds, just looser); compaction recomputes them.
  struct BlockBound {
    uint32_t max_tf;
    uint32_t min_len;
  };
  struct PostingList {
    std::vector<uint32_t> ords;  // ascending
    std::vector<uint16_t> tfs;   // kTfOverflow -> see big_tf_
    std::vector<BlockBound> blocks;
    uint32_t df = 0;              // live documents only
    uint32_t max_tf = 0;          // over the whole list (same rules as blocks)
    uint32_t min_len = 0xFFFFFFFFu;
  };
  struct QueryTerm {
    uint32_t term;
    float weight;  // qtf * idf
  };
  // Length norm k1 * (1 - b + b * len / avgdl) = a + c * len.
  struct Norm {
    float k1, a, c;
    float Contribution(float weight, uint32_t tf, uint32_t len) const {
      const float f = static_cast<float>(tf);
      return weight * f * (k1 + 1.0f) / (f + a + c * static_cast<float>(len));
    }
  };
  static constexpr size_t kBlock = 32;  // 32 beat 16, 64 and 128 at 1M (tail latency)
  static constexpr uint16_t kTfOverflow = 0xFFFF;
  static constexpr uint32_t kDeadLen = 0xFFFFFFFFu;
  static constexpr size_t kMaxOrdinals = 0xFFFFFFFEu;

  [[nodiscard]] Status CheckNewIdsLocked(const uint64_t* ids, size_t n) const;
  struct PackedTokens;
  // Inserts a document of the given term ids (one per token, in any order; sorted here).
  void InsertTermsLocked(uint64_t id, std::vector<uint32_t>* term_seq);
  void InsertCountedLocked(uint64_t id, std::vector<std::pair<uint32_t, uint32_t>> term_tfs,
                           uint32_t length);
  uint32_t TermIdLocked(const std::string& term);
  void CompactLocked();
  static constexpr uint32_t kNoTerm = 0xFFFFFFFFu;
  double SeedTheta(const std::vector<QueryTerm>& terms, const Norm& norm, uint32_t lead,
                   std::vector<uint32_t> docs, const std::vector<uint64_t>* allowed_bits,
                   size_t k) const;
  uint32_t TfAt(uint32_t term, const PostingList& list, size_t i) const;
  void AddBound(PostingList* list, uint32_t tf, uint32_t len);
  void EnsureForward() const;  // caller holds mu_ (shared or exclusive)
  void RebuildBoundsLocked();
  void SearchExhaustiveLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                              const std::vector<uint32_t>* allowed_ords, Accumulator accumulator,
                              size_t k, std::vector<Hit>* out) const;
  void SearchPrunedLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                          const std::vector<uint32_t>* allowed_ords, size_t k,
                          std::vector<Hit>* out) const;
  void SearchForwardLocked(const std::vector<QueryTerm>& terms, const Norm& norm,
                           std::vector<uint32_t> allowed_ords, size_t k,
                           std::vector<Hit>* out) const;
  TokenizerOptions tokenizer_;
  double k1_;
  double b_;

  std::unordered_map<std::string, uint32_t> term_ids_;
  std::vector<std::string> terms_;  // term id -> text
  std::vector<PostingList> postings_;
  std::unordered_map<uint64_t, uint32_t> big_tf_;  // (term << 32 | ord) -> tf >= 65535

  std::unordered_map<uint64_t, uint32_t> id_to_ord_;
  std::vector<uint64_t> ord_ids_;   // kPadId for tombstones
  std::vector<uint32_t> doc_len_;   // kDeadLen for tombstones
  // Forward index: the (term, tf) pairs of ordinal o, sorted by term, are
  // fwd_[2 * fwd_off_[o] .. 2 * fwd_off_[o + 1]). Removal leaves them (dead
  // ordinals are never read); compaction drops them. Derived from the posting
  // lists: Load leaves it unbuilt (fwd_ready_ false) and EnsureForward() builds
  // it on first need (Remove, ExportDocs, a small filtered search). Built under
  // the shared lock by one thread (fwd_mu_); writers hold the lock exclusively.
  mutable std::vector<uint32_t> fwd_;
  mutable std::vector<uint64_t> fwd_off_{0};
  mutable std::atomic<bool> fwd_ready_{true};
  mutable std::mutex fwd_mu_;
  size_t live_ = 0;
  size_t dead_ = 0;
  uint64_t total_len_ = 0;

  mutable std::shared_mutex mu_;
};

}  // namespace chitta::bm25
