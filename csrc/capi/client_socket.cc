// csrc/capi/client_socket.cc
#include "capi/client_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "util/sha256.h"

namespace chitta::capi {
namespace {

using Clock = std::chrono::steady_clock;

bool Set(SocketError* err, cf_status status, std::string text) {
  err->status = status;
  err->text = std::move(text);
  return false;
}

int SetFd(SocketError* err, cf_status status, std::string text) {
  Set(err, status, std::move(text));
  return -1;
}

std::string Errno(int e) { return std::strerror(e); }

// "/" joined parts without "", "." (pathlib's normal form; ".." kept).
std::string Normalise(const std::string& p) {
  std::string out;
  size_t i = 0;
  const bool rooted = !p.empty() && p[0] == '/';
  // pathlib keeps exactly two leading slashes (POSIX leaves "//" to the system).
  const bool two = p.size() >= 2 && p[0] == '/' && p[1] == '/' && (p.size() == 2 || p[2] != '/');
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    const std::string part = p.substr(i, j - i);
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') out += '/';
      out += part;
    }
    i = j + 1;
  }
  if (rooted) out = (two ? "//" : "/") + out;
  return out.empty() ? "." : out;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Clock::time_point Deadline(uint32_t ms) { return Clock::now() + std::chrono::milliseconds(ms); }

int MillisLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left > 1 << 30 ? 1 << 30 : left);
}

// Waits until fd is ready for events or the deadline passes.
bool WaitFor(int fd, short events, Clock::time_point deadline, SocketError* err,
             const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, MillisLeft(deadline));
    if (r > 0) return true;
    if (r == 0) return Set(err, CF_EIO, std::string("the daemon did not ") + what + " in time");
    if (errno != EINTR) return Set(err, CF_EIO, std::string("poll: ") + Errno(errno));
  }
}

bool CheckDir(const std::string& dir, SocketError* err) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return Set(err, CF_EUNAVAILABLE,
                 dir + " does not exist: no chitta daemon listens there; start one with "
                       "`chitta --path FIELD serve` or set options.start = 1");
    return Set(err, CF_EIO, "cannot inspect " + dir + ": " + Errno(errno));
  }
  const uid_t uid = ::getuid();
  if (S_ISLNK(st.st_mode))
    return Set(err, CF_EIO, dir + " is a symlink; a socket directory must be a real directory of yours");
  if (!S_ISDIR(st.st_mode))
    return Set(err, CF_EIO, dir + " is not a directory; remove it or choose another socket path");
  if (st.st_uid != uid)
    return Set(err, CF_EIO,
               dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
                   std::to_string(uid) + "): remove it and start the daemon again");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Set(err, CF_EIO,
               dir + " has mode " + mode + "; a socket directory must be 0700 (run: chmod 700 " +
                   dir + ")");
  }
  return true;
}

bool CheckSocketFile(const std::string& path, SocketError* err) {
  if (!CheckDir(Parent(path), err)) return false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return Set(err, CF_EUNAVAILABLE,
                 "no chitta daemon listens on " + path +
                     " (no socket there); start one with `chitta --path FIELD serve` or set "
                     "options.start = 1");
    return Set(err, CF_EIO, "cannot inspect " + path + ": " + Errno(errno));
  }
  if (!S_ISSOCK(st.st_mode))
    return Set(err, CF_EIO, path + " is not a socket; remove it or choose another socket path");
  if (st.st_uid != ::getuid())
    return Set(err, CF_EIO, path + " belongs to uid " + std::to_string(st.st_uid) +
                                ", not to you; remove it and start the daemon again");
  return true;
}

// The program to run: as given when it holds a '/', else the first match in $PATH.
bool FindProgram(const std::string& command, std::string* out, SocketError* err) {
  if (command.find('/') != std::string::npos) {
    if (::access(command.c_str(), X_OK) != 0)
      return Set(err, CF_EUNAVAILABLE,
                 "cannot start the daemon: " + command + " is not an executable (" +
                     Errno(errno) + "); set options.serve_command to the chitta program");
    *out = command;
    return true;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t i = 0;
  while (i <= dirs.size()) {
    size_t j = dirs.find(':', i);
    if (j == std::string::npos) j = dirs.size();
    const std::string dir = j > i ? dirs.substr(i, j - i) : ".";
    const std::string candidate = dir + "/" + command;
    if (::access(candidate.c_str(), X_OK) == 0) {
      *out = candidate;
      return true;
    }
    i = j + 1;
  }
  return Set(err, CF_EUNAVAILABLE,
             "cannot start the daemon: `" + command +
                 "` is not in PATH; set options.serve_command to the chitta program "
                 "(e.g. /path/to/venv/bin/chitta)");
}

bool MakePrivateDir(const std::string& dir, SocketError* err) {
  const std::string parent = Parent(dir);
  if (parent != dir && parent != "/" && parent != ".") {
    struct stat st {};
    if (::stat(parent.c_str(), &st) != 0 && !MakePrivateDir(parent, err)) return false;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Set(err, CF_EIO, "cannot create " + dir + ": " + Errno(errno));
  return CheckDir(dir, err);
}

}  // namespace

bool AbsolutePath(const std::string& path, std::string* out, SocketError* err) {
  if (path.empty()) return Set(err, CF_EINVAL, "field_path is empty; give the field's directory");
  std::string p = path;
  if (p[0] == '~') {
    const size_t slash = p.find('/');
    const std::string user = p.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    std::string home;
    if (user.empty() && std::getenv("HOME")) {
      home = std::getenv("HOME");
    } else {
      const passwd* pw = user.empty() ? ::getpwuid(::getuid()) : ::getpwnam(user.c_str());
      if (pw && pw->pw_dir) home = pw->pw_dir;
    }
    if (!home.empty()) p = home + (slash == std::string::npos ? "" : p.substr(slash));
  }
  if (p[0] != '/') {
    std::vector<char> buf(4096);
    while (::getcwd(buf.data(), buf.size()) == nullptr) {
      if (errno != ERANGE || buf.size() > (1u << 20))
        return Set(err, CF_EIO, "cannot read the working directory: " + Errno(errno));
      buf.resize(buf.size() * 2);
    }
    p = std::string(buf.data()) + "/" + p;
  }
  *out = Normalise(p);
  return true;
}

std::string DefaultSocket(const std::string& abs) {
  const std::string digest = sha256::HexDigest(abs.data(), abs.size()).substr(0, 16);
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = runtime && *runtime ? Normalise(runtime) + "/chitta"
                                               : "/tmp/chitta-" + std::to_string(::getuid());
  return base + "/" + digest + ".sock";
}

int ConnectTrusted(const std::string& path, uint32_t timeout_ms, SocketError* err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path))
    return SetFd(err, CF_EINVAL,
                 "socket path of " + std::to_string(path.size()) + " bytes exceeds the " +
                     std::to_string(sizeof(addr.sun_path) - 1) + "-byte limit; choose a shorter one");
  if (!CheckSocketFile(path, err)) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const auto deadline = Deadline(timeout_ms);
  for (int attempt = 0;; ++attempt) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return SetFd(err, CF_EIO, "socket: " + Errno(errno));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      ucred cred{};
      socklen_t len = sizeof cred;
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid != ::getuid()) {
        ::close(fd);
        return SetFd(err, CF_EIO, "refused: the peer (pid " + std::to_string(cred.pid) +
                                      ") runs as uid " + std::to_string(cred.uid) + ", not you");
      }
      return fd;
    }
    const int e = errno;
    ::close(fd);
    if ((e == EAGAIN || e == EINTR) && MillisLeft(deadline) > 0) {  // a full listen backlog
      std::this_thread::sleep_for(std::chrono::milliseconds(attempt < 5 ? 2 << attempt : 50));
      continue;
    }
    if (e == ECONNREFUSED || e == ENOENT)
      return SetFd(err, CF_EUNAVAILABLE,
                   "no chitta daemon answers on " + path +
                       " (a stale socket); start one with `chitta --path FIELD serve` or set "
                       "options.start = 1");
    return SetFd(err, CF_EIO, "connect " + path + ": " + Errno(e));
  }
}

int StartAndConnect(const std::string& command, const std::string& field,
                    const std::string& socket, uint32_t timeout_ms, SocketError* err) {
  std::string program;
  if (!FindProgram(command, &program, err)) return -1;
  if (!MakePrivateDir(Parent(socket), err)) return -1;
  const std::string log = socket + ".log";
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return SetFd(err, CF_EIO, "cannot open " + log + ": " + Errno(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<std::string> args = {program, "--path", field, "serve", "--socket", socket};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const long max_fd = std::min<long>(::sysconf(_SC_OPEN_MAX), 65536);
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return SetFd(err, CF_EIO, "fork: " + Errno(e));
  }
  if (child == 0) {  // the first child: a new session, then the daemon in a grandchild
    ::setsid();
    if (::fork() != 0) ::_exit(0);  // the grandchild is re-parented: no zombie for the host
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    for (long fd = 3; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
    ::signal(SIGPIPE, SIG_DFL);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const auto deadline = Deadline(timeout_ms);
  for (;;) {
    SocketError attempt;
    const int fd = ConnectTrusted(socket, 1000, &attempt);
    if (fd >= 0) return fd;
    if (attempt.status != CF_EUNAVAILABLE) {
      *err = attempt;
      return -1;
    }
    if (MillisLeft(deadline) == 0)
      return SetFd(err, CF_EUNAVAILABLE,
                   "started `" + program + " --path " + field + " serve --socket " + socket +
                       "` but it did not answer within " + std::to_string(timeout_ms / 1000) +
                       " s; see " + log);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool SendFrame(int fd, const std::string& body, uint32_t timeout_ms, SocketError* err) {
  std::string frame(4, '\0');
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>(n >> (24 - 8 * i));
  frame += body;
  const auto deadline = Deadline(timeout_ms);
  size_t sent = 0;
  while (sent < frame.size()) {
    if (!WaitFor(fd, POLLOUT, deadline, err, "take the request")) return false;
    const ssize_t w = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Set(err, CF_EUNAVAILABLE, "the daemon went away while sending: " + Errno(errno));
    }
    sent += static_cast<size_t>(w);
  }
  return true;
}

bool RecvFrame(int fd, size_t max_body, uint32_t timeout_ms, std::string* body, SocketError* err) {
  const auto deadline = Deadline(timeout_ms);
  auto read_exact = [&](char* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      if (!WaitFor(fd, POLLIN, deadline, err, "reply")) return false;
      const ssize_t r = ::recv(fd, dst + got, n - got, 0);
      if (r == 0)
        return Set(err, CF_EUNAVAILABLE,
                   "the daemon closed the connection before replying (did it stop? see its log)");
      if (r < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Set(err, CF_EUNAVAILABLE, "reading the reply: " + Errno(errno));
      }
      got += static_cast<size_t>(r);
    }
    return true;
  };
  unsigned char header[4];
  if (!read_exact(reinterpret_cast<char*>(header), 4)) return false;
  const size_t n = (size_t{header[0]} << 24) | (size_t{header[1]} << 16) |
                   (size_t{header[2]} << 8) | size_t{header[3]};
  if (n > max_body)
    return Set(err, CF_EIO, "the daemon's reply declares " + std::to_string(n) +
                                " bytes, over the " + std::to_string(max_body) + "-byte frame limit");
  body->assign(n, '\0');
  return read_exact(body->data(), n);
}

}  // namespace chitta::capi
