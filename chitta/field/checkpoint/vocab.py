"""The expansion lane's word table in a checkpoint: the sidecar ``vocab.emb``
(state version 5; docs/FORMAT.md section 8 is normative) and what a checkpoint
writes into it.

The table (chitta.recall.expand.Vocabulary) is every distinct field word and
its unit vector under the field's embedder, in row order, plus the words known
to be in the field but not embedded yet (``pending``: a checkpoint written by a
process without the embedder, ``chitta checkpoint``, carries the words of the
log it replayed that way). Layout, little-endian::

    magic "CHITVOC\\0" | u32 version (1) | u32 dim | u64 rows | u64 pending | u64 word_bytes |
    rows x dim x f32 vectors | (rows + pending) x u32 word byte lengths |
    word_bytes UTF-8 words (the rows' in row order, then the pending ones) | u32 crc32c

A file is valid iff its size is exactly what the header says, the CRC
matches, every vector is finite, every word is non-empty valid UTF-8 and no
word appears twice. Anything else is :class:`CorruptionError` (the checkpoint
is then ignored, like any damaged sidecar).

Above the word index's exact limit the table's HNSW graph is saved beside it
as ``vocab.hnsw`` (the HNSW file format, csrc/hnsw/FORMAT.md; the state's
``vocabulary.graph_rows`` says how many leading rows it covers): an open loads
it (:func:`read_graph`, every check of FORMAT.md section 8) instead of
building it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.errors import CorruptionError
from chitta.field.checkpoint import format as fmt

VOCAB = "vocab.emb"
VOCAB_GRAPH = "vocab.hnsw"
VOCAB_MAGIC = b"CHITVOC\x00"
VOCAB_VERSION = 1
_HEAD = struct.Struct("<8sIIQQQ")  # magic, version, dim, rows, pending, word_bytes (40 bytes)
F32 = npt.NDArray[np.float32]


@dataclass
class VocabTable:
    """A word table as a checkpoint holds it."""

    embedder: str  # the embedder's ``name`` the rows were made with ("" when there are none)
    words: list[str]  # the rows' words, in row order
    vecs: F32  # rows x dim, float32 unit rows
    pending: list[str] = field(default_factory=list)  # field words without a row
    index: Any = (
        None  # the saved word graph over the first rows, loaded (chitta._core._WordIndex), or None
    )

    @property
    def dim(self) -> int:
        return int(self.vecs.shape[1])


def write_vocab(path: Path, table: VocabTable) -> dict[str, int]:
    """Write ``table`` as ``vocab.emb``; returns its ``bytes`` and ``crc`` (the trailing one)."""
    vecs = np.ascontiguousarray(table.vecs, "<f4")
    if vecs.ndim != 2 or len(vecs) != len(table.words):
        raise ValueError(f"{len(table.words)} words for vectors of shape {vecs.shape}")
    encoded = [w.encode() for w in (*table.words, *table.pending)]
    blob = b"".join(encoded)
    head = _HEAD.pack(
        VOCAB_MAGIC, VOCAB_VERSION, vecs.shape[1], len(table.words), len(table.pending), len(blob)
    )
    lengths = np.fromiter(map(len, encoded), "<u4", len(encoded))
    size = fmt._write_atomic_file(path, [head, vecs, lengths, blob])
    with open(path, "rb") as f:
        f.seek(-4, 2)
        crc = int.from_bytes(f.read(4), "little")
    return {"bytes": size, "crc": crc}


def read_vocab(path: Path) -> VocabTable:
    """The table of a ``vocab.emb``, fully checked (CorruptionError / UnsupportedFormat)."""
    what = f"word table {path.name}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptionError(f"{what}: cannot read ({exc.strerror})") from exc
    if len(data) < _HEAD.size + 4:
        raise CorruptionError(f"{what}: {len(data)} bytes is shorter than a header")
    magic, version, dim, rows, pending, word_bytes = _HEAD.unpack_from(data, 0)
    if magic != VOCAB_MAGIC:
        raise CorruptionError(f"{what}: bad magic {magic!r}")
    if fmt.crc32c(memoryview(data)[:-4]) != int.from_bytes(data[-4:], "little"):
        raise CorruptionError(f"{what}: checksum mismatch")
    if version != VOCAB_VERSION:
        from chitta.errors import UnsupportedFormat

        raise UnsupportedFormat(
            f"{what}: format version {version}, this chitta reads {VOCAB_VERSION}"
        )
    need = (
        _HEAD.size + 4 * rows * dim + 4 * (rows + pending) + word_bytes + 4
    )  # Python ints: no overflow
    if need != len(data) or (rows and dim == 0):
        raise CorruptionError(
            f"{what}: {rows} rows of dim {dim}, {pending} pending words and {word_bytes} "
            f"word bytes need {need} bytes, the file has {len(data)}"
        )
    at = _HEAD.size
    vecs = np.frombuffer(data, "<f4", rows * dim, at).reshape(rows, dim).astype(np.float32)
    at += 4 * rows * dim
    lengths = np.frombuffer(data, "<u4", rows + pending, at).astype(np.int64)
    at += 4 * (rows + pending)
    if int(lengths.sum()) != word_bytes or (len(lengths) and int(lengths.min()) == 0):
        raise CorruptionError(
            f"{what}: word lengths do not add up to {word_bytes} bytes, or a word is empty"
        )
    if not np.all(np.isfinite(vecs)):
        raise CorruptionError(f"{what}: a vector has a NaN or inf")
    ends = np.cumsum(lengths).tolist()
    blob = data[at : at + word_bytes]
    try:
        words = [blob[s:e].decode() for s, e in zip([0, *ends[:-1]], ends)]
    except UnicodeDecodeError as exc:
        raise CorruptionError(f"{what}: a word is not valid UTF-8") from exc
    if len(set(words)) != len(words):
        raise CorruptionError(f"{what}: a word appears twice")
    return VocabTable("", words[:rows], vecs, words[rows:])


def read_graph(path: Path, table: VocabTable, graph_rows: object) -> Any:
    """The word graph ``vocab.hnsw`` loaded over ``table``'s rows (a ``_WordIndex`` holding
    its first ``graph_rows`` rows and the graph): every check of the HNSW format, then that it
    is this table's graph (parameters, node i = row i bit for bit, ``graph_rows`` nodes, no
    more than the table's rows). CorruptionError (CrcMismatch) / UnsupportedFormat otherwise."""
    from chitta import _core
    from chitta.recall.expand import EXACT_WORDS, GRAPH_EF

    rows = len(table.words)
    if (
        isinstance(graph_rows, bool)
        or not isinstance(graph_rows, int)
        or not 0 < graph_rows <= rows
    ):
        raise CorruptionError(
            f"{VOCAB_GRAPH}: the state records a graph of {graph_rows!r} rows for a table of {rows}"
        )
    index = _core._WordIndex.load_graph(table.dim, EXACT_WORDS, GRAPH_EF, table.vecs, str(path))
    if len(index) != graph_rows:
        raise CorruptionError(
            f"{VOCAB_GRAPH}: a graph of {len(index)} rows, the state records {graph_rows}"
        )
    return index


def table_to_write(
    saved: VocabTable | None, seen: Iterable[str], live: VocabTable | None
) -> VocabTable | None:
    """The table a checkpoint writes: the rows of the live handle's table (``live``: the
    vocabulary of the process writing the checkpoint, when its settings expand), then the
    rows of the previous checkpoint's table (``saved``, as loaded by the writer's view)
    not among them when both come from one embedder; every other word known (``seen``: the
    words of the documents the view indexed after that checkpoint, and the pending
    words of both tables) pending. None when neither table exists."""
    if live is None and saved is None:
        return None
    base = live if live is not None else saved
    assert base is not None
    words = list(base.words)
    row = set(words)
    vecs = [base.vecs]
    rest: set[str] = set(seen)
    for t in (saved, live):
        if t is not None:
            rest.update(t.pending)
    if saved is not None and saved is not base:
        if saved.embedder == base.embedder and saved.vecs.shape[1:] == base.vecs.shape[1:]:
            extra = [i for i, w in enumerate(saved.words) if w not in row]
            words.extend(saved.words[i] for i in extra)
            row.update(saved.words[i] for i in extra)
            vecs.append(saved.vecs[extra])
        else:
            rest.update(saved.words)
    mat: Any = np.concatenate(vecs) if len(vecs) > 1 else vecs[0]
    # the graph of the base's first rows goes with it (the rows after them are indexed at open)
    return VocabTable(
        base.embedder, words, np.ascontiguousarray(mat, np.float32), sorted(rest - row), base.index
    )
