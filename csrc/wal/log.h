// csrc/wal/log.h
// A field's log: every instance's segments under <root>/segments, read as one
// stream merged by (seqno, instance_id), plus this process's own writer.
//
// Seqnos are Lamport clocks: the writer starts above every seqno it has seen
// (MANIFEST cache, verified) and every ReadNew moves it past what it read, so
// an op written after reading another instance's op always sorts after it.
// Readers never block writers: they read what is complete and leave an
// unfinished tail for the next look.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chitta/status.h"
#include "wal/instance_lock.h"
#include "wal/manifest.h"
#include "wal/segment_reader.h"
#include "wal/segment_writer.h"

namespace chitta::wal {

struct LogOptions {
  uint32_t instance_id = 0;  // 0: a fresh random id; otherwise continue this one
  Durability durability = Durability::kFlush;
  uint64_t segment_bytes = 256ull << 20;
  bool create = true;      // create <root>/segments if missing
  bool read_only = false;  // no writer, no lock, no MANIFEST rewrite
  bool salvage = false;    // skip and report damage instead of failing
};

struct RecordRef {
  uint64_t seqno;
  uint32_t instance_id;
  uint8_t op_type;
  uint32_t segment;      // index into ReadBatch::segments
  uint64_t offset;         // of the record in its segment
  const uint8_t* payload;  // len bytes, kept alive by the ReadBatch's owners
  uint32_t len;
  uint64_t payload_at = 0;  // byte offset of payload[0] in its segment file (inner ops of a Batch too)
};

// Payloads are not copied: they stay where they were read (the segments'
// memory maps), and `owners` keeps that memory mapped for as long as the batch
// lives. A batch made from another (a Batch record unpacked) shares its owners.
// Records handed out are complete and CRC-checked; segments only ever grow past
// them (a torn tail is cut only beyond the last complete record), so the bytes
// under a payload never change while it is mapped.
struct ReadBatch {
  std::vector<RecordRef> records;  // merged by (seqno, instance_id)
  std::vector<std::shared_ptr<const void>> owners;
  std::vector<std::string> segments;
  std::vector<Damage> damages;     // what salvage skipped (torn tails are not listed)
  void Clear();
};

// Where a reader stands in one segment: what a checkpoint records per segment
// so that a later open can resume reading after it (FORMAT.md, checkpoints).
struct SegmentPosition {
  std::string name;
  uint64_t offset = 0;      // next unread byte (0: header not read yet)
  uint64_t last_seqno = 0;  // seqno of the last record read from it
  bool header_ok = false;
  bool dead = false;        // salvage gave up on this segment
};
struct LogStats {
  uint64_t segments = 0;
  uint64_t bytes = 0;
  std::vector<uint32_t> instances;  // every instance with at least one segment
};

class Log {
 public:
  static Status Open(const std::string& root, const LogOptions& options, std::unique_ptr<Log>* out);
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Everything complete and not yet read: all other instances' records, and
  // this instance's records from before this open. Never the records this
  // Log appended. Advances the Lamport clock past what it returns.
  // With commit=false the read positions move only on CommitRead(), so a
  // caller that fails to apply the batch gets the same records next time.
  Status ReadNew(ReadBatch* out, bool commit = true);
  void CommitRead();
  // Whether ReadNew could return anything (or damage) now: false only when no
  // segment appeared and none that ReadNew would read grew past its committed
  // position. Reads nothing and moves nothing; true may still read nothing
  // (also where a listing or a size could not be taken: ReadNew reports that).
  Status MayHaveNew(bool* out) const;

  // The committed read positions of every segment this Log has read (never
  // its own writer's segments): with the records applied so far they form a
  // consistent watermark.
  std::vector<SegmentPosition> Positions() const;
  // Resume from a checkpoint's positions instead of reading from the start.
  // Only before the first ReadNew. Each named segment must exist and hold at
  // least `offset` bytes (its valid part, for this writer's continued
  // segment); otherwise Corruption and nothing changes. The clock moves past
  // `clock` (the highest seqno the checkpoint saw).
  Status SeedPositions(const std::vector<SegmentPosition>& positions, uint64_t clock);
  Status Append(uint8_t op_type, const uint8_t* data, size_t n, uint64_t* seqno,
                RecordPlace* where = nullptr);
  Status Flush();
  Status Sync();
  Status Close();
  Status Stats(LogStats* out) const;
  // Group commit counters of this Log's writer (all zero without one).
  SyncStats sync_stats() const { return writer_ ? writer_->sync_stats() : SyncStats{}; }
  // The writer failed for good (a failed fsync, or a failed buffered flush).
  bool writer_failed() const { return writer_ && writer_->failed(); }
  // kBuffered: the acknowledged records a failed flush lost (empty otherwise).
  std::vector<LostRecord> lost_records() const {
    return writer_ ? writer_->lost_records() : std::vector<LostRecord>{};
  }

  uint32_t instance_id() const { return instance_id_; }  // 0 when read-only
  uint64_t clock() const { return clock_.load(); }       // highest seqno seen or written
  bool read_only() const { return options_.read_only; }
  bool closed() const { return closed_.load(); }
  const std::string& root() const { return root_; }

 private:
  struct Cursor {
    std::string name;
    uint32_t instance_id;
    uint64_t first_seqno;
    uint64_t limit;  // read no further (own continued segment)
    ScanState state;
  };

  // The segment directory as ReadNew and MayHaveNew see it (read_mu_ held):
  // per instance its last segment's first seqno, and the segments of others
  // (not this Log's writer's) that have no cursor yet.
  struct Listing {
    std::map<uint32_t, uint64_t> last_first;
    std::vector<Cursor> uncursored;
  };
  Status ListLocked(Listing* out) const;
  // Whether `c` is its instance's last segment (or this Log's continued one).
  bool IsLastLocked(const Cursor& c, const Listing& listing) const;

  Log(std::string root, LogOptions options);
  Status Init();
  Status ChooseInstance(const std::map<uint32_t, std::vector<std::pair<uint64_t, std::string>>>& by_instance);
  Status LoadClockFromManifest(const std::map<uint32_t, std::vector<std::pair<uint64_t, std::string>>>& by_instance);
  Status WriteManifest();
  void BumpClock(uint64_t seen);

  const std::string root_;
  const std::string seg_dir_;
  const LogOptions options_;
  uint32_t instance_id_ = 0;
  std::atomic<uint64_t> clock_{0};
  std::atomic<bool> closed_{false};
  std::unique_ptr<InstanceLock> lock_;
  std::unique_ptr<SegmentWriter> writer_;
  std::string continued_;  // own segment taken over at open, if any
  uint64_t continued_limit_ = 0;

  mutable std::mutex read_mu_;
  std::map<std::string, Cursor> cursors_;
  bool read_started_ = false;  // a ReadNew ran: SeedPositions is too late
  std::vector<std::pair<std::string, ScanState>> pending_;  // uncommitted read positions
  std::map<uint32_t, ManifestEntry> manifest_;  // per instance, verified at open
};

Status ParseDurability(const std::string& name, Durability* out);

// Checks every record of every segment without taking locks; damages and torn
// tails are listed, never repaired.
struct VerifyReport {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  std::vector<Damage> damages;  // torn tails included (kind kTornTail)
};
Status Verify(const std::string& root, VerifyReport* out);

}  // namespace chitta::wal
