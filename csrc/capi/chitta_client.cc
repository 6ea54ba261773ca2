// csrc/capi/chitta_client.cc
// The memory-level C API: cf_connect / cf_call and the typed shortcuts
// (cf_remember, cf_recall, cf_get, cf_forget, cf_link). Each call is one
// request of the daemon's JSON dialect (docs/DAEMON.md) on the client's
// connection; a broken connection is dropped and made again by the next call.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi_util.h"
#include "capi/client_socket.h"
#include "chitta/chitta_field.h"
#include "util/json.h"

namespace {

using chitta::capi::Fail;
using chitta::capi::Guard;
using chitta::capi::Invalid;
using chitta::capi::SocketError;
namespace json = chitta::json;

constexpr size_t kMaxFrame = size_t{16} << 20;  // chitta.server.protocol.MAX_FRAME
constexpr uint32_t kStartTimeoutMs = 60000;
constexpr uint32_t kCallTimeoutMs = 120000;

// The daemon's error classes (chitta/errors.py, by name) -> status.
struct ErrorRow {
  const char* type;
  cf_status status;
};
constexpr ErrorRow kErrorTable[] = {
    {"NotFound", CF_ENOTFOUND},          {"NotAFieldError", CF_ENOTFOUND},
    {"InvalidArgument", CF_EINVAL},      {"DuplicateFact", CF_EINVAL},
    {"EmbedderMismatch", CF_EINVAL},     {"RoleRefused", CF_EINVAL},
    {"ProtocolError", CF_EINVAL},        {"CrcMismatch", CF_ECRC},
    {"CorruptionError", CF_ECORRUPT},    {"UnknownOpType", CF_ECORRUPT},
    {"ModelChecksumError", CF_ECORRUPT}, {"UnsupportedFormat", CF_EUNSUPPORTED},
    {"EmbedderUnavailable", CF_EUNSUPPORTED}, {"ChittaIOError", CF_EIO},
    {"LostWritesError", CF_EIO},         {"RemoteError", CF_EIO},
    {"RemoteUnavailable", CF_EIO},       {"LockedError", CF_ELOCKED},
    {"ClosedError", CF_ECLOSED},
};

cf_status StatusOfError(const std::string& type) {
  for (const ErrorRow& row : kErrorTable) {
    if (type == row.type) return row.status;
  }
  return CF_EINTERNAL;  // ChittaError: an internal error the daemon reported
}

}  // namespace

struct cf_client {
  std::mutex mu;  // one call at a time on the connection
  std::string field;
  std::string socket;
  std::string command;
  bool start = false;
  uint32_t start_timeout_ms = kStartTimeoutMs;
  uint32_t call_timeout_ms = kCallTimeoutMs;
  int fd = -1;
  int64_t next_id = 1;

  ~cf_client() { Drop(); }

  void Drop() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // A connection, made (or the daemon started) if there is none.
  cf_status Ensure(const char* fn) {
    if (fd >= 0) return CF_OK;
    SocketError err;
    fd = chitta::capi::ConnectTrusted(socket, 10000, &err);
    if (fd < 0 && err.status == CF_EUNAVAILABLE && start) {
      err = {};
      fd = chitta::capi::StartAndConnect(command, field, socket, start_timeout_ms, &err);
    }
    return fd >= 0 ? CF_OK : Fail(err.status, fn, err.text);
  }

  // Sends {"id", "method", "params": params_json} and parses the reply's result.
  cf_status Call(const char* fn, const std::string& method, const std::string& params_json,
                 json::Value* result) {
    std::lock_guard<std::mutex> lock(mu);
    std::string request = "{\"id\":" + std::to_string(next_id) + ",\"method\":";
    json::AppendQuoted(request, method);
    request += ",\"params\":" + params_json + "}";
    if (request.size() > kMaxFrame)
      return Invalid(fn, "the request is " + std::to_string(request.size()) +
                             " bytes, over the 16 MiB frame limit; send less");
    if (cf_status st = Ensure(fn); st != CF_OK) return st;
    SocketError err;
    std::string body;
    const int64_t id = next_id++;
    if (!chitta::capi::SendFrame(fd, request, call_timeout_ms, &err) ||
        !chitta::capi::RecvFrame(fd, kMaxFrame, call_timeout_ms, &body, &err)) {
      Drop();  // the stream cannot be trusted to be in step any more
      return Fail(err.status, fn, err.text);
    }
    std::string parse_error;
    auto reply = json::Parse(body, &parse_error);
    const json::Value* rid = reply && reply->is_object() ? reply->Find("id") : nullptr;
    if (!reply || !reply->is_object()) {
      Drop();
      return Fail(CF_EUNSUPPORTED, fn,
                  "the daemon's reply is not a JSON object (" + parse_error +
                      "); is it a chitta serve of another version?");
    }
    if (const json::Value* e = reply->Find("error"); e != nullptr) {
      const json::Value* type = e->Find("type");
      const json::Value* message = e->Find("message");
      const std::string t = type && type->is_string() ? type->text : "ChittaError";
      const std::string m = message && message->is_string() ? message->text : "(no message)";
      return Fail(StatusOfError(t), fn, t + ": " + m);
    }
    if (rid == nullptr || !rid->is_number() || rid->text != std::to_string(id)) {
      Drop();
      return Fail(CF_EUNSUPPORTED, fn, "the daemon's reply answers another request; reconnect");
    }
    const json::Value* r = reply->Find("result");
    if (r == nullptr) return Fail(CF_EUNSUPPORTED, fn, "the daemon's reply has no result");
    *result = *r;
    return CF_OK;
  }
};

struct cf_hits {
  struct Data {
    std::string text, kind;
    std::vector<std::string> lane_names;
    std::vector<cf_lane> lanes;
  };
  std::vector<Data> data;
  std::vector<cf_hit> hits;
};

namespace {

// options_json as the members of a JSON object ("" for none), or CF_EINVAL.
cf_status ObjectMembers(const char* fn, const char* what, const char* text, json::Value* out) {
  out->type = json::Value::Type::kObject;
  if (text == nullptr || text[0] == '\0') return CF_OK;
  std::string error;
  auto v = json::Parse(text, &error);
  if (!v) return Invalid(fn, std::string(what) + " is not valid JSON: " + error);
  if (!v->is_object())
    return Invalid(fn, std::string(what) + " must be a JSON object of argument names to values");
  *out = std::move(*v);
  return CF_OK;
}

// Adds name: value (JSON text already made) to the front of args; CF_EINVAL if args has name.
cf_status Prepend(const char* fn, const char* what, json::Value& args, const char* name,
                  json::Value value) {
  if (args.Find(name) != nullptr)
    return Invalid(fn, std::string(what) + " must not hold \"" + name +
                           "\": it is the call's own argument");
  args.members.insert(args.members.begin(), {name, std::move(value)});
  return CF_OK;
}

json::Value String(std::string s) {
  json::Value v;
  v.type = json::Value::Type::kString;
  v.text = std::move(s);
  return v;
}

json::Value Number(std::string literal, double value) {
  json::Value v;
  v.type = json::Value::Type::kNumber;
  v.text = std::move(literal);
  v.number = value;
  return v;
}

cf_status CheckText(const char* fn, const char* name, const char* text) {
  if (text == nullptr) return Invalid(fn, std::string(name) + " is NULL");
  if (!json::ValidUtf8(text)) return Invalid(fn, std::string(name) + " is not valid UTF-8");
  return CF_OK;
}

char* CopyOut(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

cf_status Unexpected(const char* fn, const std::string& what) {
  return Fail(CF_EUNSUPPORTED, fn,
              "the daemon's reply " + what + "; is it a chitta serve of another version?");
}

}  // namespace

extern "C" {

CF_API void cf_connect_options_init(cf_connect_options* options) {
  if (options == nullptr) return;
  *options = cf_connect_options{};
  options->start_timeout_ms = kStartTimeoutMs;
  options->call_timeout_ms = kCallTimeoutMs;
}

CF_API cf_status cf_connect(const char* field_path, const cf_connect_options* options,
                            cf_client_t** out) {
  return Guard("cf_connect", [&]() -> cf_status {
    const char* fn = "cf_connect";
    if (out == nullptr) return Invalid(fn, "out is NULL");
    if (field_path == nullptr) return Invalid(fn, "field_path is NULL");
    cf_connect_options o;
    cf_connect_options_init(&o);
    if (options != nullptr) o = *options;
    auto c = std::make_unique<cf_client>();
    SocketError err;
    if (!chitta::capi::AbsolutePath(field_path, &c->field, &err)) return Fail(err.status, fn, err.text);
    if (o.socket_path != nullptr && o.socket_path[0] != '\0') {
      if (!chitta::capi::AbsolutePath(o.socket_path, &c->socket, &err))
        return Fail(err.status, fn, err.text);
    } else {
      c->socket = chitta::capi::DefaultSocket(c->field);
    }
    c->start = o.start != 0;
    c->command = o.serve_command != nullptr && o.serve_command[0] ? o.serve_command : "chitta";
    c->start_timeout_ms = o.start_timeout_ms ? o.start_timeout_ms : kStartTimeoutMs;
    c->call_timeout_ms = o.call_timeout_ms ? o.call_timeout_ms : kCallTimeoutMs;
    if (cf_status st = c->Ensure(fn); st != CF_OK) return st;
    *out = c.release();
    return CF_OK;
  });
}

CF_API void cf_disconnect(cf_client_t* c) { delete c; }

CF_API void cf_string_free(char* s) { std::free(s); }

CF_API cf_status cf_call(cf_client_t* c, const char* op_name, const char* json_args,
                         char** json_result) {
  return Guard("cf_call", [&]() -> cf_status {
    const char* fn = "cf_call";
    if (c == nullptr) return Invalid(fn, "client is NULL");
    if (json_result == nullptr) return Invalid(fn, "json_result is NULL");
    if (cf_status st = CheckText(fn, "op_name", op_name); st != CF_OK) return st;
    if (op_name[0] == '\0') return Invalid(fn, "op_name is empty; `chitta operations` lists them");
    json::Value args;
    if (cf_status st = ObjectMembers(fn, "json_args", json_args, &args); st != CF_OK) return st;
    json::Value result;
    if (cf_status st = c->Call(fn, op_name, json::Dump(args), &result); st != CF_OK) return st;
    *json_result = CopyOut(json::Dump(result));
    return CF_OK;
  });
}

CF_API cf_status cf_remember(cf_client_t* c, const char* text, const char* options_json,
                             uint64_t* id) {
  return Guard("cf_remember", [&]() -> cf_status {
    const char* fn = "cf_remember";
    if (c == nullptr) return Invalid(fn, "client is NULL");
    if (cf_status st = CheckText(fn, "text", text); st != CF_OK) return st;
    json::Value args;
    if (cf_status st = ObjectMembers(fn, "options_json", options_json, &args); st != CF_OK) return st;
    if (cf_status st = Prepend(fn, "options_json", args, "text", String(text)); st != CF_OK) return st;
    json::Value result;
    if (cf_status st = c->Call(fn, "remember", json::Dump(args), &result); st != CF_OK) return st;
    const auto mid = json::AsU64(result);
    if (!mid) return Unexpected(fn, "to remember is not an id");
    if (id != nullptr) *id = *mid;
    return CF_OK;
  });
}

CF_API cf_status cf_recall(cf_client_t* c, const char* query, uint32_t k,
                           const char* options_json, cf_hits_t** out) {
  return Guard("cf_recall", [&]() -> cf_status {
    const char* fn = "cf_recall";
    if (c == nullptr) return Invalid(fn, "client is NULL");
    if (out == nullptr) return Invalid(fn, "out is NULL");
    if (cf_status st = CheckText(fn, "query", query); st != CF_OK) return st;
    json::Value args;
    if (cf_status st = ObjectMembers(fn, "options_json", options_json, &args); st != CF_OK) return st;
    if (k > 0) {
      if (cf_status st = Prepend(fn, "options_json", args, "k", Number(std::to_string(k), k));
          st != CF_OK)
        return st;
    }
    if (cf_status st = Prepend(fn, "options_json", args, "query", String(query)); st != CF_OK)
      return st;
    json::Value result;
    if (cf_status st = c->Call(fn, "recall", json::Dump(args), &result); st != CF_OK) return st;
    if (!result.is_array()) return Unexpected(fn, "to recall is not a list of hits");
    auto hits = std::make_unique<cf_hits>();
    hits->data.resize(result.items.size());
    hits->hits.resize(result.items.size());
    for (size_t i = 0; i < result.items.size(); ++i) {
      const json::Value& h = result.items[i];
      const json::Value* hid = h.is_object() ? h.Find("id") : nullptr;
      const json::Value* score = h.is_object() ? h.Find("score") : nullptr;
      const json::Value* rel = h.is_object() ? h.Find("relevance") : nullptr;
      const json::Value* text = h.is_object() ? h.Find("text") : nullptr;
      const json::Value* kind = h.is_object() ? h.Find("kind") : nullptr;
      const json::Value* lanes = h.is_object() ? h.Find("lanes") : nullptr;
      const auto mid = hid ? json::AsU64(*hid) : std::nullopt;
      if (!mid || !score || !score->is_number() || !text || !text->is_string() || !kind ||
          !kind->is_string() || !lanes || !lanes->is_object() ||
          (rel && !rel->is_null() && !rel->is_number()))
        return Unexpected(fn, "holds a hit without id, score, text, kind or lanes");
      cf_hits::Data& d = hits->data[i];
      d.text = text->text;
      d.kind = kind->text;
      for (const auto& [name, rank] : lanes->members) {
        const auto r = json::AsU64(rank);
        if (!r || *r == 0 || *r > UINT32_MAX) return Unexpected(fn, "holds a lane rank that is not 1, 2, ...");
        d.lane_names.push_back(name);
        d.lanes.push_back({nullptr, static_cast<uint32_t>(*r)});
      }
      for (size_t j = 0; j < d.lanes.size(); ++j) d.lanes[j].name = d.lane_names[j].c_str();
      cf_hit& out_hit = hits->hits[i];
      out_hit.id = *mid;
      out_hit.score = score->number;
      out_hit.relevance =
          rel && rel->is_number() ? rel->number : std::numeric_limits<double>::quiet_NaN();
      out_hit.text = d.text.c_str();
      out_hit.kind = d.kind.c_str();
      out_hit.lanes = d.lanes.empty() ? nullptr : d.lanes.data();
      out_hit.n_lanes = d.lanes.size();
    }
    *out = hits.release();
    return CF_OK;
  });
}

CF_API size_t cf_hits_count(const cf_hits_t* hits) { return hits ? hits->hits.size() : 0; }

CF_API const cf_hit* cf_hits_at(const cf_hits_t* hits, size_t i) {
  return hits && i < hits->hits.size() ? &hits->hits[i] : nullptr;
}

CF_API void cf_hits_free(cf_hits_t* hits) { delete hits; }

CF_API cf_status cf_get(cf_client_t* c, uint64_t id, char** text_out, char** json_out) {
  return Guard("cf_get", [&]() -> cf_status {
    const char* fn = "cf_get";
    if (c == nullptr) return Invalid(fn, "client is NULL");
    std::string args = "{\"id\":\"" + std::to_string(id) + "\"}";
    json::Value result;
    if (cf_status st = c->Call(fn, "get", args, &result); st != CF_OK) return st;
    const json::Value* text = result.is_object() ? result.Find("text") : nullptr;
    if (text == nullptr || !text->is_string()) return Unexpected(fn, "to get has no text");
    char* t = text_out ? CopyOut(text->text) : nullptr;
    char* j = nullptr;
    if (json_out) {
      try {
        j = CopyOut(json::Dump(result));
      } catch (...) {
        std::free(t);
        throw;
      }
    }
    if (text_out) *text_out = t;
    if (json_out) *json_out = j;
    return CF_OK;
  });
}

CF_API cf_status cf_forget(cf_client_t* c, uint64_t id) {
  return Guard("cf_forget", [&]() -> cf_status {
    if (c == nullptr) return Invalid("cf_forget", "client is NULL");
    json::Value result;
    return c->Call("cf_forget", "forget", "{\"id\":\"" + std::to_string(id) + "\"}", &result);
  });
}

CF_API cf_status cf_link(cf_client_t* c, uint64_t src, uint64_t dst, const char* edge,
                         double weight) {
  return Guard("cf_link", [&]() -> cf_status {
    const char* fn = "cf_link";
    if (c == nullptr) return Invalid(fn, "client is NULL");
    if (edge != nullptr) {
      if (cf_status st = CheckText(fn, "edge", edge); st != CF_OK) return st;
    }
    if (!std::isfinite(weight)) return Invalid(fn, "weight must be a finite number");
    char w[32];
    std::snprintf(w, sizeof w, "%.17g", weight);
    std::string args = "{\"src\":\"" + std::to_string(src) + "\",\"dst\":\"" +
                       std::to_string(dst) + "\",\"edge\":";
    json::AppendQuoted(args, edge ? edge : "RelatedTo");
    args += std::string(",\"weight\":") + w + "}";
    json::Value result;
    return c->Call(fn, "link", args, &result);
  });
}

}  // extern "C"
