// csrc/wal/put_queue.cc
#include "wal/put_queue.h"

#include <time.h>

#include <utility>

#include "wal/put_payload.h"

namespace chitta::wal {

void PutRun::Clear() {
  ids.clear();
  ms.clear();
  arena.clear();
  offsets.assign(1, 0);
}

PutQueue::PutQueue(std::shared_ptr<Log> log, uint32_t instance_id)
    : log_(std::move(log)), instance_high_(static_cast<uint64_t>(instance_id) << 32) {}

bool PutQueue::NewId(uint64_t* id) {
  uint64_t local = next_local_.load(std::memory_order_relaxed);
  do {
    if (local > kMaxLocalId) return false;
  } while (!next_local_.compare_exchange_weak(local, local + 1, std::memory_order_relaxed));
  *id = instance_high_ | local;
  return true;
}

Status PutQueue::Put(uint64_t id, std::string_view text, int64_t ms) {
  thread_local std::string payload;
  payload.clear();
  EncodeSimplePut(id, text, ms, ms, &payload);
  uint64_t seqno = 0;
  Status st = log_->Append(0, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &seqno);
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> l(mu_);
  queued_.ids.push_back(id);
  queued_.ms.push_back(ms);
  queued_.arena.append(text);
  queued_.offsets.push_back(static_cast<int64_t>(queued_.arena.size()));
  size_.store(queued_.ids.size(), std::memory_order_relaxed);
  return Status::OK();
}

void PutQueue::Take(PutRun* out) {
  out->Clear();
  std::lock_guard<std::mutex> l(mu_);
  std::swap(*out, queued_);  // the queue keeps *out's (cleared) buffers for the next run
  size_.store(0, std::memory_order_relaxed);
}

int64_t PutQueue::NowMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace chitta::wal
