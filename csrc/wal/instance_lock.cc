// csrc/wal/instance_lock.cc
#include "wal/instance_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "util/file.h"

namespace chitta::wal {
namespace {

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string LockContent() { return HostName() + "\n" + std::to_string(getpid()) + "\n"; }

bool ParseLock(const std::string& content, std::string* host, long* pid) {
  auto nl = content.find('\n');
  if (nl == std::string::npos || nl == 0) return false;
  *host = content.substr(0, nl);
  std::string rest = content.substr(nl + 1);
  if (rest.empty() || rest.back() != '\n') return false;
  rest.pop_back();
  if (rest.empty() || rest.size() > 18) return false;
  long v = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pid = v;
  return true;
}

bool ProcessIsDead(long pid) { return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

std::string UniqueSuffix() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%08x", static_cast<int>(getpid()), rd());
  return buf;
}

}  // namespace

std::string LockFileName(uint32_t instance_id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08x.lock", instance_id);
  return buf;
}

Status InstanceLock::Acquire(const std::string& locks_dir, uint32_t instance_id, bool if_free_only,
                             std::unique_ptr<InstanceLock>* out) {
  CHITTA_RETURN_IF_ERROR(file::MakeDirs(locks_dir));
  const std::string path = locks_dir + "/" + LockFileName(instance_id);
  const std::string tmp = locks_dir + "/.tmp." + UniqueSuffix();
  const std::string mine = LockContent();
  CHITTA_RETURN_IF_ERROR(file::AtomicWrite(tmp, mine, false));
  Status result = Status::Locked("lock contention on " + path);
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (link(tmp.c_str(), path.c_str()) == 0) {
      result = Status::OK();
      break;
    }
    if (errno != EEXIST) {
      result = Status::IOError("link " + path + ": " + file::ErrnoText(errno));
      break;
    }
    std::string held;
    Status rs = file::ReadSmallFile(path, &held, 4096);
    if (rs.code() == Code::kNotFound) continue;  // released meanwhile: try again
    std::string host;
    long pid = 0;
    const bool parsed = rs.ok() && ParseLock(held, &host, &pid);
    if (!parsed) {
      result = Status::Locked("instance lock " + path +
                              " is unreadable; remove it if no process uses this instance");
      break;
    }
    const bool stale = host == HostName() && pid != getpid() && ProcessIsDead(pid);
    if (if_free_only || !stale) {
      result = Status::Locked("instance " + LockFileName(instance_id).substr(0, 8) +
                              " is held by pid " + std::to_string(pid) + " on " + host);
      break;
    }
    // Reclaim: move the stale lock aside, and make sure what we moved is the
    // stale lock we judged (another process may have reclaimed it first).
    const std::string aside = locks_dir + "/.stale." + UniqueSuffix();
    if (rename(path.c_str(), aside.c_str()) != 0) continue;
    std::string moved;
    Status ms = file::ReadSmallFile(aside, &moved, 4096);
    if (!ms.ok() || moved != held) {
      (void)link(aside.c_str(), path.c_str());  // put a live lock back
    }
    unlink(aside.c_str());
  }
  unlink(tmp.c_str());
  if (!result.ok()) return result;
  out->reset(new InstanceLock(path));
  return Status::OK();
}

InstanceLock::~InstanceLock() { Release(); }

void InstanceLock::Release() {
  if (held_) {
    unlink(path_.c_str());
    held_ = false;
  }
}

}  // namespace chitta::wal
