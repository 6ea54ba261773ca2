// _ext/bind_wal_runs.cc
// Replay's native run decoders beside decode_puts (bind_wal_put.cc):
//   _core._decode_sparse_codes(result, start, end, active)
//     -> (ids u64[m], features u32[m, active], activations f32[m, active],
//         versions u32[m], fallback: list of record indices)
//     Rows in record order; records of another shape (another feature count,
//     damage) are left to the general decoder and listed in `fallback`.
//   _core._decode_packed_codes(result, start, end, active): the same for op 68
//     (UpdateSparseCodeU8), dequantised as its op's ``activations`` is.
//   _core._unpack_batch(result, index) -> ReadResult | None
//     The ops inside Batch record `index` as a read result of their own (each
//     inner record carries the Batch's seqno, instance, segment and offset), so
//     the run decoders serve batched writes too. None when the payload is not
//     the plain shape (the general decoder then reports what is wrong).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <vector>

#include "registry.h"
#include "wal/log.h"
#include "wal/msgpack_reader.h"
#include "wal/sparse_code_payload.h"

namespace chitta_ext {
namespace {

using chitta::wal::ReadBatch;

using CodeParser = bool (*)(const uint8_t*, size_t, uint32_t, uint64_t*, uint32_t*, float*,
                           uint32_t*);

py::tuple DecodeCodes(const ReadBatch& b, size_t start, size_t end, uint32_t active,
                      CodeParser parse) {
  if (start > end || end > b.records.size()) throw py::index_error("record range out of bounds");
  if (active == 0 || active > 65536) ThrowInvalid("active must be in [1, 65536]");
  const size_t n = end - start;
  py::array_t<uint64_t> ids(static_cast<py::ssize_t>(n));
  py::array_t<uint32_t> feats({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(active)});
  py::array_t<float> acts({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(active)});
  py::array_t<uint32_t> versions(static_cast<py::ssize_t>(n));
  std::vector<size_t> fallback;
  size_t rows = 0;
  {
    uint64_t* id = ids.mutable_data();
    uint32_t* f = feats.mutable_data();
    float* a = acts.mutable_data();
    uint32_t* v = versions.mutable_data();
    py::gil_scoped_release release;
    for (size_t i = start; i < end; ++i) {
      const auto& r = b.records[i];
      if (parse(r.payload, r.len, active, id + rows, f + rows * active, a + rows * active,
                v + rows)) {
        ++rows;
      } else {
        fallback.push_back(i);
      }
    }
  }
  if (rows < n) {
    const auto m = static_cast<py::ssize_t>(rows);
    py::slice head(0, m, 1);
    return py::make_tuple(ids[head], feats[head], acts[head], versions[head], py::cast(fallback));
  }
  return py::make_tuple(ids, feats, acts, versions, py::cast(fallback));
}

py::tuple DecodeSparseCodes(const ReadBatch& b, size_t start, size_t end, uint32_t active) {
  return DecodeCodes(b, start, end, active, &chitta::wal::ParseSparseCode);
}

py::tuple DecodePackedCodes(const ReadBatch& b, size_t start, size_t end, uint32_t active) {
  return DecodeCodes(b, start, end, active, &chitta::wal::ParsePackedSparseCode);
}

constexpr uint8_t kBatchOpType = 64;  // OpType.Batch (docs/OPS.md): never nested

// A Batch payload is [[[op_type, payload], ...]] (Batch.ops as (int, Raw) pairs).
// Each inner payload must be exactly one msgpack value; its extent is found by
// skipping it (SkipValue). Nothing is copied: the inner records point into the
// Batch's payload, kept alive by the owners the result shares with `b`.
std::shared_ptr<ReadBatch> UnpackBatch(const ReadBatch& b, size_t index) {
  if (index >= b.records.size()) throw py::index_error("record index out of range");
  const auto& rec = b.records[index];
  if (rec.op_type != kBatchOpType) ThrowInvalid("record is not a Batch");
  chitta::wal::MsgpackReader r{rec.payload, rec.payload + rec.len};
  uint64_t fields, count;
  if (!r.ArrayHeader(&fields) || fields != 1 || !r.ArrayHeader(&count) ||
      count > static_cast<uint64_t>(r.end - r.p)) {
    return nullptr;
  }
  auto out = std::make_shared<ReadBatch>();
  out->segments = b.segments;
  out->owners = b.owners;
  out->records.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t pair, code;
    if (!r.ArrayHeader(&pair) || pair != 2 || !r.U64(&code) || code > 255 || code == kBatchOpType) {
      return nullptr;
    }
    const uint8_t* begin = r.p;
    if (!r.SkipValue(0)) return nullptr;
    chitta::wal::RecordRef inner = rec;
    inner.op_type = static_cast<uint8_t>(code);
    inner.payload = begin;
    inner.len = static_cast<uint32_t>(r.p - begin);
    inner.payload_at = rec.payload_at + static_cast<uint64_t>(begin - rec.payload);
    out->records.push_back(inner);
  }
  if (r.p != r.end) return nullptr;
  return out;
}

}  // namespace

CHITTA_BIND(wal_runs) {
  m.def("_unpack_batch", [](const ReadBatch& b, size_t index) -> py::object {
    std::shared_ptr<ReadBatch> out = UnpackBatch(b, index);
    if (!out) return py::none();
    return py::cast(out);
  }, py::arg("result"), py::arg("index"),
        "The ops inside Batch record `index` as a ReadResult of their own; None if the payload "
        "is not the plain shape.");
  m.def("_decode_sparse_codes", &DecodeSparseCodes, py::arg("result"), py::arg("start"), py::arg("end"),
        py::arg("active"),
        "(ids, features, activations, versions, fallback): UpdateSparseCode records [start, end) of a "
        "read result with exactly `active` features, as arrays; the others' record indices in fallback.");
  m.def("_decode_packed_codes", &DecodePackedCodes, py::arg("result"), py::arg("start"),
        py::arg("end"), py::arg("active"),
        "As _decode_sparse_codes, for UpdateSparseCodeU8 records (op 68): activations are "
        "float32(level) * float32(scale); records validate() refuses go to fallback.");
}

}  // namespace chitta_ext
