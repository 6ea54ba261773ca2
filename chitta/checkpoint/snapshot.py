"""Writing a field's derived state as a checkpoint, and loading it back.

A checkpoint is taken from a *read-only view* of the field: a handle that
loads the previous checkpoint, replays the log after it, and is then
serialised. Its organs hold exactly the records its read positions cover,
so the watermark and the state always agree, and the writers of the field
(this process's included) never wait for it.
"""

from __future__ import annotations

import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta import _version
from chitta.checkpoint import content, store
from chitta.checkpoint import format as fmt
from chitta.checkpoint.vocab import (
    VOCAB,
    VOCAB_GRAPH,
    VocabTable,
    read_graph,
    read_vocab,
    table_to_write,
    write_vocab,
)
from chitta.errors import CheckpointIgnored, ChittaError, CorruptionError, UnsupportedFormat

if TYPE_CHECKING:
    from chitta.field import Field
    from chitta.field_state import FieldState

STATE = "state"
VECTORS = "vectors.emb"
CODES = "codes.bin"
POSTING = "posting.idx"
GRAPH = "dense.hnsw"  # the tiered HNSW's base; its delta is dense.delta.hnsw
GRAPH_DELTA = "dense.delta.hnsw"
BM25 = "bm25.idx"  # the keyword index (state version 3; absent: rebuilt from the texts)
UNITS = "units.emb"  # state version 3: the recall index's unit vectors, in vectors.emb's order


@dataclass(frozen=True)
class CheckpointInfo:
    """What :meth:`Field.checkpoint` wrote."""

    path: str
    clock: int  # highest seqno the checkpoint covers
    records: int  # log records applied into it
    memories: int
    vectors: int
    bytes: int  # all files of the checkpoint
    seconds: float
    instances: dict[int, int]  # instance id -> highest seqno of it covered


def _file_crc(path: Path) -> int:
    with open(path, "rb") as f:
        crc = 0
        while chunk := f.read(1 << 22):
            crc = fmt.crc32c(chunk, crc)
    return crc


def _tail_crc(path: Path) -> int:
    with open(path, "rb") as f:
        f.seek(-4, 2)
        return int.from_bytes(f.read(4), "little")


def write(view: Field, root: Path, vocabulary: Any = None) -> CheckpointInfo:
    """Serialise ``view`` (a read-only Field nobody else uses) as the new live
    checkpoint of ``root``. The caller holds the checkpoint writer lock.
    ``vocabulary``: the expansion lane's word table of the handle asking for the
    checkpoint (chitta.recall.expand.Vocabulary), saved with the view's own
    (``vocab.emb``, state 5; chitta/checkpoint/vocab.py)."""
    t0 = time.perf_counter()
    positions = view._log.positions()
    clock = int(view._log.clock)
    instances: dict[int, int] = {}
    for name, _offset, last, header_ok, _dead in positions:
        inst = int(name.split("_", 1)[0], 16)
        if header_ok:
            instances[inst] = max(instances.get(inst, 0), int(last))
    temp = store.new_temp_dir(root)
    try:
        mem_state, ids, vecs = view._memories.snapshot()
        sidecars: dict[str, dict[str, int]] = {}
        seen: set[str] = set()  # the words of the documents the view indexes from here on
        saved: VocabTable | None = view._vocab_saved
        live = None
        if vocabulary is not None:
            live = _live_table(vocabulary)
        if live is not None or saved is not None:
            from chitta.recall.expand import vocabulary_words

            def collect(docs: list[str]) -> None:
                for doc in docs:
                    seen.update(vocabulary_words(doc))

            view._index.vocabulary_sink = collect
            if saved is None and view._index.indexed_texts() > 0:  # a keyword index restored as an image
                collect([m.text for m in view.memories()])
        sidecars[VECTORS] = fmt.write_emb(temp / VECTORS, ids, vecs)
        sidecars[VECTORS]["crc"] = _tail_crc(temp / VECTORS)
        index_state = view._index.snapshot(str(temp / POSTING), str(temp / GRAPH), bm25_path=str(temp / BM25))
        if index_state["keyword_index"]:
            sidecars[BM25] = {"bytes": (temp / BM25).stat().st_size, "crc": _tail_crc(temp / BM25)}
        # posting.idx and the graphs carry their own CRC of every byte before it (checked
        # when they are read): the state records that one.
        sidecars[POSTING] = {"bytes": (temp / POSTING).stat().st_size, "crc": _tail_crc(temp / POSTING)}
        for name in (GRAPH, GRAPH_DELTA) if index_state["ann"] else ():  # also by their own trailing CRC
            sidecars[name] = {"bytes": (temp / name).stat().st_size, "crc": _tail_crc(temp / name)}
        organ = view._index
        rows = organ.sidecar_rows(ids) if len(ids) and organ.dim == vecs.shape[1] else None
        index_state["units_missing"] = b""
        coded = None
        if rows is not None:
            sidecars[UNITS] = fmt.write_emb(temp / UNITS, ids, None, dim=int(vecs.shape[1]),
                                            blocks=organ.unit_blocks(rows))
            sidecars[UNITS]["crc"] = _tail_crc(temp / UNITS)
            index_state["units_missing"] = np.ascontiguousarray(ids[rows < 0], "<u8").tobytes()
            coded = organ.sidecar_codes(rows)
        if coded is not None:
            sidecars[CODES] = fmt.write_bin(temp / CODES, ids, coded[0], coded[1])
            sidecars[CODES]["crc"] = _tail_crc(temp / CODES)
        table = table_to_write(saved, seen, live)
        graph_rows = None
        if table is not None:
            sidecars[VOCAB] = write_vocab(temp / VOCAB, table)
            if table.index is not None and table.index.has_graph:  # above the exact limit: vocab.hnsw
                graph_rows = int(table.index.save_graph(str(temp / VOCAB_GRAPH)))
                if graph_rows > len(table.words):  # the live index grew after the table was copied
                    (temp / VOCAB_GRAPH).unlink()
                    graph_rows = None
                else:
                    sidecars[VOCAB_GRAPH] = {"bytes": (temp / VOCAB_GRAPH).stat().st_size,
                                             "crc": _tail_crc(temp / VOCAB_GRAPH)}
        state = {
            "chitta": _version.__version__,
            "created_ms": int(time.time() * 1000),
            "watermark": {
                "clock": clock,
                "positions": [list(p) for p in positions],
                "instances": [[k, v] for k, v in sorted(instances.items())],
            },
            "applied": view._applied,
            "unrouted": view._unrouted,
            "organs": {
                "memories": mem_state,
                "graph": view._graph.snapshot(),
                "settings": view._settings.snapshot(),
                "encoder": view._encoder_organ.snapshot(),
                "recall_index": index_state,
            },
            "sidecars": sidecars,
        }
        if table is not None:  # state 5 (optional: absent = built at open)
            record: dict[str, Any] = {"embedder": table.embedder, "dim": table.dim, "rows": len(table.words),
                                      "pending": len(table.pending)}
            if graph_rows is not None:  # the word graph vocab.hnsw over the first graph_rows rows
                record["graph_rows"] = graph_rows
            state["vocabulary"] = record
        fmt.write_state(temp / STATE, state)
        total = sum(p.stat().st_size for p in temp.iterdir())
        final = store.publish(root, temp, clock)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    store.prune(root, final)
    return CheckpointInfo(
        path=str(final),
        clock=clock,
        records=view._applied,
        memories=len(view._memories),
        vectors=len(ids),
        bytes=total,
        seconds=time.perf_counter() - t0,
        instances=instances,
    )


@dataclass
class Loaded:
    """A checkpoint read and checked, ready to restore into fresh organs."""

    path: Path
    version: int
    state: dict[str, Any]
    vector_ids: Any
    vectors: Any
    codes: tuple[Any, Any] | None = None  # codes.bin: (codes, mean), in vector_ids order
    units: tuple[Any, Any] | None = None  # units.emb: (unit rows, ids without one), in vector_ids order
    vocab: VocabTable | None = None  # vocab.emb (state 5): the expansion lane's word table


def read(root: Path) -> Loaded | None:
    """The live checkpoint, fully checked (state, every sidecar's checksum and the
    state's record of it). None when there is none; raises CorruptionError or
    UnsupportedFormat when it cannot be used."""
    path = store.current(root)
    if path is None:
        return None
    version, state = fmt.read_state(path / STATE)
    state = migrate(version, state)
    try:
        sidecars = state["sidecars"]
        ids, vecs = fmt.read_emb(path / VECTORS)
        want = sidecars[VECTORS]
        if (want["count"], want["crc"]) != (len(ids), _tail_crc(path / VECTORS)):
            raise CorruptionError(f"{VECTORS} is not the one the state file was written with")
        for name in (POSTING, GRAPH, GRAPH_DELTA):
            want = sidecars.get(name)
            if want is None:
                continue
            # Version 3 records posting.idx and the graphs by their own trailing CRC (their
            # native loads check the file against it); versions 1-2 by a CRC of the whole file.
            crc = _tail_crc if version >= 3 else _file_crc
            if (want["bytes"], want["crc"]) != ((path / name).stat().st_size, crc(path / name)):
                raise CorruptionError(f"{name} is not the one the state file was written with")
        want = sidecars.get(BM25)  # its own CRC is checked when it is loaded
        if want is not None and (want["bytes"], want["crc"]) != ((path / BM25).stat().st_size, _tail_crc(path / BM25)):
            raise CorruptionError(f"{BM25} is not the one the state file was written with")
        units = None
        if UNITS in sidecars:
            unit_ids, unit_rows = fmt.read_emb(path / UNITS, writable=True)
            want = sidecars[UNITS]
            if (want["count"], want["crc"]) != (len(unit_ids), _tail_crc(path / UNITS)) or not np.array_equal(
                unit_ids, ids
            ) or unit_rows.shape != vecs.shape:
                raise CorruptionError(f"{UNITS} does not match the state file and {VECTORS}")
            missing = np.frombuffer(state["organs"]["recall_index"]["units_missing"], "<u8")
            units = (unit_rows, missing)
        codes = None
        if CODES in sidecars:
            code_ids, code_rows, code_mean = fmt.read_bin(path / CODES)
            codes = (code_rows, code_mean)
            dim = vecs.shape[1] if vecs.ndim == 2 else 0
            words = (dim + 63) // 64
            if len(code_ids) and (code_rows.shape[1] != words or code_mean.shape[0] != dim):
                raise CorruptionError(f"{CODES}: codes of {code_rows.shape[1]} words, mean of {code_mean.shape[0]}, "
                                      f"for {dim}-d vectors")
            if len(code_ids) and dim % 64 and np.any(code_rows[:, -1] >> np.uint64(dim % 64)):
                raise CorruptionError(f"{CODES}: a code has bits set past dim {dim}")
            if not np.all(np.isfinite(code_mean)):
                raise CorruptionError(f"{CODES}: the mean has a NaN or inf")
            want = sidecars[CODES]
            if (want["count"], want["crc"]) != (len(code_ids), _tail_crc(path / CODES)) or not np.array_equal(
                code_ids, ids
            ):
                raise CorruptionError(f"{CODES} does not match the state file and {VECTORS}")
        vocab = _read_vocab(path, state)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise CorruptionError(f"checkpoint {path.name}: {type(exc).__name__}: {exc}") from exc
    return Loaded(path, version, state, ids, vecs, codes, units, vocab)


def _read_vocab(path: Path, state: dict[str, Any]) -> VocabTable | None:
    """The word table of a state-5 checkpoint that has one, checked against the state's record
    of it (file, rows, pending words, dim); None when the state has none."""
    record = state.get("vocabulary")
    if record is None:
        return None
    want = state["sidecars"][VOCAB]
    if (want["bytes"], want["crc"]) != ((path / VOCAB).stat().st_size, _tail_crc(path / VOCAB)):
        raise CorruptionError(f"{VOCAB} is not the one the state file was written with")
    table = read_vocab(path / VOCAB)
    if (len(table.words), len(table.pending), table.dim) != (record["rows"], record["pending"], record["dim"]):
        raise CorruptionError(f"{VOCAB} does not match the state's record of it")
    if not isinstance(record["embedder"], str):
        raise CorruptionError(f"{VOCAB}: the recorded embedder is not a name")
    table.embedder = record["embedder"]
    graph_rows = record.get("graph_rows")
    if graph_rows is not None:  # the word graph over the first rows (vocab.hnsw), checked against them
        want = state["sidecars"][VOCAB_GRAPH]
        if (want["bytes"], want["crc"]) != ((path / VOCAB_GRAPH).stat().st_size, _tail_crc(path / VOCAB_GRAPH)):
            raise CorruptionError(f"{VOCAB_GRAPH} is not the one the state file was written with")
        table.index = read_graph(path / VOCAB_GRAPH, table, graph_rows)
    return table


def _live_table(vocabulary: Any) -> VocabTable:
    """The calling handle's table with its word index: the index is taken first, so the
    rows its graph covers are a prefix of the table's (rows are only ever appended)."""
    index = vocabulary._index
    words, rows, pending = vocabulary.table()
    if index is not None and len(index) > len(words):
        index = None
    return VocabTable(vocabulary.name, words, rows, pending, index)


def _v1_to_v2(state: dict[str, Any]) -> dict[str, Any]:
    """Version 2 added the dense-index setting, the HNSW sidecars, the keyword
    lane's recall contexts and the sparse encoder's per-atom thresholds. A
    version-1 checkpoint predates all four: the setting was "auto", there is no
    graph (a field set to "hnsw" builds it on its first large query), no memory
    had a recall context and every threshold was 0."""
    index = state["organs"]["recall_index"]
    index.setdefault("dense_index", "auto")
    index.setdefault("ann", False)
    index.setdefault("keyword_context", [])
    encoder = state["organs"]["encoder"]["encoder"]
    if encoder is not None:
        encoder.setdefault("thresholds", None)
    for key, value in state["organs"]["settings"]["values"]:
        if key == "dense_index":
            index["dense_index"] = value
    return state


def _v2_to_v3(state: dict[str, Any]) -> dict[str, Any]:
    """Version 3 added optional parts: the keyword index sidecar ``bm25.idx``
    (without it the keyword index is built from the memories' texts, as version 2
    did); the recall index's ``speakers`` list (who said each memory; without it
    restore takes each speaker from its put's meta, where a later meta update of a
    speaker is not seen); the unit-vector sidecar ``units.emb`` with
    ``recall_index.units_missing`` (without it the unit vectors are normalised
    from vectors.emb at open). It also records posting.idx by its own CRC (a
    version-2 record is checked as written)."""
    state["organs"]["recall_index"].setdefault("keyword_index", False)
    state["organs"]["recall_index"].setdefault("units_missing", b"")
    return state


def _v3_to_v4(state: dict[str, Any]) -> dict[str, Any]:
    """Version 4 stores the memories organ as columns (numpy columns as bytes, the
    put texts as one arena) instead of an array of puts: the old map is rebuilt
    into the new one (chitta/checkpoint/migrate_memories.py). It also added the
    recall index's optional ``columns`` (ids, event times, label codes and tables
    of the live memories, packed; without them restore builds the columns from the
    live puts, as version 3 did) and wrote its ``staged`` ids in arrival order
    (version 3: any order; they then arrive in the memories' order): nothing to
    change there."""
    from chitta.checkpoint.migrate_memories import memories_v3_to_v4

    state["organs"]["memories"] = memories_v3_to_v4(state["organs"]["memories"])
    return state


def _v4_to_v5(state: dict[str, Any]) -> dict[str, Any]:
    """Version 5 added the optional ``vocabulary`` record and its sidecar ``vocab.emb`` (the
    expansion lane's word table): absent, so a field that expands builds the table at open,
    as version 4 did at its first recall. Nothing to change."""
    return state


_MIGRATIONS = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5}  # version -> step to version + 1


def migrate(version: int, state: dict[str, Any]) -> dict[str, Any]:
    """Bring a state map of an older format version to the current one, one step
    per version."""
    try:
        while version < fmt.STATE_VERSION:
            state = _MIGRATIONS[version](state)
            version += 1
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptionError(f"checkpoint state version {version} could not be migrated: {exc}") from exc
    if version != fmt.STATE_VERSION:
        raise UnsupportedFormat(f"no migration from checkpoint state version {version}")
    return state


class LiveMemories:
    """What the recall index reads of the memories organ at restore, on demand: a
    version-4 state needs only the live ids (and the texts of a few memories);
    every live put is rebuilt only for older states or a missing sidecar."""

    def __init__(self, memories: Any) -> None:
        self._memories = memories
        self._puts: tuple[list[int], list[Any], list[str]] | None = None

    def ids(self) -> Any:
        return self._memories.live_id_array()

    def text(self, mid: int) -> str | None:
        return self._memories.text(mid)  # type: ignore[no-any-return]

    def puts(self) -> tuple[list[int], list[Any], list[str]]:
        """(ids, puts, current texts) of every live memory, in ``ids()`` order."""
        if self._puts is None:
            self._puts = self._memories.live_puts()
        return self._puts


def restore(field: FieldState, loaded: Loaded) -> None:
    """Fill ``field``'s fresh organs from ``loaded`` and seed its log positions.
    Raises on anything malformed; the caller then discards the organs."""
    content.check(loaded.state)  # intact bytes are not enough: the content must fit the log
    organs = loaded.state["organs"]
    mark = loaded.state["watermark"]
    field._memories.restore(organs["memories"], loaded.vector_ids, loaded.vectors)
    field._graph.restore(organs["graph"])
    field._settings.restore(organs["settings"])
    field._encoder_organ.restore(organs["encoder"])
    live = LiveMemories(field._memories)
    vec_ids = loaded.vector_ids
    field._index.restore(
        organs["recall_index"], live, vec_ids, loaded.vectors, str(loaded.path / POSTING), str(loaded.path / GRAPH),
        loaded.codes, loaded.units, bm25_path=str(loaded.path / BM25),
    )
    field._vocab_saved = loaded.vocab  # adopted by chitta.recall.expand.attach once the embedder is known
    field._applied = int(loaded.state["applied"])
    field._unrouted = int(loaded.state["unrouted"])
    positions = [(str(n), int(o), int(s), bool(h), bool(d)) for n, o, s, h, d in mark["positions"]]
    field._log.seed_positions(positions, int(mark["clock"]))


def try_load(field: FieldState) -> Loaded | None:
    """Read the live checkpoint of ``field``'s root; warn (CheckpointIgnored) and
    return None when it exists but cannot be used."""
    try:
        return read(field.path)
    except ChittaError as exc:
        warnings.warn(
            f"checkpoint ignored, the field is rebuilt from its log: {exc}", CheckpointIgnored, stacklevel=4
        )
        return None
