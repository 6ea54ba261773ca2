// csrc/bm25/io.cc
// Index::Save / Index::Load: the BM25 index file. Spec: docs/FORMAT.md section 8
// ("bm25.idx", v1.0); constants in bm25_format.h. The reader maps the file
// through util/sidecar_file.h, checks the CRC and the size implied by the
// header against the real size before reading any section, and checks every
// ordinal, count and term before using it: a damaged file gives Corruption,
// never a crash.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bm25/bm25_format.h"
#include "bm25/index.h"
#include "util/crc32c.h"
#include "util/coding.h"
#include "util/crc_file.h"
#include "util/file.h"
#include "util/sidecar_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "bm25/io.cc writes arrays with memcpy: little-endian hosts only");

namespace chitta::bm25 {
namespace {

using File = file::StdioFile;
using file::CrcWriter;
using file::ErrnoText;
using coding::GetLE;
using coding::PutLE;

}  // namespace

Status Index::Save(const std::string& path) const {
  std::shared_lock lock(mu_);
  // Live ordinals renumbered densely, live terms (df > 0) renumbered densely.
  std::vector<uint32_t> remap(ord_ids_.size(), kDeadLen);
  std::vector<uint64_t> ids;
  std::vector<uint32_t> lens;
  ids.reserve(live_);
  lens.reserve(live_);
  for (size_t ord = 0; ord < ord_ids_.size(); ++ord) {
    if (doc_len_[ord] == kDeadLen) continue;
    remap[ord] = static_cast<uint32_t>(ids.size());
    ids.push_back(ord_ids_[ord]);
    lens.push_back(doc_len_[ord]);
  }
  std::vector<uint32_t> dfs, term_lens;
  std::vector<uint32_t> term_map(postings_.size(), kDeadLen);
  std::string term_bytes;
  uint64_t n_postings = 0;
  for (uint32_t t = 0; t < postings_.size(); ++t) {
    if (postings_[t].df == 0) continue;
    term_map[t] = static_cast<uint32_t>(dfs.size());
    dfs.push_back(postings_[t].df);
    term_lens.push_back(static_cast<uint32_t>(terms_[t].size()));
    term_bytes += terms_[t];
    n_postings += postings_[t].df;
  }

  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return Status::IOError(ErrnoText("cannot create", tmp));
  uint8_t header[format::kHeaderBytes] = {0};
  std::memcpy(header + format::kOffMagic, format::kMagic, sizeof(format::kMagic));
  PutLE<uint16_t>(header + format::kOffMajor, format::kMajor);
  PutLE<uint16_t>(header + format::kOffMinor, format::kMinor);
  PutLE<uint32_t>(header + format::kOffHeaderBytes, format::kHeaderBytes);
  PutLE<uint32_t>(header + format::kOffFlags, (tokenizer_.stem ? format::kFlagStem : 0u) |
                                                  (tokenizer_.stopwords ? format::kFlagStopwords : 0u));
  PutLE<double>(header + format::kOffK1, k1_);
  PutLE<double>(header + format::kOffB, b_);
  PutLE<uint64_t>(header + format::kOffDocs, ids.size());
  PutLE<uint64_t>(header + format::kOffTerms, dfs.size());
  PutLE<uint64_t>(header + format::kOffPostings, n_postings);
  PutLE<uint64_t>(header + format::kOffTermBytes, term_bytes.size());

  std::vector<uint32_t> big;  // (term, ordinal, tf) triples, new numbering
  for (const auto& [key, tf] : big_tf_) {
    const uint32_t t = static_cast<uint32_t>(key >> 32), ord = static_cast<uint32_t>(key);
    if (term_map[t] == kDeadLen || remap[ord] == kDeadLen) continue;
    big.insert(big.end(), {term_map[t], remap[ord], tf});
  }
  PutLE<uint64_t>(header + format::kOffBigTfs, big.size() / 3);

  CrcWriter w(f.get());
  bool ok = w.Write(header, sizeof(header)) && w.Write(ids) && w.Write(lens) && w.Write(dfs) &&
            w.Write(term_lens) && w.Write(term_bytes.data(), term_bytes.size());
  std::vector<uint32_t> ords;
  for (uint32_t t = 0; ok && t < postings_.size(); ++t) {
    if (term_map[t] == kDeadLen) continue;
    ords.clear();
    for (uint32_t o : postings_[t].ords) {
      if (remap[o] != kDeadLen) ords.push_back(remap[o]);
    }
    ok = w.Write(ords);
  }
  std::vector<uint16_t> tfs;
  for (uint32_t t = 0; ok && t < postings_.size(); ++t) {
    if (term_map[t] == kDeadLen) continue;
    const PostingList& list = postings_[t];
    tfs.clear();
    for (size_t i = 0; i < list.ords.size(); ++i) {
      if (remap[list.ords[i]] != kDeadLen) tfs.push_back(list.tfs[i]);
    }
    ok = w.Write(tfs);
  }
  ok = ok && w.Write(big);
  return file::FinishCrcFile(std::move(f), w, ok, tmp, path);
}

Result<std::unique_ptr<Index>> Index::Load(const std::string& path) {
  sidecar::Framing framing;
  framing.kind = "bm25 index file";
  framing.magic = format::kMagic;
  framing.major = format::kMajor;
  framing.header_bytes = format::kHeaderBytes;
  framing.header_size_field = true;
  sidecar::SidecarReader file;
  CHITTA_RETURN_IF_ERROR(sidecar::SidecarReader::Open(path, framing, &file));
  auto corrupt = [&](const std::string& why, int64_t offset) { return file.Corrupt(why, offset); };
  const uint64_t size = file.size();
  const uint32_t header_bytes = file.header_bytes();
  CHITTA_RETURN_IF_ERROR(file.CheckCrc());
  const uint32_t flags = file.Get<uint32_t>(format::kOffFlags);
  if ((flags & ~format::kKnownFlags) != 0) return corrupt("unknown flags", format::kOffFlags);
  const double k1 = file.Get<double>(format::kOffK1), b = file.Get<double>(format::kOffB);
  if (!ValidateParams(k1, b).ok()) return corrupt("k1 or b out of range", format::kOffK1);
  const uint64_t docs = file.Get<uint64_t>(format::kOffDocs);
  const uint64_t terms = file.Get<uint64_t>(format::kOffTerms);
  const uint64_t postings = file.Get<uint64_t>(format::kOffPostings);
  const uint64_t term_bytes = file.Get<uint64_t>(format::kOffTermBytes);
  const uint64_t bigs = file.Get<uint64_t>(format::kOffBigTfs);
  // Each count is bounded by the size before any product is formed.
  for (uint64_t count : {docs, terms, postings, term_bytes, bigs}) {
    if (count > size) return corrupt("a count exceeds the file size", format::kOffDocs);
  }
  if (docs > kMaxOrdinals || terms > kMaxOrdinals) return corrupt("too many documents or terms", format::kOffDocs);
  sidecar::SizeSum want(header_bytes);
  want.Add(docs, 12).Add(terms, 8).Add(term_bytes, 1).Add(postings, 6);
  want.Add(bigs, format::kBigTfBytes).Add(1, format::kTrailerBytes);
  CHITTA_RETURN_IF_ERROR(file.CheckSize(want, format::kOffDocs));
  sidecar::Cursor at(file, header_bytes);
  const uint8_t* ids_p = at.Take(docs, 8);
  const uint8_t* lens_p = at.Take(docs, 4);
  const uint8_t* dfs_p = at.Take(terms, 4);
  const uint8_t* tlen_p = at.Take(terms, 4);
  const uint8_t* text_p = at.Take(term_bytes);
  const uint8_t* ords_p = at.Take(postings, 4);
  const uint8_t* tfs_p = at.Take(postings, 2);
  const uint8_t* big_p = at.Take(bigs, format::kBigTfBytes);
  for (const uint8_t* q : {ids_p, lens_p, dfs_p, tlen_p, text_p, ords_p, tfs_p, big_p}) {
    if (q == nullptr) return corrupt("a section runs past the end", header_bytes);
  }
  if (at.left() != 0) return corrupt("sections do not fill the file", header_bytes);

  auto index = std::make_unique<Index>(
      k1, b, TokenizerOptions{(flags & format::kFlagStem) != 0, (flags & format::kFlagStopwords) != 0});
  Index& x = *index;  // not shared yet: no lock needed
  x.ord_ids_.resize(docs);
  x.doc_len_.resize(docs);
  if (docs > 0) {
    std::memcpy(x.ord_ids_.data(), ids_p, 8 * docs);
    std::memcpy(x.doc_len_.data(), lens_p, 4 * docs);
  }
  x.id_to_ord_.reserve(docs);
  for (uint64_t o = 0; o < docs; ++o) {
    if (x.ord_ids_[o] == kPadId) return corrupt("reserved id 2**64-1", int64_t(header_bytes + 8 * o));
    if (x.doc_len_[o] == kDeadLen) return corrupt("document length out of range", int64_t(header_bytes + 8 * docs + 4 * o));
    if (!x.id_to_ord_.emplace(x.ord_ids_[o], static_cast<uint32_t>(o)).second) {
      return corrupt("id " + std::to_string(x.ord_ids_[o]) + " repeated", int64_t(header_bytes + 8 * o));
    }
    x.total_len_ += x.doc_len_[o];
  }
  x.live_ = docs;
  // Terms and posting lists.
  x.terms_.reserve(terms);
  x.postings_.resize(terms);
  x.term_ids_.reserve(terms);
  uint64_t text_off = 0, post_off = 0;
  for (uint64_t t = 0; t < terms; ++t) {
    const uint32_t df = GetLE<uint32_t>(dfs_p + 4 * t);
    const uint32_t tlen = GetLE<uint32_t>(tlen_p + 4 * t);
    if (df == 0 || df > postings - post_off) return corrupt("bad posting count of term " + std::to_string(t), 0);
    if (tlen == 0 || tlen > term_bytes - text_off) return corrupt("bad length of term " + std::to_string(t), 0);
    std::string term(reinterpret_cast<const char*>(text_p + text_off), tlen);
    text_off += tlen;
    if (!x.term_ids_.emplace(term, static_cast<uint32_t>(t)).second) return corrupt("term repeated", 0);
    x.terms_.push_back(std::move(term));
    PostingList& list = x.postings_[t];
    list.df = df;
    list.ords.resize(df);
    list.tfs.resize(df);
    std::memcpy(list.ords.data(), ords_p + 4 * post_off, 4 * size_t{df});
    std::memcpy(list.tfs.data(), tfs_p + 2 * post_off, 2 * size_t{df});
    post_off += df;
    for (uint32_t i = 0; i < df; ++i) {
      if (list.ords[i] >= docs || (i > 0 && list.ords[i] <= list.ords[i - 1])) {
        return corrupt("posting list of term " + std::to_string(t) + " not ascending or out of range", 0);
      }
      if (list.tfs[i] == 0) return corrupt("zero term frequency", 0);
    }
  }
  if (text_off != term_bytes || post_off != postings) return corrupt("sections do not add up", 0);
  for (uint64_t i = 0; i < bigs; ++i) {
    const uint32_t t = GetLE<uint32_t>(big_p + 12 * i), o = GetLE<uint32_t>(big_p + 12 * i + 4),
                   tf = GetLE<uint32_t>(big_p + 12 * i + 8);
    if (t >= terms || tf < kTfOverflow) return corrupt("bad large term frequency entry", 0);
    const PostingList& list = x.postings_[t];
    auto it = std::lower_bound(list.ords.begin(), list.ords.end(), o);
    if (it == list.ords.end() || *it != o || list.tfs[it - list.ords.begin()] != kTfOverflow ||
        !x.big_tf_.emplace((uint64_t{t} << 32) | o, tf).second) {
      return corrupt("large term frequency entry without its posting", 0);
    }
  }
  // Each document's length must equal the sum of its tfs. The forward index
  // is left to EnsureForward() (first Remove or small filtered search).
  std::vector<uint64_t> sum(docs, 0);
  for (uint32_t t = 0; t < terms; ++t) {
    const PostingList& list = x.postings_[t];
    for (size_t i = 0; i < list.ords.size(); ++i) {
      uint32_t tf = list.tfs[i];
      if (tf == kTfOverflow) {
        auto it = x.big_tf_.find((uint64_t{t} << 32) | list.ords[i]);
        if (it == x.big_tf_.end()) return corrupt("overflowing term frequency without its entry", 0);
        tf = it->second;
      }
      sum[list.ords[i]] += tf;
    }
  }
  for (uint64_t o = 0; o < docs; ++o) {
    if (sum[o] != x.doc_len_[o]) return corrupt("document length differs from its terms", 0);
  }
  x.fwd_.clear();
  x.fwd_off_.clear();
  x.fwd_ready_.store(false);
  x.RebuildBoundsLocked();
  return index;
}

}  // namespace chitta::bm25
