// _ext/wal_py.h
// Pieces of the segment-log binding shared by bind_wal.cc (the classes) and
// bind_wal_put.cc (the PutPayload fast paths: encode + append in one call,
// and building a run of PutPayload structs straight from the read buffer) and
// bind_wal_queue.cc (remember's plain path: _core.PutQueue).
#pragma once

#include <memory>

#include "registry.h"
#include "wal/log.h"

namespace chitta_ext {

// A callable append_put(id, text, created_ms, written_ms) or with all 15
// PutPayload fields in format order (meta as pre-encoded msgpack bytes):
// encodes the payload natively and appends it; returns the seqno. A plain
// CPython fast-call function: it keeps the Log alive.
py::object MakePutAppender(std::shared_ptr<chitta::wal::Log> log);

// A chitta._core.PutQueue over `log` (bind_wal_queue.cc): Field.remember's
// plain path in one call. clock: None (the system clock) or a callable giving
// epoch seconds; max_text_bytes: the UTF-8 limit of a text; waits_for_disk:
// the log's durability is fsync (puts then release the GIL while they wait).
py::object MakePutQueue(std::shared_ptr<chitta::wal::Log> log, py::object clock, Py_ssize_t max_text_bytes,
                        bool waits_for_disk);

// PutQueue.put(text) of a PutQueue object (bind_wal_queue.cc): the id, None, or nullptr.
PyObject* PutQueuePut(PyObject* queue, PyObject* const* args, Py_ssize_t nargs);

// PutQueue.remember_entry(func, weakref_to_field) -> a RememberEntry (bind_wal_entry.cc).
PyObject* MakeRememberEntry(PyObject* queue, PyObject* const* args, Py_ssize_t nargs);

// Sets the chitta.errors exception of a non-OK status (the table in errors.cc); returns nullptr.
PyObject* SetPyStatus(const chitta::Status& st);

// (structs, fallback): PutPayload structs of records [start, end) of `b`,
// built by `cls`'s own slot layout; records the native reader does not take
// (unusual shapes, damage) are None in `structs` and listed in `fallback`
// (record indices) for the general decoder.
py::tuple DecodePutRun(const chitta::wal::ReadBatch& b, size_t start, size_t end, py::handle cls);

}  // namespace chitta_ext
