// csrc/wal/log.cc
#include "wal/log.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <random>
#include <set>

#include "util/file.h"
#include "wal/quarantine.h"
#include "wal/segment_format.h"

namespace chitta::wal {

namespace {

using SegmentsByInstance = std::map<uint32_t, std::vector<std::pair<uint64_t, std::string>>>;

Status ListSegments(const std::string& dir, SegmentsByInstance* out) {
  std::vector<std::string> names;
  CHITTA_RETURN_IF_ERROR(file::ListDir(dir, &names));
  out->clear();
  for (const auto& name : names) {
    uint32_t inst;
    uint64_t first;
    if (ParseSegmentName(name, &inst, &first)) (*out)[inst].emplace_back(first, name);
  }
  for (auto& [inst, segs] : *out) std::sort(segs.begin(), segs.end());
  return Status::OK();
}

// Scans a whole segment; returns the scan state at its end.
Status ScanWhole(const std::string& dir, const std::string& name, uint32_t inst, uint64_t first,
                 bool salvage, bool last, ScanState* state, ScanResult* result,
                 std::vector<Damage>* damages) {
  file::MappedFile m;
  CHITTA_RETURN_IF_ERROR(file::MappedFile::Open(dir + "/" + name, &m));
  *state = ScanState{};
  return ScanSegment(name, inst, first, m.data(), m.size(), salvage, last, state, damages, result,
                     [](const RawRecord&) {});
}

}  // namespace

void ReadBatch::Clear() {
  records.clear();
  owners.clear();
  segments.clear();
  damages.clear();
}

Status ParseDurability(const std::string& name, Durability* out) {
  if (name == "flush") *out = Durability::kFlush;
  else if (name == "fsync") *out = Durability::kFsync;
  else if (name == "buffered") *out = Durability::kBuffered;
  else return Status::InvalidArgument("durability must be 'flush', 'fsync' or 'buffered', not '" + name + "'");
  return Status::OK();
}

Log::Log(std::string root, LogOptions options)
    : root_(std::move(root)), seg_dir_(root_ + "/segments"), options_(options) {}

Log::~Log() { (void)Close(); }

Status Log::Open(const std::string& root, const LogOptions& options, std::unique_ptr<Log>* out) {
  if (root.empty()) return Status::InvalidArgument("field path is empty");
  if (file::Exists(root) && !file::IsDir(root)) {
    return Status::InvalidArgument(root + " is not a directory");
  }
  if (options.segment_bytes < kMinSegmentBytes) {
    return Status::InvalidArgument("segment_bytes must be at least " + std::to_string(kMinSegmentBytes));
  }
  std::unique_ptr<Log> log(new Log(root, options));
  if (!file::IsDir(log->seg_dir_)) {
    if (!options.create || options.read_only) {
      return Status::NotFound(root + " is not a chitta field (no segments/ directory)");
    }
    CHITTA_RETURN_IF_ERROR(file::MakeDirs(log->seg_dir_));
  }
  CHITTA_RETURN_IF_ERROR(log->Init());
  *out = std::move(log);
  return Status::OK();
}

Status Log::Init() {
  SegmentsByInstance by_instance;
  CHITTA_RETURN_IF_ERROR(ListSegments(seg_dir_, &by_instance));
  CHITTA_RETURN_IF_ERROR(LoadClockFromManifest(by_instance));
  if (!options_.read_only) CHITTA_RETURN_IF_ERROR(ChooseInstance(by_instance));
  return Status::OK();
}

Status Log::LoadClockFromManifest(const SegmentsByInstance& by_instance) {
  std::map<uint32_t, ManifestEntry> cached;
  std::string bytes;
  std::vector<ManifestEntry> entries;
  if (file::ReadSmallFile(root_ + "/MANIFEST", &bytes, 64u << 20).ok() &&
      DecodeManifest(bytes, &entries).ok()) {
    for (const auto& e : entries) cached[e.instance_id] = e;
  }
  bool changed = cached.size() != by_instance.size();
  uint64_t clock = 0;
  for (const auto& [inst, segs] : by_instance) {
    const auto& [first, name] = segs.back();
    uint64_t size = 0;
    CHITTA_RETURN_IF_ERROR(file::FileSize(seg_dir_ + "/" + name, &size));
    auto it = cached.find(inst);
    ManifestEntry entry;
    if (it != cached.end() && it->second.last_first_seqno == first && it->second.last_size == size) {
      entry = it->second;
    } else {
      ScanState st;
      ScanResult res;
      std::vector<Damage> ignored;
      CHITTA_RETURN_IF_ERROR(
          ScanWhole(seg_dir_, name, inst, first, true, true, &st, &res, &ignored));
      entry = ManifestEntry{inst, std::max(st.last_seqno, first - 1), first, size};
      changed = true;
    }
    manifest_[inst] = entry;
    clock = std::max(clock, entry.max_seqno);
  }
  clock_.store(clock);
  if (changed && !options_.read_only) (void)WriteManifest();  // a cache: failure is harmless
  return Status::OK();
}

Status Log::WriteManifest() {
  std::vector<ManifestEntry> entries;
  for (const auto& [inst, e] : manifest_) entries.push_back(e);
  return file::AtomicWrite(root_ + "/MANIFEST", EncodeManifest(entries),
                           options_.durability == Durability::kFsync);
}

Status Log::ChooseInstance(const SegmentsByInstance& by_instance) {
  if (options_.instance_id != 0) {
    CHITTA_RETURN_IF_ERROR(
        InstanceLock::Acquire(root_ + "/locks", options_.instance_id, false, &lock_));
    instance_id_ = options_.instance_id;
    writer_ = std::make_unique<SegmentWriter>(seg_dir_, instance_id_, options_.durability,
                                              options_.segment_bytes);
    auto it = by_instance.find(instance_id_);
    if (it == by_instance.end()) return Status::OK();
    const auto& [first, name] = it->second.back();
    ScanState st;
    ScanResult res;
    std::vector<Damage> damages;
    CHITTA_RETURN_IF_ERROR(ScanWhole(seg_dir_, name, instance_id_, first, options_.salvage, true,
                                     &st, &res, &damages));
    if (!damages.empty() || st.dead) return Status::OK();  // never append after damage
    const uint64_t valid = st.header_ok ? st.offset : 0;
    if (res.torn_bytes > 0) {  // an unfinished write: kept in quarantine, then cut off
      CHITTA_RETURN_IF_ERROR(QuarantineTail(root_, name, valid, res.torn_bytes,
                                            st.header_ok ? "torn_tail" : "torn_header"));
    }
    if (st.header_ok && (st.major < kFormatMajor || st.sealed)) {
      // A 1.0 segment is not appended to (writers write 2.0), nor a sealed one:
      // the next append starts a new segment. Cut the quarantined tail so the
      // segment ends on a record boundary before it gets a successor.
      if (res.torn_bytes > 0) CHITTA_RETURN_IF_ERROR(file::Truncate(seg_dir_ + "/" + name, valid));
      return Status::OK();
    }
    CHITTA_RETURN_IF_ERROR(writer_->Continue(name, first, valid, st.records, st.last_seqno));
    continued_ = name;
    continued_limit_ = std::max<uint64_t>(valid, kHeaderSize);
    return Status::OK();
  }
  std::random_device rd;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t id = static_cast<uint32_t>(rd());
    if (id == 0 || by_instance.count(id)) continue;
    Status st = InstanceLock::Acquire(root_ + "/locks", id, true, &lock_);
    if (st.code() == Code::kLocked) continue;
    CHITTA_RETURN_IF_ERROR(st);
    instance_id_ = id;
    writer_ = std::make_unique<SegmentWriter>(seg_dir_, id, options_.durability,
                                              options_.segment_bytes);
    return Status::OK();
  }
  return Status::IOError("could not find a free instance id");
}

void Log::BumpClock(uint64_t seen) {
  uint64_t cur = clock_.load();
  while (cur < seen && !clock_.compare_exchange_weak(cur, seen)) {
  }
}

void Log::CommitRead() {
  std::lock_guard<std::mutex> l(read_mu_);
  for (auto& [name, st] : pending_) {
    auto it = cursors_.find(name);
    if (it != cursors_.end()) it->second.state = st;
  }
  pending_.clear();
}

std::vector<SegmentPosition> Log::Positions() const {
  std::lock_guard<std::mutex> l(read_mu_);
  std::vector<SegmentPosition> out;
  out.reserve(cursors_.size());
  for (const auto& [name, c] : cursors_) {
    out.push_back(SegmentPosition{name, c.state.offset, c.state.last_seqno, c.state.header_ok,
                                  c.state.dead});
  }
  return out;
}

Status Log::SeedPositions(const std::vector<SegmentPosition>& positions, uint64_t clock) {
  if (closed_) return Status::Closed("log is closed");
  std::lock_guard<std::mutex> l(read_mu_);
  if (read_started_ || !cursors_.empty()) {
    return Status::InvalidArgument("read positions can only be seeded before the first read");
  }
  std::set<std::string> own;
  if (writer_) {
    for (auto& n : writer_->created()) own.insert(n);
  }
  std::map<std::string, Cursor> seeded;
  for (const auto& p : positions) {
    if (own.count(p.name)) return Status::Corruption("checkpoint names this writer's new segment " + p.name);
    uint32_t inst;
    uint64_t first;
    if (!ParseSegmentName(p.name, &inst, &first)) {
      return Status::Corruption("checkpoint names a segment that is not one: " + p.name);
    }
    if (seeded.count(p.name)) return Status::Corruption("checkpoint names a segment twice: " + p.name);
    if (p.header_ok != (p.offset >= kHeaderSize) || (p.header_ok && p.last_seqno + 1 < first)) {
      return Status::Corruption("checkpoint position is inconsistent for " + p.name);
    }
    uint64_t size = 0;
    Status s = file::FileSize(seg_dir_ + "/" + p.name, &size);
    if (!s.ok()) return Status::Corruption("checkpoint names a missing segment: " + p.name);
    ScanState resumed{p.header_ok, p.dead, p.offset, p.last_seqno};
    resumed.counted = !p.header_ok;  // the records before the position were not counted here
    Cursor c{p.name, inst, first, std::numeric_limits<uint64_t>::max(), resumed};
    if (p.name == continued_) {
      c.limit = continued_limit_;
      size = std::min(size, continued_limit_);
    }
    if (p.offset > size) {
      return Status::Corruption("checkpoint reads past the end of segment " + p.name);
    }
    seeded.emplace(p.name, std::move(c));
  }
  cursors_ = std::move(seeded);
  BumpClock(clock);
  return Status::OK();
}

Status Log::ListLocked(Listing* out) const {
  std::vector<std::string> names;
  CHITTA_RETURN_IF_ERROR(file::ListDir(seg_dir_, &names));
  std::set<std::string> own;
  if (writer_) {
    for (auto& n : writer_->created()) own.insert(n);
  }
  for (const auto& name : names) {
    uint32_t inst;
    uint64_t first;
    if (!ParseSegmentName(name, &inst, &first)) continue;
    auto [it, fresh] = out->last_first.emplace(inst, first);
    if (!fresh) it->second = std::max(it->second, first);
    if (own.count(name) || cursors_.count(name)) continue;
    Cursor c{name, inst, first, std::numeric_limits<uint64_t>::max(), ScanState{}};
    if (name == continued_) c.limit = continued_limit_;
    out->uncursored.push_back(std::move(c));
  }
  return Status::OK();
}

bool Log::IsLastLocked(const Cursor& c, const Listing& listing) const {
  const auto lf = listing.last_first.find(c.instance_id);
  return c.name == continued_ || lf == listing.last_first.end() || lf->second == c.first_seqno;
}

Status Log::ReadNew(ReadBatch* out, bool commit) {
  out->Clear();
  if (closed_) return Status::Closed("log is closed");
  std::lock_guard<std::mutex> l(read_mu_);
  read_started_ = true;
  pending_.clear();
  Listing listing;
  CHITTA_RETURN_IF_ERROR(ListLocked(&listing));
  for (auto& c : listing.uncursored) cursors_.emplace(c.name, std::move(c));
  std::vector<Cursor*> order;
  for (auto& [name, c] : cursors_) order.push_back(&c);
  std::sort(order.begin(), order.end(), [](const Cursor* a, const Cursor* b) {
    return a->instance_id != b->instance_id ? a->instance_id < b->instance_id
                                            : a->first_seqno < b->first_seqno;
  });

  std::vector<uint64_t> sizes(order.size(), 0);
  std::vector<bool> last(order.size(), true);
  for (size_t i = 0; i < order.size(); ++i) {
    Cursor* c = order[i];
    if (c->state.dead || c->state.sealed) continue;
    // Own continued segment: read only its part from before this open.
    last[i] = IsLastLocked(*c, listing);
    CHITTA_RETURN_IF_ERROR(file::FileSize(seg_dir_ + "/" + c->name, &sizes[i]));
  }

  std::map<uint32_t, std::vector<RecordRef>> per_instance;
  std::vector<std::pair<Cursor*, ScanState>> updates;
  for (size_t i = 0; i < order.size(); ++i) {
    Cursor* c = order[i];
    if (c->state.dead || c->state.sealed) continue;
    uint64_t limit = std::min(sizes[i], c->limit);
    if (last[i] && c->state.header_ok && limit <= c->state.offset) continue;
    if (last[i] && !c->state.header_ok && limit < kHeaderSize) continue;
    auto m = std::make_shared<file::MappedFile>();
    CHITTA_RETURN_IF_ERROR(file::MappedFile::Open(seg_dir_ + "/" + c->name, m.get()));
    limit = std::min(limit, m->size());
    m->Prefetch(c->state.header_ok ? c->state.offset : 0);
    const uint32_t seg_index = static_cast<uint32_t>(out->segments.size());
    out->segments.push_back(c->name);
    ScanState st = c->state;
    ScanResult res;
    auto& recs = per_instance[c->instance_id];
    const uint32_t inst = c->instance_id;
    const size_t before = recs.size();
    Status s = ScanSegment(c->name, inst, c->first_seqno, m->data(), limit, options_.salvage,
                           last[i], &st,
                           &out->damages, &res, [&](const RawRecord& r) {
                             recs.push_back(RecordRef{r.seqno, inst, r.op_type, seg_index,
                                                      r.offset, r.payload, r.len,
                                                      static_cast<uint64_t>(r.payload - m->data())});
                           });
    if (!s.ok()) {
      out->Clear();
      return s;
    }
    if (recs.size() > before) out->owners.push_back(std::move(m));  // the payloads point into it
    updates.emplace_back(c, st);
  }

  // k-way merge of the per-instance runs by (seqno, instance).
  size_t total = 0;
  std::vector<std::vector<RecordRef>*> runs;
  for (auto& [inst, recs] : per_instance) {
    if (!std::is_sorted(recs.begin(), recs.end(),
                        [](const RecordRef& a, const RecordRef& b) { return a.seqno < b.seqno; })) {
      std::stable_sort(recs.begin(), recs.end(),
                       [](const RecordRef& a, const RecordRef& b) { return a.seqno < b.seqno; });
    }
    total += recs.size();
    runs.push_back(&recs);
  }
  out->records.reserve(total);
  if (runs.size() == 1) {
    out->records = std::move(*runs[0]);
  } else if (runs.size() > 1) {
    using Head = std::pair<std::pair<uint64_t, uint32_t>, std::pair<size_t, size_t>>;
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!runs[i]->empty()) {
        const RecordRef& r = (*runs[i])[0];
        heap.push({{r.seqno, r.instance_id}, {i, 0}});
      }
    }
    while (!heap.empty()) {
      auto [key, where] = heap.top();
      heap.pop();
      auto& run = *runs[where.first];
      out->records.push_back(run[where.second]);
      if (where.second + 1 < run.size()) {
        const RecordRef& r = run[where.second + 1];
        heap.push({{r.seqno, r.instance_id}, {where.first, where.second + 1}});
      }
    }
  }
  for (auto& [c, st] : updates) {
    if (commit) c->state = st;
    else pending_.emplace_back(c->name, st);
  }
  if (!out->records.empty()) {
    uint64_t max_seen = 0;
    for (const auto& r : out->records) max_seen = std::max(max_seen, r.seqno);
    BumpClock(max_seen);
  }
  return Status::OK();
}

Status Log::MayHaveNew(bool* out) const {
  *out = true;
  if (closed_) return Status::Closed("log is closed");
  std::lock_guard<std::mutex> l(read_mu_);
  if (!read_started_ || !pending_.empty()) return Status::OK();  // (a read not yet committed)
  // A listing or a size it cannot take says "maybe": ReadNew then reports the error.
  Listing listing;
  if (!ListLocked(&listing).ok() || !listing.uncursored.empty()) return Status::OK();
  // As ReadNew decides which segments to scan: a live segment that is not its
  // instance's last (a successor appeared) is scanned to its end, so it counts.
  for (const auto& [name, c] : cursors_) {
    if (c.state.dead || c.state.sealed) continue;
    if (!IsLastLocked(c, listing)) return Status::OK();
    uint64_t size = 0;
    if (!file::FileSize(seg_dir_ + "/" + name, &size).ok()) return Status::OK();
    const uint64_t limit = std::min(size, c.limit);
    if (c.state.header_ok ? limit > c.state.offset : limit >= kHeaderSize) return Status::OK();
  }
  *out = false;
  return Status::OK();
}

Status Log::Append(uint8_t op_type, const uint8_t* data, size_t n, uint64_t* seqno,
                   RecordPlace* where) {
  if (closed_) return Status::Closed("log is closed");
  if (!writer_) return Status::InvalidArgument("the field was opened read-only");
  if (n > kMaxPayload) {
    return Status::InvalidArgument("payload of " + std::to_string(n) +
                                   " bytes exceeds the maximum of " + std::to_string(kMaxPayload));
  }
  return writer_->Append(&clock_, op_type, data, static_cast<uint32_t>(n), seqno, where);
}

Status Log::Flush() {
  if (closed_) return Status::Closed("log is closed");
  return writer_ ? writer_->Flush() : Status::OK();
}

Status Log::Sync() {
  if (closed_) return Status::Closed("log is closed");
  return writer_ ? writer_->Sync() : Status::OK();
}

Status Log::Close() {
  if (closed_.exchange(true)) return Status::OK();
  Status st;
  if (writer_) {
    st = writer_->Close();
    const std::string cur = writer_->current_segment();
    uint32_t inst;
    uint64_t first;
    if (!cur.empty() && ParseSegmentName(cur, &inst, &first)) {
      uint64_t size = 0;
      if (file::FileSize(seg_dir_ + "/" + cur, &size).ok()) {
        manifest_[instance_id_] = ManifestEntry{instance_id_, writer_->last_seqno(), first, size};
        (void)WriteManifest();
      }
    }
  }
  if (lock_) lock_->Release();
  return st;
}

Status Log::Stats(LogStats* out) const {
  *out = LogStats{};
  SegmentsByInstance by_instance;
  CHITTA_RETURN_IF_ERROR(ListSegments(seg_dir_, &by_instance));
  for (const auto& [inst, segs] : by_instance) {
    out->instances.push_back(inst);
    for (const auto& [first, name] : segs) {
      uint64_t size = 0;
      if (file::FileSize(seg_dir_ + "/" + name, &size).ok()) out->bytes += size;
      out->segments++;
    }
  }
  return Status::OK();
}

Status Verify(const std::string& root, VerifyReport* out) {
  *out = VerifyReport{};
  const std::string dir = root + "/segments";
  if (!file::IsDir(dir)) return Status::NotFound(root + " is not a chitta field (no segments/ directory)");
  SegmentsByInstance by_instance;
  CHITTA_RETURN_IF_ERROR(ListSegments(dir, &by_instance));
  for (const auto& [inst, segs] : by_instance) {
    for (const auto& [first, name] : segs) {
      file::MappedFile m;
      CHITTA_RETURN_IF_ERROR(file::MappedFile::Open(dir + "/" + name, &m));
      ScanState st;
      ScanResult res;
      const bool last = name == segs.back().second;
      CHITTA_RETURN_IF_ERROR(ScanSegment(name, inst, first, m.data(), m.size(), true, last, &st,
                                         &out->damages, &res, [](const RawRecord&) {}));
      if (res.torn_bytes > 0) {
        out->damages.push_back(Damage{name, st.header_ok ? st.offset : 0, res.torn_bytes,
                                      DamageKind::kTornTail, "incomplete record at the end"});
      }
      out->segments++;
      out->records += res.records;
      out->bytes += m.size();
    }
  }
  return Status::OK();
}

}  // namespace chitta::wal
