// csrc/bm25/index.cc
// Index construction, removal with exact statistics, compaction and export.
// Scoring lives in search.cc.
#include "bm25/index.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>

namespace chitta::bm25 {

Index::Index(double k1, double b, TokenizerOptions tokenizer)
    : tokenizer_(tokenizer), k1_(k1), b_(b) {}

Status Index::ValidateParams(double k1, double b) {
  if (!std::isfinite(k1) || k1 < 0) {
    return Status::InvalidArgument("k1 must be finite and >= 0, got " + std::to_string(k1));
  }
  if (!std::isfinite(b) || b < 0 || b > 1) {
    return Status::InvalidArgument("b must be finite and in [0, 1], got " + std::to_string(b));
  }
  return Status::OK();
}

Status Index::SetParams(double k1, double b) {
  CHITTA_RETURN_IF_ERROR(ValidateParams(k1, b));
  std::unique_lock lock(mu_);
  k1_ = k1;
  b_ = b;
  return Status::OK();
}

double Index::k1() const {
  std::shared_lock lock(mu_);
  return k1_;
}

double Index::b() const {
  std::shared_lock lock(mu_);
  return b_;
}

Status Index::CheckNewIdsLocked(const uint64_t* ids, size_t n) const {
  if (ord_ids_.size() + n > kMaxOrdinals) {
    return Status::InvalidArgument("index full: at most 2^32 - 2 documents per index");
  }
  std::unordered_set<uint64_t> batch;
  batch.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == kPadId) {
      return Status::InvalidArgument("id 2**64-1 is reserved as padding (position " +
                                     std::to_string(i) + ")");
    }
    if (!batch.insert(ids[i]).second) {
      return Status::InvalidArgument("duplicate id " + std::to_string(ids[i]) + " in batch");
    }
    if (id_to_ord_.count(ids[i]) != 0) {
      return Status::InvalidArgument("id " + std::to_string(ids[i]) + " is already indexed");
    }
  }
  return Status::OK();
}

// The tokens of a run of documents, packed: document i's tokens are entries
// [doc_end[i - 1], doc_end[i]) of token_end, token t is bytes[token_end[t - 1],
// token_end[t]). One string per token per document (what Tokenize returns) held
// until the insert cost ~450 B a short document: ~45 MB for a 100K-text flush (D-089).
struct Index::PackedTokens {
  std::string bytes;
  std::vector<uint64_t> token_end;
  std::vector<uint64_t> doc_end;
};

Status Index::Add(const uint64_t* ids, const std::string_view* texts, size_t n) {
  // Tokenize outside the lock so searches keep running meanwhile.
  // Large batches (a rebuild from the log) tokenize on several threads.
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = n < 8192 ? 1 : std::min<size_t>({hw, 8, n / 4096});
  std::vector<PackedTokens> packed(workers);
  std::vector<Status> errors(workers);
  auto run = [&](size_t w) {
    const size_t begin = n * w / workers, end = n * (w + 1) / workers;
    PackedTokens& out = packed[w];
    out.doc_end.reserve(end - begin);
    std::vector<std::string> scratch;
    for (size_t i = begin; i < end; ++i) {
      scratch.clear();
      Status st = Tokenize(texts[i], tokenizer_, &scratch);
      if (!st.ok()) {
        errors[w] = Status::InvalidArgument("text " + std::to_string(i) + ": " + st.message());
        return;
      }
      for (const std::string& t : scratch) {
        out.bytes += t;
        out.token_end.push_back(out.bytes.size());
      }
      out.doc_end.push_back(out.token_end.size());
    }
  };
  if (workers == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t w = 0; w < workers; ++w) threads.emplace_back(run, w);
    for (std::thread& t : threads) t.join();
  }
  for (Status& st : errors) {
    if (!st.ok()) return std::move(st);
  }
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(CheckNewIdsLocked(ids, n));
  size_t i = 0;
  std::vector<uint32_t> term_seq;
  std::string term;
  for (const PackedTokens& part : packed) {
    uint64_t token = 0, at = 0;
    for (const uint64_t doc_end : part.doc_end) {
      term_seq.clear();
      for (; token < doc_end; ++token) {
        term.assign(part.bytes, at, part.token_end[token] - at);
        at = part.token_end[token];
        term_seq.push_back(TermIdLocked(term));
      }
      InsertTermsLocked(ids[i++], &term_seq);
    }
  }
  return Status::OK();
}

uint32_t Index::TermIdLocked(const std::string& term) {
  auto [it, inserted] = term_ids_.try_emplace(term, static_cast<uint32_t>(terms_.size()));
  if (inserted) {
    terms_.push_back(term);
    postings_.emplace_back();
  }
  return it->second;
}

void Index::InsertTermsLocked(uint64_t id, std::vector<uint32_t>* term_seq) {
  const uint32_t length = static_cast<uint32_t>(term_seq->size());
  std::sort(term_seq->begin(), term_seq->end());
  std::vector<std::pair<uint32_t, uint32_t>> term_tfs;
  for (size_t i = 0; i < term_seq->size();) {
    size_t j = i;
    while (j < term_seq->size() && (*term_seq)[j] == (*term_seq)[i]) ++j;
    term_tfs.emplace_back((*term_seq)[i], static_cast<uint32_t>(j - i));
    i = j;
  }
  InsertCountedLocked(id, std::move(term_tfs), length);
}

void Index::AddBound(PostingList* list, uint32_t tf, uint32_t len) {
  // Called after the posting was appended: a new block starts every kBlock postings.
  if ((list->ords.size() - 1) % kBlock == 0) {
    list->blocks.push_back({tf, len});
  } else {
    BlockBound& last = list->blocks.back();
    last.max_tf = std::max(last.max_tf, tf);
    last.min_len = std::min(last.min_len, len);
  }
  list->max_tf = std::max(list->max_tf, tf);
  list->min_len = std::min(list->min_len, len);
}

void Index::RebuildBoundsLocked() {
  for (uint32_t term = 0; term < postings_.size(); ++term) {
    PostingList& list = postings_[term];
    list.blocks.clear();
    list.blocks.reserve((list.ords.size() + kBlock - 1) / kBlock);
    list.max_tf = 0;
    list.min_len = kDeadLen;
    for (size_t i = 0; i < list.ords.size(); ++i) {
      const uint32_t tf = TfAt(term, list, i);
      const uint32_t len = doc_len_[list.ords[i]];
      if (i % kBlock == 0) {
        list.blocks.push_back({tf, len});
      } else {
        list.blocks.back().max_tf = std::max(list.blocks.back().max_tf, tf);
        list.blocks.back().min_len = std::min(list.blocks.back().min_len, len);
      }
      list.max_tf = std::max(list.max_tf, tf);
      list.min_len = std::min(list.min_len, len);
    }
    list.blocks.shrink_to_fit();
  }
}

void Index::InsertCountedLocked(uint64_t id, std::vector<std::pair<uint32_t, uint32_t>> term_tfs,
                                uint32_t length) {
  const auto ord = static_cast<uint32_t>(ord_ids_.size());
  for (const auto& [term, tf] : term_tfs) {
    PostingList& list = postings_[term];
    list.ords.push_back(ord);  // new ordinals are the largest: lists stay sorted
    if (tf >= kTfOverflow) {
      list.tfs.push_back(kTfOverflow);
      big_tf_[(uint64_t{term} << 32) | ord] = tf;
    } else {
      list.tfs.push_back(static_cast<uint16_t>(tf));
    }
    AddBound(&list, tf, length);
    ++list.df;
  }
  if (fwd_ready_.load(std::memory_order_relaxed)) {
    for (const auto& [term, tf] : term_tfs) {
      fwd_.push_back(term);
      fwd_.push_back(tf);
    }
    fwd_off_.push_back(fwd_.size() / 2);
  }
  ord_ids_.push_back(id);
  doc_len_.push_back(length);
  id_to_ord_.emplace(id, ord);
  ++live_;
  total_len_ += length;
}

Status Index::Remove(const uint64_t* ids, size_t n) {
  std::unique_lock lock(mu_);
  std::unordered_set<uint64_t> batch;
  batch.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!batch.insert(ids[i]).second) {
      return Status::InvalidArgument("duplicate id " + std::to_string(ids[i]) + " in batch");
    }
    if (id_to_ord_.count(ids[i]) == 0) {
      return Status::NotFound("id " + std::to_string(ids[i]) + " is not indexed");
    }
  }
  if (n > 0) EnsureForward();
  for (size_t i = 0; i < n; ++i) {
    auto it = id_to_ord_.find(ids[i]);
    const uint32_t ord = it->second;
    id_to_ord_.erase(it);
    for (uint64_t j = 2 * fwd_off_[ord]; j < 2 * fwd_off_[ord + 1]; j += 2) {
      --postings_[fwd_[j]].df;
      if (fwd_[j + 1] >= kTfOverflow) big_tf_.erase((uint64_t{fwd_[j]} << 32) | ord);
    }
    total_len_ -= doc_len_[ord];
    doc_len_[ord] = kDeadLen;
    ord_ids_[ord] = kPadId;
    --live_;
    ++dead_;
  }
  if (dead_ >= 64 && dead_ > live_) CompactLocked();
  return Status::OK();
}

void Index::CompactLocked() {
  // Renumber live ordinals densely; the map is monotonic, so lists stay sorted.
  std::vector<uint32_t> remap(ord_ids_.size(), kDeadLen);
  uint32_t next = 0;
  for (size_t ord = 0; ord < ord_ids_.size(); ++ord) {
    if (doc_len_[ord] != kDeadLen) remap[ord] = next++;
  }
  std::unordered_map<uint64_t, uint32_t> big_tf;
  for (uint32_t term = 0; term < postings_.size(); ++term) {
    PostingList& list = postings_[term];
    size_t w = 0;
    for (size_t r = 0; r < list.ords.size(); ++r) {
      const uint32_t nu = remap[list.ords[r]];
      if (nu == kDeadLen) continue;
      if (list.tfs[r] == kTfOverflow) {
        big_tf[(uint64_t{term} << 32) | nu] = big_tf_.at((uint64_t{term} << 32) | list.ords[r]);
      }
      list.ords[w] = nu;
      list.tfs[w] = list.tfs[r];
      ++w;
    }
    list.ords.resize(w);
    list.tfs.resize(w);
    list.ords.shrink_to_fit();
    list.tfs.shrink_to_fit();
  }
  big_tf_.swap(big_tf);
  size_t w = 0;
  uint64_t fw = 0;  // pairs written
  const bool fwd = fwd_ready_.load(std::memory_order_relaxed);
  for (size_t ord = 0; ord < ord_ids_.size(); ++ord) {
    if (remap[ord] == kDeadLen) continue;
    if (fwd) {
      const uint64_t begin = fwd_off_[ord], end = fwd_off_[ord + 1];
      fwd_off_[w] = fw;
      for (uint64_t j = begin; j < end; ++j, ++fw) {  // fw <= j: moves only backwards
        fwd_[2 * fw] = fwd_[2 * j];
        fwd_[2 * fw + 1] = fwd_[2 * j + 1];
      }
    }
    ord_ids_[w] = ord_ids_[ord];
    doc_len_[w] = doc_len_[ord];
    id_to_ord_[ord_ids_[w]] = static_cast<uint32_t>(w);
    ++w;
  }
  if (fwd) {
    fwd_off_[w] = fw;
    fwd_off_.resize(w + 1);
    fwd_.resize(2 * fw);
    fwd_.shrink_to_fit();
  }
  ord_ids_.resize(w);
  doc_len_.resize(w);
  dead_ = 0;
  RebuildBoundsLocked();
}

size_t Index::size() const {
  std::shared_lock lock(mu_);
  return live_;
}

bool Index::Contains(uint64_t id) const {
  std::shared_lock lock(mu_);
  return id_to_ord_.count(id) != 0;
}

uint32_t Index::DocFreq(std::string_view term) const {
  std::shared_lock lock(mu_);
  auto it = term_ids_.find(std::string(term));
  return it == term_ids_.end() ? 0 : postings_[it->second].df;
}

size_t Index::VocabularySize() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const PostingList& list : postings_) n += list.df > 0;
  return n;
}

double Index::AverageDocLength() const {
  std::shared_lock lock(mu_);
  return live_ == 0 ? 0.0 : static_cast<double>(total_len_) / static_cast<double>(live_);
}

size_t Index::OrdinalSlots() const {
  std::shared_lock lock(mu_);
  return ord_ids_.size();
}

uint32_t Index::TfAt(uint32_t term, const PostingList& list, size_t i) const {
  const uint16_t tf = list.tfs[i];
  if (tf != kTfOverflow) return tf;
  return big_tf_.at((uint64_t{term} << 32) | list.ords[i]);
}

void Index::EnsureForward() const {
  if (fwd_ready_.load(std::memory_order_acquire)) return;
  std::lock_guard guard(fwd_mu_);
  if (fwd_ready_.load(std::memory_order_relaxed)) return;
  // Invert the posting lists: term order gives each document's pairs sorted by term.
  const size_t slots = ord_ids_.size();
  std::vector<uint64_t> off(slots + 1, 0);
  for (const PostingList& list : postings_) {
    for (uint32_t o : list.ords) ++off[o + 1];
  }
  for (size_t o = 0; o < slots; ++o) off[o + 1] += off[o];
  std::vector<uint32_t> fwd(2 * off[slots]);
  std::vector<uint64_t> fill(off.begin(), off.end() - 1);
  for (uint32_t term = 0; term < postings_.size(); ++term) {
    const PostingList& list = postings_[term];
    for (size_t i = 0; i < list.ords.size(); ++i) {
      const uint64_t at = 2 * fill[list.ords[i]]++;
      fwd[at] = term;
      fwd[at + 1] = TfAt(term, list, i);
    }
  }
  fwd_.swap(fwd);
  fwd_off_.swap(off);
  fwd_ready_.store(true, std::memory_order_release);
}

std::vector<Index::DocTerms> Index::ExportDocs() const {
  std::shared_lock lock(mu_);
  EnsureForward();
  std::vector<DocTerms> docs;
  docs.reserve(live_);
  for (size_t ord = 0; ord < ord_ids_.size(); ++ord) {
    if (doc_len_[ord] == kDeadLen) continue;
    DocTerms d{ord_ids_[ord], {}};
    for (uint64_t j = 2 * fwd_off_[ord]; j < 2 * fwd_off_[ord + 1]; j += 2) {
      d.terms.emplace_back(terms_[fwd_[j]], fwd_[j + 1]);
    }
    docs.push_back(std::move(d));
  }
  return docs;
}

Status Index::ImportDocs(const std::vector<DocTerms>& docs) {
  std::vector<uint64_t> ids;
  ids.reserve(docs.size());
  for (const DocTerms& d : docs) {
    ids.push_back(d.id);
    uint64_t length = 0;
    std::unordered_set<std::string_view> seen;
    for (const auto& [term, tf] : d.terms) {
      if (term.empty() || tf == 0) return Status::InvalidArgument("empty term or zero tf");
      if (!seen.insert(term).second) return Status::InvalidArgument("term repeated in a document");
      length += tf;
    }
    if (length >= kDeadLen) return Status::InvalidArgument("document too long");
  }
  std::unique_lock lock(mu_);
  CHITTA_RETURN_IF_ERROR(CheckNewIdsLocked(ids.data(), ids.size()));
  for (const DocTerms& d : docs) {
    std::vector<std::pair<uint32_t, uint32_t>> term_tfs;
    uint32_t length = 0;
    for (const auto& [term, tf] : d.terms) {
      term_tfs.emplace_back(TermIdLocked(term), tf);
      length += tf;
    }
    std::sort(term_tfs.begin(), term_tfs.end());
    InsertCountedLocked(d.id, std::move(term_tfs), length);
  }
  return Status::OK();
}

}  // namespace chitta::bm25
