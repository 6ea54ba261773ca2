// csrc/capi/chitta_field.cc
// The C API of a field: open/close, append, flush/sync, replay, refresh,
// verify. Each entry point checks its arguments, runs inside Guard() (no
// exception escapes) and maps the core's Status through capi_util's table.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "capi/capi_util.h"
#include "chitta/chitta_field.h"
#include "wal/log.h"
#include "wal/segment_format.h"

struct cf_field {
  std::unique_ptr<chitta::wal::Log> log;
  std::string root;
  bool salvage = false;
  std::mutex refresh_mu;  // one cf_refresh at a time: read, deliver, commit
};

namespace {

using chitta::Status;
using chitta::capi::Fail;
using chitta::capi::Guard;
using chitta::capi::Invalid;
using chitta::wal::Durability;
using chitta::wal::Log;
using chitta::wal::LogOptions;
using chitta::wal::ReadBatch;

// Calls fn for each record of batch in order; true if fn asked to stop.
bool Deliver(const ReadBatch& batch, cf_record_fn fn, void* user) {
  for (const auto& r : batch.records) {
    if (fn(user, r.seqno, r.instance_id, r.op_type, r.payload, r.len) != 0) return true;
  }
  return false;
}

cf_status CheckField(const char* fn, const cf_field_t* f) {
  if (f == nullptr) return Invalid(fn, "field handle is NULL");
  if (!f->log || f->log->closed()) return Fail(CF_ECLOSED, fn, "the field is closed");
  return CF_OK;
}

cf_status OpenField(const char* fn, const char* path, const cf_options* options,
                    cf_field_t** out) {
  if (out == nullptr) return Invalid(fn, "out is NULL");
  if (path == nullptr) return Invalid(fn, "path is NULL");
  if (path[0] == '\0') return Invalid(fn, "path is empty");
  cf_options o;
  cf_options_init(&o);
  if (options != nullptr) o = *options;
  LogOptions lo;
  lo.instance_id = o.instance_id;
  switch (o.durability) {
    case CF_DURABILITY_FLUSH: lo.durability = Durability::kFlush; break;
    case CF_DURABILITY_FSYNC: lo.durability = Durability::kFsync; break;
    case CF_DURABILITY_BUFFERED: lo.durability = Durability::kBuffered; break;
    default:
      return Invalid(fn, "durability " + std::to_string(o.durability) + " is not a cf_durability");
  }
  lo.segment_bytes = o.segment_bytes == 0 ? chitta::wal::kDefaultSegmentBytes : o.segment_bytes;
  lo.create = o.create != 0;
  lo.read_only = o.read_only != 0;
  lo.salvage = o.salvage != 0;
  auto field = std::make_unique<cf_field>();
  field->root = path;
  field->salvage = lo.salvage;
  Status st = Log::Open(field->root, lo, &field->log);
  if (st.code() == chitta::Code::kNotFound && !lo.create) {
    st = Status::NotFound(st.message() +
                          " (nothing was created: to create a field, call cf_open_ex with "
                          "options.create = 1)");
  }
  if (!st.ok()) return Fail(st);
  *out = field.release();
  return CF_OK;
}

void CopyName(const std::string& name, char* dst, size_t cap) {
  const size_t n = name.size() < cap - 1 ? name.size() : cap - 1;
  std::memcpy(dst, name.data(), n);
  dst[n] = '\0';
}

}  // namespace

extern "C" {

CF_API void cf_options_init(cf_options* options) {
  if (options == nullptr) return;
  options->instance_id = 0;
  options->durability = CF_DURABILITY_FLUSH;
  options->segment_bytes = 0;
  options->create = 0;  // a mistyped path must not become a new field: creating is asked for
  options->read_only = 0;
  options->salvage = 0;
}

CF_API cf_status cf_open(const char* path, cf_field_t** out) {
  return Guard("cf_open", [&] { return OpenField("cf_open", path, nullptr, out); });
}

CF_API cf_status cf_open_ex(const char* path, const cf_options* options, cf_field_t** out) {
  return Guard("cf_open_ex", [&] { return OpenField("cf_open_ex", path, options, out); });
}

CF_API cf_status cf_close_checked(cf_field_t* f) {
  return Guard("cf_close_checked", [&]() -> cf_status {
    if (f == nullptr) return Invalid("cf_close_checked", "field handle is NULL");
    std::unique_ptr<cf_field> owned(f);  // freed whatever happens below
    if (!owned->log || owned->log->closed()) return CF_OK;
    return Fail(owned->log->Close());
  });
}

CF_API void cf_close(cf_field_t* f) {
  if (f == nullptr) return;
  (void)cf_close_checked(f);
}

CF_API cf_status cf_instance_id(const cf_field_t* f, uint32_t* out) {
  return Guard("cf_instance_id", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_instance_id", f)) return s;
    if (out == nullptr) return Invalid("cf_instance_id", "out is NULL");
    *out = f->log->instance_id();
    return CF_OK;
  });
}

CF_API cf_status cf_clock(const cf_field_t* f, uint64_t* out) {
  return Guard("cf_clock", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_clock", f)) return s;
    if (out == nullptr) return Invalid("cf_clock", "out is NULL");
    *out = f->log->clock();
    return CF_OK;
  });
}

CF_API cf_status cf_append(cf_field_t* f, uint8_t op_type, const uint8_t* payload, size_t len,
                           uint64_t* seqno) {
  return Guard("cf_append", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_append", f)) return s;
    if (payload == nullptr && len != 0) return Invalid("cf_append", "payload is NULL with len > 0");
    if (f->log->read_only()) return Invalid("cf_append", "the field was opened read-only");
    static const uint8_t kEmpty = 0;
    uint64_t seq = 0;
    Status st = f->log->Append(op_type, payload ? payload : &kEmpty, len, &seq);
    if (!st.ok()) return Fail(st);
    if (seqno != nullptr) *seqno = seq;
    return CF_OK;
  });
}

CF_API cf_status cf_flush(cf_field_t* f) {
  return Guard("cf_flush", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_flush", f)) return s;
    return Fail(f->log->Flush());
  });
}

CF_API cf_status cf_sync(cf_field_t* f) {
  return Guard("cf_sync", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_sync", f)) return s;
    return Fail(f->log->Sync());
  });
}

CF_API cf_status cf_replay(cf_field_t* f, cf_record_fn fn, void* user) {
  return Guard("cf_replay", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_replay", f)) return s;
    if (fn == nullptr) return Invalid("cf_replay", "callback is NULL");
    Status st = f->log->Flush();
    if (!st.ok()) return Fail(st);
    // A private read-only view sees every instance's complete records, this
    // handle's own included, without moving this handle's refresh position.
    LogOptions ro;
    ro.read_only = true;
    ro.create = false;
    ro.salvage = f->salvage;
    std::unique_ptr<Log> view;
    st = Log::Open(f->root, ro, &view);
    if (!st.ok()) return Fail(st);
    ReadBatch batch;
    st = view->ReadNew(&batch, true);
    if (!st.ok()) return Fail(st);
    Deliver(batch, fn, user);
    return Fail(view->Close());
  });
}

CF_API cf_status cf_refresh(cf_field_t* f, cf_record_fn fn, void* user) {
  return Guard("cf_refresh", [&]() -> cf_status {
    if (cf_status s = CheckField("cf_refresh", f)) return s;
    if (fn == nullptr) return Invalid("cf_refresh", "callback is NULL");
    std::lock_guard<std::mutex> lock(f->refresh_mu);
    ReadBatch batch;
    Status st = f->log->ReadNew(&batch, /*commit=*/false);
    if (!st.ok()) return Fail(st);
    if (!Deliver(batch, fn, user)) f->log->CommitRead();
    return CF_OK;
  });
}

CF_API cf_status cf_verify(const char* path, cf_verify_report* report) {
  return Guard("cf_verify", [&]() -> cf_status {
    if (path == nullptr) return Invalid("cf_verify", "path is NULL");
    if (path[0] == '\0') return Invalid("cf_verify", "path is empty");
    if (report == nullptr) return Invalid("cf_verify", "report is NULL");
    chitta::wal::VerifyReport vr;
    Status st = chitta::wal::Verify(path, &vr);
    if (!st.ok()) return Fail(st);
    cf_verify_report r;
    std::memset(&r, 0, sizeof r);
    r.segments = vr.segments;
    r.records = vr.records;
    r.bytes = vr.bytes;
    const chitta::wal::Damage* first = nullptr;
    const chitta::wal::Damage* first_torn = nullptr;
    for (const auto& d : vr.damages) {
      if (d.kind == chitta::wal::DamageKind::kTornTail) {
        r.torn_tails++;
        if (first_torn == nullptr) first_torn = &d;
      } else {
        r.damages++;
        if (first == nullptr) first = &d;
      }
    }
    cf_status result = CF_OK;
    if (first != nullptr) {
      result = first->kind == chitta::wal::DamageKind::kCrcMismatch ? CF_ECRC : CF_ECORRUPT;
      CopyName(first->segment, r.first_segment, sizeof r.first_segment);
      r.first_offset = first->offset;
      r.first_status = result;
    } else if (first_torn != nullptr) {
      CopyName(first_torn->segment, r.first_segment, sizeof r.first_segment);
      r.first_offset = first_torn->offset;
      r.first_status = CF_OK;
    }
    *report = r;
    if (first != nullptr) {
      Fail(result, "cf_verify",
           std::to_string(r.damages) + " damaged span(s); first: " +
               chitta::wal::DamageKindName(first->kind) + " in segment " + first->segment +
               " at offset " + std::to_string(first->offset) + ": " + first->detail);
    }
    return result;
  });
}

}  // extern "C"
