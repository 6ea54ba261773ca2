// csrc/wal/instance_lock.h
// Exclusive ownership of a writer instance id: a lock file
// <root>/locks/{id:08x}.lock holding "host\npid\n", created atomically with
// link(2). A lock left by a dead pid on this host is reclaimed; a lock of
// another host is never touched (we cannot know whether it is alive).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "chitta/status.h"

namespace chitta::wal {

class InstanceLock {
 public:
  // Takes the lock. If_free_only: a held or stale lock is reported as kLocked
  // without reclaiming (used when picking fresh random ids).
  static Status Acquire(const std::string& locks_dir, uint32_t instance_id, bool if_free_only,
                        std::unique_ptr<InstanceLock>* out);
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  void Release();
  const std::string& path() const { return path_; }

 private:
  explicit InstanceLock(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool held_ = true;
};

std::string LockFileName(uint32_t instance_id);

}  // namespace chitta::wal
