// csrc/wal/segment_writer.h
// The one writer of one instance: appends records to its current segment,
// rotates at the configured size, and makes records durable as its mode says:
//   kFlush    one write(2) per record: in the OS when Append returns
//   kFsync    group commit: an appender adds its record to the pending
//             group in memory; one leader writes the whole group with one
//             write(2) and makes it durable with one fdatasync, and Append
//             returns once its record is on disk. Only when the leader's own
//             record would go alone after a sync that carried several does it
//             wait briefly while other appenders keep arriving (commit delay:
//             until none came for kCommitQuietNs, at most about one
//             fdatasync's time) so more records share a sync. A failed write
//             or fdatasync fails the writer for good (the page cache can no
//             longer be trusted): every waiting and later Append returns it.
//   kBuffered records gather in memory; written on Flush(), rotation, Close()
//             and before a record that would take the buffer past its limit.
//             A failed write of the buffer fails the writer for good, like a
//             failed fsync, and keeps the records it lost (lost_records()).
// Thread-safe: any number of threads may Append at once.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chitta/status.h"

namespace chitta::wal {

enum class Durability { kFlush = 0, kFsync = 1, kBuffered = 2 };

// Where an appended record's payload lies: segment file name and byte offset.
struct RecordPlace {
  std::string segment;
  uint64_t payload_at = 0;
};

// A record a failed kBuffered flush lost: it had been acknowledged (its Append
// returned OK) but never reached the file.
struct LostRecord {
  uint64_t seqno = 0;
  uint8_t op_type = 0;
  std::vector<uint8_t> payload;
};

// Group commit counters (kFsync), for benchmarks and operators.
struct SyncStats {
  static constexpr size_t kBuckets = 11;
  uint64_t syncs = 0;        // fdatasync calls made by group-commit leaders
  uint64_t records = 0;      // records those calls made durable
  uint64_t sync_ns = 0;      // total time inside those fdatasync calls
  uint64_t max_sync_ns = 0;  // the slowest one
  uint64_t delay_ns = 0;     // total commit-delay wait of the leaders
  // Records per sync: bucket b counts syncs of [2^b, 2^(b+1)) records; the last, 1024 and more.
  std::array<uint64_t, kBuckets> per_sync{};
};

// Commit delay bounds: a leader alone with its record waits while appenders
// keep arriving, until none came for kCommitQuietNs, and never longer than the
// last fdatasync took (clamped to [kCommitMinDelayNs, kCommitMaxDelayNs]). No
// wait when the last group was a single record (one appender: waiting only
// adds latency) nor when others' records already wait (the disk would idle).
constexpr uint64_t kCommitQuietNs = 50'000;
constexpr uint64_t kCommitMinDelayNs = 100'000;
constexpr uint64_t kCommitMaxDelayNs = 2'000'000;
// A leader whose record is durable goes on syncing records that arrived
// meanwhile, up to this many fdatasyncs in one Append, before it returns.
constexpr int kLeaderMaxSyncs = 4;
// Wake-ups by relay (see relay_mask_): each woken follower wakes this many more.
constexpr int kRelayFanOut = 2;

class SegmentWriter {
 public:
  SegmentWriter(std::string dir, uint32_t instance_id, Durability durability,
                uint64_t segment_bytes);
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Continue appending to an existing 2.0 segment whose first valid_size bytes
  // are intact (`records` records, the last with last_seqno); anything after
  // them (a torn tail, quarantined by the caller) is cut off.
  Status Continue(const std::string& name, uint64_t first_seqno, uint64_t valid_size,
                  uint64_t records, uint64_t last_seqno);

  // Takes the next seqno from *clock (Lamport: clock only grows) and appends.
  // `where` (optional): the segment the record went into and the file offset of
  // its payload's first byte (in the file once Append returns, except kBuffered).
  Status Append(std::atomic<uint64_t>* clock, uint8_t op_type, const uint8_t* data, uint32_t n,
                uint64_t* seqno, RecordPlace* where = nullptr);
  Status Flush();  // buffered bytes -> OS
  Status Sync();   // everything written so far -> disk
  Status Close();

  // Segments this writer created (readers of the same Log skip them).
  std::vector<std::string> created() const;
  std::string current_segment() const;
  uint64_t current_size() const;
  uint64_t bytes_appended() const { return bytes_appended_.load(); }
  uint64_t last_seqno() const;
  SyncStats sync_stats() const;
  bool failed() const { return has_failed_.load(std::memory_order_acquire); }
  // kBuffered: the acknowledged records the failed flush lost, in seqno order.
  std::vector<LostRecord> lost_records() const;

 private:
  struct Fd;
  Status OpenNewSegmentLocked(uint64_t first_seqno);
  Status WriteLocked(const uint8_t* data, size_t n);
  Status FlushBufferLocked();
  Status SyncThrough(uint64_t seqno);
  Status Failure() const;     // kFsync: the error that failed the writer, or OK
  void Fail(const Status& st);  // records it (the first wins) and wakes every waiter
  Status Lead(uint64_t* target, uint64_t* target_records, uint64_t* took_ns);
  bool WakeWord(size_t i);  // true if it had sleepers to wake
  void Relay(uint64_t from, uint64_t through);  // hand the words of seqnos (from, through] to the relay
  void RelayOn();  // wakes the next relayed word that has sleepers, if any
  void WakeCovered(uint64_t from, uint64_t through);  // the words of seqnos (from, through]
  void WakeAllWaiters();

  const std::string dir_;
  const uint32_t instance_id_;
  const Durability durability_;
  const uint64_t segment_bytes_;

  mutable std::mutex mu_;  // file state and append order
  std::shared_ptr<Fd> fd_;
  std::string current_name_;
  uint64_t size_ = 0;  // logical size including buffered bytes
  std::vector<uint8_t> buffer_;  // kBuffered: records not yet written; kFsync: the pending group
  std::vector<uint8_t> scratch_;
  std::vector<std::string> created_;
  uint64_t last_seqno_ = 0;
  uint64_t seg_records_ = 0;  // records in the current segment (its seal counts them)
  bool closed_ = false;
  std::atomic<uint64_t> bytes_appended_{0};
  std::vector<LostRecord> lost_;  // kBuffered, after a failed flush; guarded by mu_

  // Group commit (kFsync). Lock order: mu_ before sync_mu_.
  mutable std::mutex sync_mu_;
  std::condition_variable leader_cv_;  // the leader's commit delay (a timed wait; never notified)
  uint64_t synced_seqno_ = 0;
  uint64_t written_records_ = 0;  // counts, for the records-per-sync statistics
  uint64_t synced_records_ = 0;
  uint64_t last_group_ = 0;    // records made durable by the last leader sync
  uint64_t last_sync_ns_ = 0;  // how long that sync took
  bool syncing_ = false;
  Status failed_;                      // set once by Fail(); guarded by sync_mu_
  std::atomic<bool> has_failed_{false};  // failed_ is set: Append checks this without sync_mu_
  SyncStats stats_;
  // Followers wait without the lock (util/futex.h): durable_seqno_ mirrors
  // synced_seqno_; a follower sleeps on the word of its seqno (seqno %
  // kWaitWords) after setting that word's bit in waiting_mask_; a leader bumps
  // the words of the seqnos its sync covered and wakes those with a sleeper.
  static constexpr size_t kWaitWords = 64;
  std::atomic<uint64_t> durable_seqno_{0};
  std::array<std::atomic<uint32_t>, kWaitWords> wait_words_{};
  std::atomic<uint64_t> waiting_mask_{0};
  // A leader's wake-ups go by relay: it wakes the first covered words with a
  // sleeper and each woken follower wakes the next ones (RelayOn), so the
  // leader goes straight on to its next sync and the woken threads arrive in
  // waves instead of all at once.
  std::atomic<uint64_t> relay_mask_{0};
};

}  // namespace chitta::wal
