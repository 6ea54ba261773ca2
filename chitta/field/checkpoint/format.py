"""Bytes of a checkpoint on disk (docs/FORMAT.md, "Checkpoints", is normative).

A checkpoint directory holds one state file and its sidecars. Every file
starts with an 8-byte magic and a u32 format version and ends with a CRC-32C
of everything before it; every length is checked against the file size
before it is used. Reading raises :class:`CorruptionError` (a damaged or
foreign file) or :class:`UnsupportedFormat` (a version this code does not
know); the caller then ignores the checkpoint and replays the log.

State file ``state``::

    magic "CHITSTAT" | u32 version | u32 flags (0) | u64 n | n bytes msgpack map | u32 crc32c

Vector sidecar ``vectors.emb`` (id + float vector, column layout so the
vectors can be memory-mapped as one ``count x dim`` matrix)::

    magic "CHITEMB\\0" | u32 version | u32 dim | u64 count | count x u64 id | count x dim x f32 | u32 crc32c

Unit-vector sidecar ``units.emb`` (state versions 3-7; read, not written): the same framing and the
same ids in the same order as ``vectors.emb``; each row is the recall index's
unit-length copy of that vector (zeros for the ids the state lists in
``recall_index.units_missing``). Mapped copy-on-write at open, so the dense
lane needs no normalised copy of its own.

Binary-code sidecar ``codes.bin`` (id + sign code of the mean-centred unit
vector, ``words`` u64 per code)::

    magic "CHITBIN\\0" | u32 version | u32 words | u64 count | u32 dim | u32 0 |
    dim x f32 mean | count x u64 id | count x words x u64 code | u32 crc32c

All integers and floats are little-endian.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import CorruptionError, UnsupportedFormat

STATE_MAGIC = b"CHITSTAT"
EMB_MAGIC = b"CHITEMB\x00"
BIN_MAGIC = b"CHITBIN\x00"

STATE_VERSION = 10  # what this code writes (1: before the dense-index setting and HNSW sidecars;
# 2: before bm25.idx, speakers, the unit-vector sidecar units.emb and posting.idx recorded by its own CRC;
# 3: before the memories organ's columns, the recall index's optional packed columns and its staged
#    ids in arrival order; 4: before the expansion lane's word table vocab.emb; 5: before the
#    knowledge organ; 6: before the per-op-type unrouted counts and the routed op types;
#    7: units.emb written beside vectors.emb; 8: dense.hnsw stored every vector, HNSW format 1.0;
#    9: vectors.emb always, never vectors.ref's references into the log)
EMB_VERSION = 1
BIN_VERSION = 1

_HEAD = struct.Struct("<8sIIQ")  # magic, version, u32 field, u64 field
_CRC = struct.Struct("<I")
MAX_STATE_BYTES = 1 << 40  # a sanity bound on lengths read from disk


def crc32c(data: Any, crc: int = 0) -> int:
    return int(_core.crc32c(data, crc))


def tail_crc(path: Path) -> int:
    """The CRC-32C a checkpoint file (or native sidecar) stores in its last 4 bytes."""
    with open(path, "rb") as f:
        f.seek(-4, 2)
        return int.from_bytes(f.read(4), "little")


def file_crc(path: Path) -> int:
    """CRC-32C of a whole file (how state versions 1-2 recorded native sidecars)."""
    with open(path, "rb") as f:
        crc = 0
        while chunk := f.read(1 << 22):
            crc = crc32c(chunk, crc)
    return crc


def _write_atomic_file(path: Path, parts: Iterable[Any]) -> int:
    """Write ``parts`` then their CRC-32C to ``path`` and fsync it. Returns the size."""
    crc = 0
    size = 0
    with open(path, "wb") as f:
        for part in parts:
            mv = memoryview(part)
            if mv.nbytes == 0:  # e.g. the (0, dim) matrix of a field without vectors
                continue
            mv = mv.cast("B")
            crc = crc32c(mv, crc)
            f.write(mv)
            size += len(mv)
        f.write(_CRC.pack(crc))
        f.flush()
        os.fsync(f.fileno())
    return size + _CRC.size


def _read_checked(
    path: Path, magic: bytes, known: int, what: str, *, writable: bool = False
) -> tuple[memoryview, int, int, int]:
    """Map ``path``, check magic, version, size and CRC. Returns (body, version, u32, u64)
    where body is everything between the 24-byte head and the CRC. ``writable``:
    a copy-on-write map (writes stay in this process, the file is never changed)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            # Memory-mapped, read-only: arrays handed out are views of the page cache.
            access = mmap.ACCESS_COPY if writable else mmap.ACCESS_READ
            data: Any = mmap.mmap(f.fileno(), 0, access=access) if size else b""
    except OSError as exc:
        raise CorruptionError(f"{what} {path.name}: cannot read ({exc.strerror})") from exc
    if len(data) < _HEAD.size + _CRC.size:
        raise CorruptionError(f"{what} {path.name}: {len(data)} bytes is shorter than a header")
    got_magic, version, a, b = _HEAD.unpack_from(data, 0)
    if got_magic != magic:
        raise CorruptionError(f"{what} {path.name}: bad magic {got_magic!r}")
    (stored,) = _CRC.unpack_from(data, len(data) - _CRC.size)
    if crc32c(memoryview(data)[: len(data) - _CRC.size]) != stored:
        raise CorruptionError(f"{what} {path.name}: checksum mismatch")
    if version == 0 or version > known:
        raise UnsupportedFormat(
            f"{what} {path.name}: format version {version}, this chitta reads up to {known}"
        )
    body = memoryview(data)[_HEAD.size : len(data) - _CRC.size]
    return body, version, a, b


# ---- state file ----------------------------------------------------------------------
def write_state(path: Path, state: dict[str, Any]) -> int:
    payload = msgspec.msgpack.encode(state)
    return _write_atomic_file(
        path, [_HEAD.pack(STATE_MAGIC, STATE_VERSION, 0, len(payload)), payload]
    )


def read_state(path: Path) -> tuple[int, dict[str, Any]]:
    """(format version, the decoded map) of a state file."""
    body, version, flags, n = _read_checked(path, STATE_MAGIC, STATE_VERSION, "state file")
    if flags != 0:
        raise UnsupportedFormat(f"state file {path.name}: unknown flags {flags:#x}")
    if n != len(body) or n > MAX_STATE_BYTES:
        raise CorruptionError(
            f"state file {path.name}: length {n} does not match the file ({len(body)})"
        )
    try:
        state = msgspec.msgpack.decode(body)
    except msgspec.DecodeError as exc:
        raise CorruptionError(f"state file {path.name}: undecodable payload ({exc})") from exc
    if not isinstance(state, dict):
        raise CorruptionError(f"state file {path.name}: payload is not a map")
    return version, state


# ---- vectors.emb -----------------------------------------------------------------------
def write_emb(
    path: Path,
    ids: npt.NDArray[np.uint64],
    vectors: npt.NDArray[np.float32] | None,
    *,
    dim: int = 0,
    blocks: Iterable[npt.NDArray[np.float32]] = (),
) -> dict[str, int]:
    """Write a vector sidecar: ``vectors`` (count x dim), or, when it is None,
    the row ``blocks`` in order (``dim`` wide, len(ids) rows in all)."""
    count = len(ids)
    if vectors is not None:
        dim = int(vectors.shape[1]) if vectors.ndim == 2 else 0
        if int(vectors.shape[0]) != count:
            raise ValueError("ids and vectors differ in length")
        blocks = [vectors]
    head = _HEAD.pack(EMB_MAGIC, EMB_VERSION, dim, count)
    rows = 0

    def parts() -> Iterable[Any]:
        nonlocal rows
        yield head
        yield np.ascontiguousarray(ids, "<u8")
        for block in blocks:
            rows += len(block)
            yield np.ascontiguousarray(block, "<f4")

    size = _write_atomic_file(path, parts())
    if rows != count and count:
        raise ValueError(f"{rows} rows written for {count} ids")
    return {"count": count, "dim": dim, "bytes": size}


def read_emb(
    path: Path, *, writable: bool = False
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
    """(ids, vectors) of a vector sidecar, checked; arrays are views of one map,
    read-only or (``writable``) copy-on-write."""
    body, _version, dim, count = _read_checked(
        path, EMB_MAGIC, EMB_VERSION, "vector sidecar", writable=writable
    )
    need = count * 8 + count * dim * 4
    if (count and dim == 0) or need != len(body):
        raise CorruptionError(
            f"vector sidecar {path.name}: {count} vectors of dim {dim} need {need} bytes, the file has {len(body)}"
        )
    ids = np.frombuffer(body, "<u8", count, 0)
    vecs = np.frombuffer(body, "<f4", count * dim, count * 8).reshape(count, dim)
    return ids, vecs


# ---- codes.bin ---------------------------------------------------------------------------
def write_bin(
    path: Path,
    ids: npt.NDArray[np.uint64],
    codes: npt.NDArray[np.uint64],
    mean: npt.NDArray[np.float32],
) -> dict[str, int]:
    count, words = int(codes.shape[0]), int(codes.shape[1]) if codes.ndim == 2 else 0
    if len(ids) != count:
        raise ValueError("ids and codes differ in length")
    dim = int(mean.shape[0])
    head = _HEAD.pack(BIN_MAGIC, BIN_VERSION, words, count) + struct.pack("<II", dim, 0)
    size = _write_atomic_file(
        path,
        [
            head,
            np.ascontiguousarray(mean, "<f4"),
            np.ascontiguousarray(ids, "<u8"),
            np.ascontiguousarray(codes, "<u8"),
        ],
    )
    return {"count": count, "words": words, "dim": dim, "bytes": size}


def read_bin(
    path: Path,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
    """(ids, codes, mean) of a binary-code sidecar, checked."""
    body, _version, words, count = _read_checked(path, BIN_MAGIC, BIN_VERSION, "code sidecar")
    if len(body) < 8:
        raise CorruptionError(f"code sidecar {path.name}: truncated")
    dim, pad = struct.unpack_from("<II", body, 0)
    need = 8 + dim * 4 + count * 8 + count * words * 8
    if pad != 0 or need != len(body) or (count and words == 0):
        raise CorruptionError(
            f"code sidecar {path.name}: {count} codes of {words} words need {need} bytes, the file has {len(body)}"
        )
    mean = np.frombuffer(body, "<f4", dim, 8)
    at = 8 + dim * 4
    ids = np.frombuffer(body, "<u8", count, at)
    codes = np.frombuffer(body, "<u8", count * words, at + count * 8).reshape(count, words)
    return ids, codes, mean
