// _ext/bind_wal.cc
// chitta._core.SegmentLog / ReadResult / verify: the segment log for Python.
// Conversion and GIL handling only; the log lives in csrc/wal.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>

#include "registry.h"
#include "util/crc32c.h"
#include "wal/log.h"
#include "wal/segment_format.h"
#include "wal_py.h"

namespace chitta_ext {
namespace {

using chitta::wal::Durability;
using chitta::wal::Log;
using chitta::wal::LogOptions;
using chitta::wal::ReadBatch;

py::dict DamageDict(const chitta::wal::Damage& d) {
  py::dict out;
  out["segment"] = d.segment;
  out["offset"] = d.offset;
  out["bytes"] = d.bytes;
  out["kind"] = chitta::wal::DamageKindName(d.kind);
  out["detail"] = d.detail;
  return out;
}

// msgpack array header for n elements.
void AppendArrayHeader(std::string* out, size_t n) {
  if (n < 16) {
    out->push_back(static_cast<char>(0x90 | n));
  } else if (n < 65536) {
    out->push_back(static_cast<char>(0xdc));
    out->push_back(static_cast<char>(n >> 8));
    out->push_back(static_cast<char>(n & 0xff));
  } else {
    out->push_back(static_cast<char>(0xdd));
    for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((n >> s) & 0xff));
  }
}

class PyLog {
 public:
  PyLog(const std::string& root, uint32_t instance_id, const std::string& durability,
        uint64_t segment_bytes, bool create, bool read_only, bool salvage) {
    LogOptions o;
    o.instance_id = instance_id;
    ThrowIfError(chitta::wal::ParseDurability(durability, &o.durability));
    durability_ = o.durability;
    o.segment_bytes = segment_bytes;
    o.create = create;
    o.read_only = read_only;
    o.salvage = salvage;
    chitta::Status st;
    std::unique_ptr<Log> log;
    {
      py::gil_scoped_release release;
      st = Log::Open(root, o, &log);
    }
    ThrowIfError(std::move(st));
    log_ = std::move(log);
  }

  uint64_t Append(uint8_t op_type, py::buffer payload) {
    py::buffer_info info = payload.request();
    if (info.ndim != 1 || info.itemsize != 1) ThrowInvalid("payload must be a bytes-like object");
    uint64_t seq = 0;
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->Append(op_type, static_cast<const uint8_t*>(info.ptr),
                        static_cast<size_t>(info.size), &seq);
    }
    ThrowIfError(std::move(st));
    return seq;
  }

  // Append, and say where the payload went: (seqno, segment file name, byte
  // offset of the payload in it).
  py::tuple AppendPlaced(uint8_t op_type, py::buffer payload) {
    py::buffer_info info = payload.request();
    if (info.ndim != 1 || info.itemsize != 1) ThrowInvalid("payload must be a bytes-like object");
    uint64_t seq = 0;
    chitta::wal::RecordPlace where;
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->Append(op_type, static_cast<const uint8_t*>(info.ptr),
                        static_cast<size_t>(info.size), &seq, &where);
    }
    ThrowIfError(std::move(st));
    return py::make_tuple(seq, where.segment, where.payload_at);
  }

  std::shared_ptr<ReadBatch> ReadNew(bool commit) {
    auto batch = std::make_shared<ReadBatch>();
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->ReadNew(batch.get(), commit);
    }
    ThrowIfError(std::move(st));
    return batch;
  }

  void CommitRead() { log_->CommitRead(); }

  // Kept under the GIL: a directory listing and a stat or two, shorter than the
  // wait to take the GIL back on a busy daemon.
  bool MayHaveNew() const {
    bool out = true;
    ThrowIfError(log_->MayHaveNew(&out));
    return out;
  }

  void Flush() {
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->Flush();
    }
    ThrowIfError(std::move(st));
  }

  void Sync() {
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->Sync();
    }
    ThrowIfError(std::move(st));
  }

  void Close() {
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = log_->Close();
    }
    ThrowIfError(std::move(st));
  }

  py::dict Stats() const {
    chitta::wal::LogStats s;
    ThrowIfError(log_->Stats(&s));
    py::dict out;
    out["segments"] = s.segments;
    out["bytes"] = s.bytes;
    out["instances"] = s.instances;
    return out;
  }

  py::dict SyncStats() const {
    const chitta::wal::SyncStats s = log_->sync_stats();
    py::dict out;
    out["syncs"] = s.syncs;
    out["records"] = s.records;
    out["sync_ns"] = s.sync_ns;
    out["max_sync_ns"] = s.max_sync_ns;
    out["delay_ns"] = s.delay_ns;
    py::list per_sync;
    for (uint64_t c : s.per_sync) per_sync.append(c);
    out["per_sync"] = per_sync;
    return out;
  }

  const Log& log() const { return *log_; }
  Log& mutable_log() { return *log_; }
  const std::shared_ptr<Log>& shared() const { return log_; }
  chitta::wal::Durability durability() const { return durability_; }

 private:
  std::shared_ptr<Log> log_;
  chitta::wal::Durability durability_ = chitta::wal::Durability::kFlush;
};

template <typename T, typename F>
py::array_t<T> Column(const ReadBatch& b, F get) {
  py::array_t<T> out(static_cast<py::ssize_t>(b.records.size()));
  auto* p = out.mutable_data();
  for (size_t i = 0; i < b.records.size(); ++i) p[i] = get(b.records[i]);
  return out;
}

// Runs of consecutive records with one op type, each framed as one msgpack
// array of their payloads so Python decodes a run in a single call.
py::list Runs(const ReadBatch& b) {
  py::list out;
  size_t i = 0;
  const size_t n = b.records.size();
  while (i < n) {
    size_t j = i;
    size_t bytes = 0;
    while (j < n && b.records[j].op_type == b.records[i].op_type) bytes += b.records[j++].len;
    std::string framed;
    framed.reserve(bytes + 5);
    AppendArrayHeader(&framed, j - i);
    for (size_t k = i; k < j; ++k) {
      framed.append(reinterpret_cast<const char*>(b.records[k].payload),
                    b.records[k].len);
    }
    out.append(py::make_tuple(b.records[i].op_type, i, j, py::bytes(framed)));
    i = j;
  }
  return out;
}

// (op_type, start, end) of each run of one op type, without copying payloads.
py::list OpRuns(const ReadBatch& b) {
  py::list out;
  size_t i = 0;
  const size_t n = b.records.size();
  while (i < n) {
    size_t j = i;
    while (j < n && b.records[j].op_type == b.records[i].op_type) ++j;
    out.append(py::make_tuple(b.records[i].op_type, i, j));
    i = j;
  }
  return out;
}

// Records [start, end) framed as one msgpack array of their payloads.
py::bytes Framed(const ReadBatch& b, size_t start, size_t end) {
  if (start > end || end > b.records.size()) throw py::index_error("record range out of bounds");
  size_t bytes = 0;
  for (size_t k = start; k < end; ++k) bytes += b.records[k].len;
  std::string framed;
  framed.reserve(bytes + 5);
  AppendArrayHeader(&framed, end - start);
  for (size_t k = start; k < end; ++k) {
    framed.append(reinterpret_cast<const char*>(b.records[k].payload),
                  b.records[k].len);
  }
  return py::bytes(framed);
}

}  // namespace

CHITTA_BIND(wal) {
  py::class_<ReadBatch, std::shared_ptr<ReadBatch>>(m, "ReadResult",
      "Records read by SegmentLog.read_new(), merged by (seqno, instance_id).")
      .def("__len__", [](const ReadBatch& b) { return b.records.size(); })
      .def_property_readonly("seqnos", [](const ReadBatch& b) {
        return Column<uint64_t>(b, [](const auto& r) { return r.seqno; });
      })
      .def_property_readonly("instances", [](const ReadBatch& b) {
        return Column<uint32_t>(b, [](const auto& r) { return r.instance_id; });
      })
      .def_property_readonly("op_types", [](const ReadBatch& b) {
        return Column<uint8_t>(b, [](const auto& r) { return r.op_type; });
      })
      .def_property_readonly("offsets", [](const ReadBatch& b) {
        return Column<uint64_t>(b, [](const auto& r) { return r.offset; });
      })
      .def_property_readonly("payload_offsets", [](const ReadBatch& b) {
        return Column<uint64_t>(b, [](const auto& r) { return r.payload_at; });
      }, "byte offset of each record's payload in its segment file (of an op inside a Batch too)")
      .def_property_readonly("segment_index", [](const ReadBatch& b) {
        return Column<uint32_t>(b, [](const auto& r) { return r.segment; });
      })
      .def_property_readonly("segments", [](const ReadBatch& b) { return b.segments; })
      .def_property_readonly("damages", [](const ReadBatch& b) {
        py::list out;
        for (const auto& d : b.damages) out.append(DamageDict(d));
        return out;
      })
      .def("payload", [](const ReadBatch& b, size_t i) {
        if (i >= b.records.size()) throw py::index_error("record index out of range");
        const auto& r = b.records[i];
        return py::bytes(reinterpret_cast<const char*>(r.payload), r.len);
      })
      .def("runs", &Runs,
           "List of (op_type, start, end, framed): records [start, end) share op_type; framed is a "
           "msgpack array of their payloads.")
      .def("op_runs", &OpRuns,
           "List of (op_type, start, end): records [start, end) share op_type (no payload copies).")
      .def("framed", &Framed, py::arg("start"), py::arg("end"),
           "Records [start, end) as one msgpack array of their payloads.")
      .def("decode_puts", [](const ReadBatch& b, size_t start, size_t end, py::handle cls) {
        if (start > end || end > b.records.size()) throw py::index_error("record range out of bounds");
        return DecodePutRun(b, start, end, cls);
      }, py::arg("start"), py::arg("end"), py::arg("cls"),
           "(structs, fallback): PutPayload records [start, end) built natively as `cls` "
           "instances; those it does not take are None and listed in fallback.");

  py::class_<PyLog>(m, "SegmentLog", "A field's multi-instance segment log (csrc/wal).")
      .def(py::init<const std::string&, uint32_t, const std::string&, uint64_t, bool, bool, bool>(),
           py::arg("root"), py::kw_only(), py::arg("instance_id") = 0,
           py::arg("durability") = "flush",
           py::arg("segment_bytes") = chitta::wal::kDefaultSegmentBytes, py::arg("create") = true,
           py::arg("read_only") = false, py::arg("salvage") = false)
      .def("append", &PyLog::Append, py::arg("op_type"), py::arg("payload"),
           "Append one record; returns its seqno once it is as durable as the mode promises.")
      .def("append_placed", &PyLog::AppendPlaced, py::arg("op_type"), py::arg("payload"),
           "append(), also saying where the payload lies: (seqno, segment, payload offset).")
      .def("read_new", &PyLog::ReadNew, py::arg("commit") = true,
           "Records not read before. commit=False: positions advance only on commit_read().")
      .def("commit_read", &PyLog::CommitRead)
      .def("may_have_new", &PyLog::MayHaveNew,
           "False only when read_new() would find nothing now (no new segment, none grown).")
      .def("positions", [](const PyLog& l) {
        py::list out;
        for (const auto& p : l.log().Positions()) {
          out.append(py::make_tuple(p.name, p.offset, p.last_seqno, p.header_ok, p.dead));
        }
        return out;
      }, "Committed read positions: list of (segment, offset, last_seqno, header_ok, dead).")
      .def("seed_positions", [](PyLog& l, const std::vector<std::tuple<std::string, uint64_t, uint64_t, bool, bool>>& pos,
                                uint64_t clock) {
        std::vector<chitta::wal::SegmentPosition> v;
        v.reserve(pos.size());
        for (const auto& [name, off, last, ok, dead] : pos) v.push_back({name, off, last, ok, dead});
        ThrowIfError(l.mutable_log().SeedPositions(v, clock));
      }, py::arg("positions"), py::arg("clock"),
         "Resume reading from a checkpoint's positions (before the first read_new).")
      .def_property_readonly("writer_failed", [](const PyLog& l) { return l.log().writer_failed(); },
                             "The writer failed for good (a failed fsync or buffered flush): "
                             "every later append fails until the field is reopened.")
      .def("lost_records", [](const PyLog& l) {
        py::list out;
        for (const auto& r : l.log().lost_records()) {
          out.append(py::make_tuple(r.seqno, r.op_type,
                                    py::bytes(reinterpret_cast<const char*>(r.payload.data()),
                                              r.payload.size())));
        }
        return out;
      }, "Durability 'buffered': (seqno, op_type, payload) of each acknowledged record a "
         "failed flush lost, in seqno order; empty otherwise.")
      .def("flush", &PyLog::Flush)
      .def("sync", &PyLog::Sync)
      .def("close", &PyLog::Close)
      .def("stats", &PyLog::Stats)
      .def("sync_stats", &PyLog::SyncStats,
           "Group commit counters: syncs, records, sync_ns, max_sync_ns, delay_ns, per_sync "
           "(bucket b: syncs of [2**b, 2**(b+1)) records; the last bucket is open-ended).")
      .def("put_appender", [](const PyLog& l) { return MakePutAppender(l.shared()); },
           "A fast callable append_put(id, text, created_ms, written_ms) - or all 15 PutPayload "
           "fields, meta as encoded msgpack - that encodes and appends one PutPayload; "
           "returns the seqno.")
      .def("put_queue", [](const PyLog& l, py::object clock, Py_ssize_t max_text_bytes) {
        return MakePutQueue(l.shared(), std::move(clock), max_text_bytes,
                            l.durability() == chitta::wal::Durability::kFsync);
      }, py::arg("clock") = py::none(), py::arg("max_text_bytes") = 1 << 20,
         "A PutQueue: remember's plain path (validate, id, clock, encode, append, queue) in one "
         "call. clock: None for the system clock, or a callable giving epoch seconds.")
      .def_property_readonly("instance_id", [](const PyLog& l) { return l.log().instance_id(); })
      .def_property_readonly("clock", [](const PyLog& l) { return l.log().clock(); })
      .def_property_readonly("read_only", [](const PyLog& l) { return l.log().read_only(); })
      .def_property_readonly("closed", [](const PyLog& l) { return l.log().closed(); });

  m.def("verify_segments", [](const std::string& root) {
    chitta::wal::VerifyReport rep;
    chitta::Status st;
    {
      py::gil_scoped_release release;
      st = chitta::wal::Verify(root, &rep);
    }
    ThrowIfError(std::move(st));
    py::dict out;
    out["segments"] = rep.segments;
    out["records"] = rep.records;
    out["bytes"] = rep.bytes;
    py::list damages;
    for (const auto& d : rep.damages) damages.append(DamageDict(d));
    out["damages"] = damages;
    return out;
  }, py::arg("root"), "Check every record of every segment; lists damage and torn tails.");

  m.def("crc32c", [](py::buffer data, uint32_t crc) {
    py::buffer_info info = data.request();
    return chitta::crc32c::Extend(crc, info.ptr, static_cast<size_t>(info.size * info.itemsize));
  }, py::arg("data"), py::arg("crc") = 0);
  m.def("crc32c_implementation", &chitta::crc32c::Implementation);
  m.def("segment_name", &chitta::wal::SegmentName);
  m.attr("MAX_PAYLOAD") = chitta::wal::kMaxPayload;
  m.attr("SEGMENT_FORMAT_VERSION") = py::make_tuple(chitta::wal::kFormatMajor, chitta::wal::kFormatMinor);
}

}  // namespace chitta_ext
