// csrc/wal/segment_writer.cc
#include "wal/segment_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "util/futex.h"
#include "wal/segment_format.h"

namespace chitta::wal {

struct SegmentWriter::Fd {
  int fd = -1;
  std::string path;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {
constexpr size_t kBufferLimit = 1u << 20;  // buffered mode writes in ~1 MiB pieces
}

SegmentWriter::SegmentWriter(std::string dir, uint32_t instance_id, Durability durability,
                             uint64_t segment_bytes)
    : dir_(std::move(dir)),
      instance_id_(instance_id),
      durability_(durability),
      segment_bytes_(segment_bytes) {}

SegmentWriter::~SegmentWriter() { (void)Close(); }

Status SegmentWriter::Continue(const std::string& name, uint64_t first_seqno,
                               uint64_t valid_size, uint64_t records, uint64_t last_seqno) {
  std::lock_guard<std::mutex> l(mu_);
  seg_records_ = records;
  last_seqno_ = std::max(last_seqno_, last_seqno);
  const std::string path = dir_ + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("open " + path + ": " + file::ErrnoText(errno));
  (void)::fchmod(fd, file::FileMode());
  auto handle = std::make_shared<Fd>();
  handle->fd = fd;
  handle->path = path;
  if (valid_size < kHeaderSize) {  // torn while the header was written: start it again
    uint8_t header[kHeaderSize];
    EncodeHeader(instance_id_, first_seqno, header);
    if (::ftruncate(fd, 0) != 0) return Status::IOError("truncate " + path);
    CHITTA_RETURN_IF_ERROR(file::WriteAll(fd, header, kHeaderSize, path));
    valid_size = kHeaderSize;
  } else if (::ftruncate(fd, static_cast<off_t>(valid_size)) != 0) {
    return Status::IOError("truncate " + path + ": " + file::ErrnoText(errno));
  }
  if (::lseek(fd, static_cast<off_t>(valid_size), SEEK_SET) < 0) {
    return Status::IOError("seek " + path + ": " + file::ErrnoText(errno));
  }
  fd_ = handle;
  current_name_ = name;
  size_ = valid_size;
  return Status::OK();
}

Status SegmentWriter::OpenNewSegmentLocked(uint64_t first_seqno) {
  if (fd_) {
    // The seal goes after the last record of the old segment, in the same
    // write as any pending records; only then does the successor exist.
    const size_t at = buffer_.size();
    buffer_.resize(at + kSealBytes);
    EncodeSeal(buffer_.data() + at, last_seqno_, seg_records_, size_);
    size_ += kSealBytes;
    Status flushed = FlushBufferLocked();
    if (durability_ == Durability::kFsync) {
      // The pending group goes to the old segment and is made durable before
      // the new one starts; a failure loses others' records: the writer fails.
      if (flushed.ok() && ::fdatasync(fd_->fd) != 0) {
        flushed = Status::IOError("fdatasync " + fd_->path + ": " + file::ErrnoText(errno));
      }
      if (!flushed.ok()) {
        Fail(flushed);
        return flushed;
      }
      std::lock_guard<std::mutex> s(sync_mu_);
      if (!failed_.ok()) return failed_;  // a leader's sync failed meanwhile: claim nothing
      const uint64_t before = synced_seqno_;
      synced_seqno_ = std::max(synced_seqno_, last_seqno_);
      synced_records_ = written_records_;
      durable_seqno_.store(synced_seqno_, std::memory_order_release);
      WakeCovered(before, synced_seqno_);
    }
    CHITTA_RETURN_IF_ERROR(flushed);
  }
  const std::string name = SegmentName(instance_id_, first_seqno);
  const std::string path = dir_ + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                  file::FileMode());
  if (fd < 0) return Status::IOError("create " + path + ": " + file::ErrnoText(errno));
  (void)::fchmod(fd, file::FileMode());  // exactly, whatever the umask
  auto handle = std::make_shared<Fd>();
  handle->fd = fd;
  handle->path = path;
  uint8_t header[kHeaderSize];
  EncodeHeader(instance_id_, first_seqno, header);
  Status st = file::WriteAll(fd, header, kHeaderSize, path);
  if (st.ok() && durability_ == Durability::kFsync) {
    if (::fdatasync(fd) != 0) st = Status::IOError("fdatasync " + path);
    if (st.ok()) st = file::SyncDir(dir_);
  }
  if (!st.ok()) {
    ::unlink(path.c_str());
    return st;
  }
  fd_ = handle;
  current_name_ = name;
  size_ = kHeaderSize;
  seg_records_ = 0;
  created_.push_back(name);
  return Status::OK();
}

Status SegmentWriter::WriteLocked(const uint8_t* data, size_t n) {
  const uint64_t before = size_;
  Status st = file::WriteAll(fd_->fd, data, n, fd_->path);
  if (!st.ok()) {
    // Never leave half a record behind: later records would follow garbage.
    (void)::ftruncate(fd_->fd, static_cast<off_t>(before - buffer_.size()));
  }
  return st;
}

Status SegmentWriter::FlushBufferLocked() {
  if (buffer_.empty() || !fd_) return Status::OK();
  Status st = file::WriteAll(fd_->fd, buffer_.data(), buffer_.size(), fd_->path);
  if (!st.ok()) {
    (void)::ftruncate(fd_->fd, static_cast<off_t>(size_ - buffer_.size()));
    size_ -= buffer_.size();
    if (durability_ == Durability::kBuffered) {
      // Every buffered record was acknowledged: keep them for the caller to
      // report, and take no more (the handle would diverge from the log).
      const size_t before = lost_.size();
      for (size_t at = 0; at + kRecordHeaderSizeV2 <= buffer_.size();) {
        const uint32_t n = DecodeFixed32(buffer_.data() + at);
        const uint8_t op = buffer_[at + 12];
        if (op != kSealOpType) {
          const uint8_t* body = buffer_.data() + at + kRecordHeaderSizeV2;
          lost_.push_back({DecodeFixed64(buffer_.data() + at + 4), op,
                           std::vector<uint8_t>(body, body + n)});
        }
        at += kRecordHeaderSizeV2 + n;
      }
      st = Status::IOError(st.message() + "; " + std::to_string(lost_.size() - before) +
                           " buffered records were lost");
      buffer_.clear();
      Fail(st);
      return Failure();
    }
  }
  buffer_.clear();
  return st;
}

std::vector<LostRecord> SegmentWriter::lost_records() const {
  std::lock_guard<std::mutex> l(mu_);
  return lost_;
}

Status SegmentWriter::Append(std::atomic<uint64_t>* clock, uint8_t op_type, const uint8_t* data,
                             uint32_t n, uint64_t* seqno, RecordPlace* where) {
  if (n > kMaxPayload) {
    return Status::InvalidArgument("payload of " + std::to_string(n) +
                                   " bytes exceeds the maximum of " + std::to_string(kMaxPayload));
  }
  if (has_failed_.load(std::memory_order_acquire)) return Failure();
  uint64_t seq;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return Status::Closed("segment writer is closed");
    if (has_failed_.load(std::memory_order_relaxed)) return Failure();
    seq = clock->fetch_add(1) + 1;
    const uint64_t rec = kRecordHeaderSizeV2 + n;
    if (!fd_ || (size_ > kHeaderSize && size_ + rec + kSealBytes > segment_bytes_)) {  // room for the seal
      CHITTA_RETURN_IF_ERROR(OpenNewSegmentLocked(seq));
    }
    if (durability_ == Durability::kBuffered && !buffer_.empty() &&
        buffer_.size() + rec > kBufferLimit) {
      // Written before this record joins: a failure loses only acknowledged
      // records (reported), never this one (its caller gets the error).
      CHITTA_RETURN_IF_ERROR(FlushBufferLocked());
    }
    uint8_t* p;
    const bool gather = durability_ != Durability::kFlush;  // kFsync: the leader writes the group
    if (gather) {
      buffer_.resize(buffer_.size() + rec);
      p = buffer_.data() + buffer_.size() - rec;
    } else {
      scratch_.resize(rec);
      p = scratch_.data();
    }
    EncodeRecordV2(p, seq, op_type, data, n);
    if (where != nullptr) {
      where->segment = current_name_;
      where->payload_at = size_ + kRecordHeaderSizeV2;
    }
    if (gather) {
      size_ += rec;
    } else {
      CHITTA_RETURN_IF_ERROR(WriteLocked(p, rec));
      size_ += rec;
    }
    last_seqno_ = seq;
    ++seg_records_;
    bytes_appended_ += rec;
    if (durability_ == Durability::kFsync) {
      std::lock_guard<std::mutex> s(sync_mu_);
      ++written_records_;  // a leader in its commit delay looks at this when it wakes
    }
  }
  *seqno = seq;
  if (durability_ == Durability::kFsync) return SyncThrough(seq);
  return Status::OK();
}

Status SegmentWriter::SyncThrough(uint64_t seqno) {
  using Clock = std::chrono::steady_clock;
  int led = 0;  // syncs this thread made in this call
  std::atomic<uint32_t>& word = wait_words_[seqno % kWaitWords];
  const uint64_t bit = uint64_t{1} << (seqno % kWaitWords);
  while (true) {
    // Followers sleep on the futex word of their seqno and look at
    // durable_seqno_ without the lock: a sync wakes only the words of the
    // seqnos it covered, and a covered follower returns at once.
    const uint32_t gen = word.load(std::memory_order_acquire);
    if (led == 0 && durable_seqno_.load(std::memory_order_acquire) >= seqno) {
      RelayOn();
      break;
    }
    std::unique_lock<std::mutex> l(sync_mu_);
    if (synced_seqno_ >= seqno) {
      // Its record is on disk. A leader whose sync left others' records
      // waiting syncs them too, at once (a few times at most), rather than
      // leave the disk idle until a woken follower gets a CPU to lead.
      if (led == 0 || syncing_ || !failed_.ok() || written_records_ <= synced_records_) break;
      if (led >= kLeaderMaxSyncs) {  // hand the lead to the waiters
        l.unlock();
        WakeAllWaiters();
        break;
      }
    } else if (!failed_.ok()) {
      return failed_;
    } else if (syncing_) {
      l.unlock();
      waiting_mask_.fetch_or(bit, std::memory_order_acq_rel);
      futex::Wait(&word, gen);
      RelayOn();  // woken (or not asleep at all): pass the relay on before anything else
      continue;
    }
    syncing_ = true;  // this thread leads; the others wait for its fdatasync
    uint64_t delayed_ns = 0;
    if (led == 0 && last_group_ > 1 && written_records_ - synced_records_ <= 1) {
      // Commit delay, only when this record would go alone although the last
      // sync carried several: let the appenders on their way join it. Records
      // that arrived during the last sync mean the pipeline is busy: sync them
      // at once (a delay would only leave the disk idle). The leader is not
      // woken per arriving record; it looks every quiet period, and stops once
      // one passed without arrivals or at the deadline.
      const auto start = Clock::now();
      const uint64_t max_ns =
          std::clamp<uint64_t>(last_sync_ns_, kCommitMinDelayNs, kCommitMaxDelayNs);
      const auto deadline = start + std::chrono::nanoseconds(max_ns);
      const auto quiet = std::chrono::nanoseconds(kCommitQuietNs);
      uint64_t seen = written_records_;
      while (true) {
        const auto wake = std::min(Clock::now() + quiet, deadline);
        while (leader_cv_.wait_until(l, wake) != std::cv_status::timeout) {
        }
        if (Clock::now() >= deadline || written_records_ == seen) break;
        seen = written_records_;
      }
      delayed_ns = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    }
    // Wake from here: anything that raised synced_seqno_ during this sync
    // (a rotation, Sync()) is then covered by this leader's wake-up too.
    const uint64_t before = synced_seqno_;
    l.unlock();
    uint64_t target = 0, target_records = 0, took = 0;
    const Status st = Lead(&target, &target_records, &took);
    l.lock();
    syncing_ = false;
    if (!st.ok() || !failed_.ok()) {  // failed here, or meanwhile by Sync(): publish nothing
      l.unlock();
      if (!st.ok()) Fail(st);
      if (led > 0) return Status::OK();  // a leader going on for others: its own record is durable
      return st.ok() ? Failure() : st;
    }
    const uint64_t group = target_records > synced_records_ ? target_records - synced_records_ : 0;
    synced_records_ = std::max(synced_records_, target_records);
    synced_seqno_ = std::max(synced_seqno_, target);
    last_group_ = group;
    last_sync_ns_ = took;
    stats_.syncs++;
    stats_.records += group;
    stats_.sync_ns += took;
    stats_.max_sync_ns = std::max(stats_.max_sync_ns, took);
    stats_.delay_ns += delayed_ns;
    size_t bucket = 0;
    while (bucket + 1 < SyncStats::kBuckets && (group >> (bucket + 1)) != 0) ++bucket;
    stats_.per_sync[bucket]++;
    durable_seqno_.store(synced_seqno_, std::memory_order_release);
    const uint64_t after = synced_seqno_;
    l.unlock();
    Relay(before, after);
    ++led;
  }
  return Status::OK();
}

// The leader's part of a group commit: writes the pending group with one
// write(2), then makes everything written so far durable with one fdatasync.
// Holds mu_ only for the write; appenders go on filling the next group.
Status SegmentWriter::Lead(uint64_t* target, uint64_t* target_records, uint64_t* took_ns) {
  std::shared_ptr<Fd> fd;
  {
    std::lock_guard<std::mutex> m(mu_);
    if (has_failed_.load()) return Failure();
    const Status written = FlushBufferLocked();
    if (!written.ok()) {  // the group is gone: fail before another Append joins the next one
      Fail(written);
      return written;
    }
    fd = fd_;  // null once closed: Close() wrote and synced everything
    *target = last_seqno_;
    std::lock_guard<std::mutex> s(sync_mu_);
    *target_records = written_records_;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = fd ? ::fdatasync(fd->fd) : 0;
  const int err = errno;
  *took_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - t0)
                                       .count());
  if (rc != 0) return Status::IOError("fdatasync " + fd->path + ": " + file::ErrnoText(err));
  return Status::OK();
}

Status SegmentWriter::Failure() const {
  std::lock_guard<std::mutex> s(sync_mu_);
  return failed_;
}

void SegmentWriter::Fail(const Status& st) {
  {
    std::lock_guard<std::mutex> s(sync_mu_);
    if (failed_.ok()) {
      failed_ = Status::IOError("the segment writer failed and takes no more records (reopen the field): " +
                                st.message());
    }
    has_failed_.store(true, std::memory_order_release);
  }
  WakeAllWaiters();
}

bool SegmentWriter::WakeWord(size_t i) {
  wait_words_[i].fetch_add(1, std::memory_order_acq_rel);  // a waiter about to sleep sees the change
  const uint64_t bit = uint64_t{1} << i;
  if (!(waiting_mask_.fetch_and(~bit, std::memory_order_acq_rel) & bit)) return false;
  futex::WakeAll(&wait_words_[i]);
  return true;
}

void SegmentWriter::Relay(uint64_t from, uint64_t through) {
  if (through <= from) return;
  uint64_t mask = ~uint64_t{0};
  if (through - from < kWaitWords) {
    mask = 0;
    for (uint64_t s = from + 1; s <= through; ++s) mask |= uint64_t{1} << (s % kWaitWords);
  }
  relay_mask_.fetch_or(mask, std::memory_order_acq_rel);
  RelayOn();
}

void SegmentWriter::RelayOn() {
  int woke = 0;
  uint64_t m = relay_mask_.load(std::memory_order_acquire);
  while (m != 0) {
    const uint64_t bit = m & (~m + 1);
    if (!relay_mask_.compare_exchange_weak(m, m & ~bit, std::memory_order_acq_rel)) continue;
    // Two per hop: a group of n wakes in about log2(n) hops, each woken sleeper relaying on.
    if (WakeWord(static_cast<size_t>(__builtin_ctzll(bit))) && ++woke == kRelayFanOut) return;
    m = relay_mask_.load(std::memory_order_acquire);
  }
}

void SegmentWriter::WakeCovered(uint64_t from, uint64_t through) {
  if (through <= from) return;
  if (through - from >= kWaitWords) return WakeAllWaiters();
  for (uint64_t s = from + 1; s <= through; ++s) WakeWord(s % kWaitWords);
}

void SegmentWriter::WakeAllWaiters() {
  for (size_t i = 0; i < kWaitWords; ++i) WakeWord(i);
}

Status SegmentWriter::Flush() {
  std::lock_guard<std::mutex> l(mu_);
  if (has_failed_.load(std::memory_order_acquire)) return Failure();
  return FlushBufferLocked();
}

Status SegmentWriter::Sync() {
  std::shared_ptr<Fd> fd;
  uint64_t last;
  uint64_t records;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (has_failed_.load(std::memory_order_acquire)) return Failure();
    CHITTA_RETURN_IF_ERROR(FlushBufferLocked());
    fd = fd_;
    last = last_seqno_;
    std::lock_guard<std::mutex> s(sync_mu_);
    records = written_records_;
  }
  if (fd && ::fdatasync(fd->fd) != 0) {
    const Status st = Status::IOError("fdatasync " + fd->path + ": " + file::ErrnoText(errno));
    if (durability_ == Durability::kFsync) Fail(st);
    return st;
  }
  std::lock_guard<std::mutex> s(sync_mu_);
  if (!failed_.ok()) return failed_;
  const uint64_t before = synced_seqno_;
  synced_seqno_ = std::max(synced_seqno_, last);
  synced_records_ = std::max(synced_records_, records);
  durable_seqno_.store(synced_seqno_, std::memory_order_release);
  WakeCovered(before, synced_seqno_);
  return Status::OK();
}

SyncStats SegmentWriter::sync_stats() const {
  std::lock_guard<std::mutex> s(sync_mu_);
  return stats_;
}

Status SegmentWriter::Close() {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return Status::OK();
  closed_ = true;
  // A failed fsync writer drops its pending group: each of those appenders
  // already got the error, so none of them may turn up on disk later.
  if (durability_ == Durability::kFsync && has_failed_.load()) buffer_.clear();
  Status st = FlushBufferLocked();
  if (st.ok() && fd_ && durability_ != Durability::kFlush && ::fdatasync(fd_->fd) != 0) {
    st = Status::IOError("fdatasync " + fd_->path + ": " + file::ErrnoText(errno));
  }
  fd_.reset();
  // A buffered writer that lost records says so at every Close, not only once.
  if (st.ok() && durability_ == Durability::kBuffered && has_failed_.load()) return Failure();
  if (durability_ != Durability::kFsync || has_failed_.load()) return st;
  if (!st.ok()) {
    Fail(st);
    return st;
  }
  uint64_t before, after;
  {
    std::lock_guard<std::mutex> s(sync_mu_);
    if (!failed_.ok()) return Status::OK();
    before = synced_seqno_;
    synced_seqno_ = std::max(synced_seqno_, last_seqno_);
    synced_records_ = std::max(synced_records_, written_records_);
    durable_seqno_.store(synced_seqno_, std::memory_order_release);
    after = synced_seqno_;
  }
  WakeCovered(before, after);  // appenders waiting on a group that Close() just synced
  return st;
}

std::vector<std::string> SegmentWriter::created() const {
  std::lock_guard<std::mutex> l(mu_);
  return created_;
}

std::string SegmentWriter::current_segment() const {
  std::lock_guard<std::mutex> l(mu_);
  return current_name_;
}

uint64_t SegmentWriter::last_seqno() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_seqno_;
}

uint64_t SegmentWriter::current_size() const {
  std::lock_guard<std::mutex> l(mu_);
  return size_;
}

}  // namespace chitta::wal
