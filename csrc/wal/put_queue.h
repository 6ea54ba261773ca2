// csrc/wal/put_queue.h
// Field.remember's plain path without Python: a plain PutPayload (every field
// but id, text and time at its default, docs/OPS.md op 0) is encoded, appended
// to this instance's log and queued as columns - ids, times and one UTF-8 text
// arena - which the organs take as one run (Take). The instance's memory-id
// counter lives here too, so every write path of a handle draws from one
// counter. Thread-safe: any number of threads may Put at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "chitta/status.h"
#include "wal/log.h"

namespace chitta::wal {

// Queued puts as columns, oldest first. Row i: id ids[i], created = written =
// ms[i], text arena[offsets[i], offsets[i+1]).
struct PutRun {
  std::vector<uint64_t> ids;
  std::vector<int64_t> ms;
  std::string arena;
  std::vector<int64_t> offsets{0};  // size() + 1 entries
  size_t size() const { return ids.size(); }
  void Clear();
};

class PutQueue {
 public:
  static constexpr uint64_t kMaxLocalId = 0xffffffffull;  // ids are (instance << 32) | local

  // `log` must have a writer (not read-only) for Put to succeed.
  PutQueue(std::shared_ptr<Log> log, uint32_t instance_id);

  // The next local id handed out (1 on a fresh instance; replay says where a
  // continued instance stands).
  void StartIds(uint64_t next_local) { next_local_.store(next_local); }
  uint64_t next_local() const { return next_local_.load(); }

  // A fresh id, or false once all 2**32 local ids are used (nothing taken then).
  bool NewId(uint64_t* id);

  // Encodes the plain put (id, text, created_ms = written_ms = ms), appends it
  // and queues it. OK only once the record is as durable as the log's mode
  // promises (flush: in the OS; fsync: on disk); on error nothing is queued.
  // `text` must be valid UTF-8 of at most the field's text limit (the caller checks).
  Status Put(uint64_t id, std::string_view text, int64_t ms);

  size_t size() const { return size_.load(std::memory_order_relaxed); }

  // Moves everything queued into *out (its old contents are dropped), oldest first.
  void Take(PutRun* out);

  // Epoch milliseconds of the system clock (what int(time.time() * 1000) gives).
  static int64_t NowMs();

 private:
  std::shared_ptr<Log> log_;
  const uint64_t instance_high_;
  std::atomic<uint64_t> next_local_{1};
  std::mutex mu_;  // queued_
  PutRun queued_;
  std::atomic<size_t> size_{0};
};

}  // namespace chitta::wal
