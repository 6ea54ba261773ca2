// csrc/capi/client_socket.h
// The transport under cf_client_t (csrc/capi/chitta_client.cc): where a
// field's daemon listens, the trust checks chitta.connect() makes
// (chitta/server/sockets.py), starting `chitta serve` on demand, and
// length-prefixed frames with deadlines. Errors are a cf_status plus a text.
#pragma once

#include <cstdint>
#include <string>

#include "chitta/chitta_field.h"

namespace chitta::capi {

struct SocketError {
  cf_status status = CF_OK;
  std::string text;
};

// Python's Path(p).expanduser().absolute(): "~" expanded from $HOME, relative
// paths joined to the working directory, "." parts and repeated or trailing
// slashes dropped ("..": kept, as Python keeps it).
bool AbsolutePath(const std::string& path, std::string* out, SocketError* err);

// The default socket of the field at absolute path abs (docs/DAEMON.md, "Socket").
std::string DefaultSocket(const std::string& abs);

// A connected, trusted socket to path (fd >= 0), or -1 with err set:
// CF_EUNAVAILABLE when nothing listens there, CF_EIO when it is not to be trusted.
int ConnectTrusted(const std::string& path, uint32_t timeout_ms, SocketError* err);

// Starts `<command> --path <field> serve --socket <socket>` detached (its own
// session, output appended to <socket>.log) and waits up to timeout_ms for it to answer.
int StartAndConnect(const std::string& command, const std::string& field,
                    const std::string& socket, uint32_t timeout_ms, SocketError* err);

// One frame out, one frame in (body at most max_body bytes), each within timeout_ms.
bool SendFrame(int fd, const std::string& body, uint32_t timeout_ms, SocketError* err);
bool RecvFrame(int fd, size_t max_body, uint32_t timeout_ms, std::string* body, SocketError* err);

}  // namespace chitta::capi
