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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chitta
from chitta.errors import (
    CheckpointIgnored,
    ChittaError,
    CorruptionError,
    InvalidArgument,
    UnsupportedFormat,
)
from chitta.field.checkpoint import content, store
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint.vocab import (
    VOCAB,
    VOCAB_GRAPH,
    VocabTable,
    read_graph,
    read_vocab,
    table_to_write,
    write_vocab,
)
from chitta.organs import sidecar

if TYPE_CHECKING:
    from chitta.field import Field
    from chitta.field.core import FieldCore

STATE = "state"
VECTORS = "vectors.emb"  # the sidecars of the built-in organs (chitta/organs/*_checkpoint.py)
CODES, POSTING, GRAPH, GRAPH_DELTA, BM25, UNITS = (
    "codes.bin",
    "posting.idx",
    "dense.hnsw",
    "dense.delta.hnsw",
    "bm25.idx",
    "units.emb",
)


class SnapshotFiles:
    """The SnapshotContext organs write their sidecars through (chitta.organs.contract)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.shared: dict[str, Any] = {}
        self.sidecars: dict[str, dict[str, int]] = {}

    def path(self, name: str) -> Path:
        if not name or "/" in name or name in (STATE, ".", ".."):
            raise InvalidArgument(
                f"sidecar name {name!r} is not a plain file name other than {STATE!r}"
            )
        return self.directory / name

    def record(self, name: str, entry: dict[str, int]) -> None:
        if name in self.sidecars:
            raise InvalidArgument(f"two organs wrote sidecar {name!r}; give each its own name")
        self.sidecars[name] = dict(entry)

    def write_records(self, name: str, magic: bytes, version: int, records: list[Any]) -> None:
        entry = sidecar.write_records(self.path(name), magic, version, records)
        entry["crc"] = fmt.tail_crc(self.path(name))
        self.record(name, entry)


class RestoreFiles:
    """The RestoreContext organs read their sidecars through."""

    def __init__(
        self, directory: Path, version: int, sidecars: Mapping[str, Mapping[str, int]]
    ) -> None:
        self.directory = directory
        self.version = version
        self.sidecars: Mapping[str, Mapping[str, int]] = sidecars
        self.shared: dict[str, Any] = {}

    def path(self, name: str) -> Path:
        return self.directory / name

    def read_records(self, name: str, magic: bytes, version: int) -> list[Any]:
        want = self.sidecars.get(name)
        if want is None:
            raise CorruptionError(f"the checkpoint state records no sidecar {name!r}")
        path = self.path(name)
        if (want["bytes"], want["crc"]) != (path.stat().st_size, fmt.tail_crc(path)):
            raise CorruptionError(f"{name} is not the one the state file was written with")
        _version_read, records = sidecar.read_records(path, magic, version)
        if len(records) != want["count"]:
            raise CorruptionError(
                f"{name}: {len(records)} records, the state file says {want['count']}"
            )
        return records


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


def write(view: Field, root: Path, vocabulary: Any = None) -> CheckpointInfo:
    """Serialise ``view`` (a read-only Field nobody else uses) as the new live
    checkpoint of ``root``. The caller holds the checkpoint writer lock.
    ``vocabulary``: the expansion lane's word table of the handle asking for the
    checkpoint (chitta.recall.expand.Vocabulary), saved with the view's own
    (``vocab.emb``, state 5; chitta/field/checkpoint/vocab.py)."""
    t0 = time.perf_counter()
    positions = view.core.log.positions()
    clock = int(view.core.log.clock)
    instances: dict[int, int] = {}
    for name, _offset, last, header_ok, _dead in positions:
        inst = int(name.split("_", 1)[0], 16)
        if header_ok:
            instances[inst] = max(instances.get(inst, 0), int(last))
    temp = store.new_temp_dir(root)
    try:
        ctx = SnapshotFiles(temp)
        ctx.shared["log"] = (root, [list(p) for p in positions])  # vector references (state 10)
        seen: set[str] = set()  # the words of the documents the view indexes from here on
        saved: VocabTable | None = view.core.vocab_saved
        live = None
        if vocabulary is not None:
            live = _live_table(vocabulary)
        if live is not None or saved is not None:
            from chitta.recall.expand import vocabulary_words

            def collect(docs: list[str]) -> None:
                for doc in docs:
                    seen.update(vocabulary_words(doc))

            view.core.index.vocabulary_sink = collect
            if (
                saved is None and view.core.index.indexed_texts() > 0
            ):  # a keyword index restored as an image
                collect([m.text for m in view.memories()])
        organ_states = {organ.name: organ.snapshot(ctx) for organ in view.core.organs}
        sidecars = ctx.sidecars
        ids = ctx.shared["vectors"][0]
        table = table_to_write(saved, seen, live)
        graph_rows = None
        if table is not None:
            sidecars[VOCAB] = write_vocab(temp / VOCAB, table)
            if (
                table.index is not None and table.index.has_graph
            ):  # above the exact limit: vocab.hnsw
                graph_rows = int(table.index.save_graph(str(temp / VOCAB_GRAPH)))
                if graph_rows > len(table.words):  # the live index grew after the table was copied
                    (temp / VOCAB_GRAPH).unlink()
                    graph_rows = None
                else:
                    sidecars[VOCAB_GRAPH] = {
                        "bytes": (temp / VOCAB_GRAPH).stat().st_size,
                        "crc": fmt.tail_crc(temp / VOCAB_GRAPH),
                    }
        state = {
            "chitta": chitta.__version__,
            "created_ms": int(time.time() * 1000),
            "watermark": {
                "clock": clock,
                "positions": [list(p) for p in positions],
                "instances": [[k, v] for k, v in sorted(instances.items())],
            },
            "applied": view.core.applied,
            "unrouted": view.core.unrouted,
            "unrouted_types": None
            if view.core.unrouted_types is None
            else [[t, n] for t, n in sorted(view.core.unrouted_types.items())],
            "routed_types": sorted(view.core.routes),
            "organs": organ_states,
            "sidecars": sidecars,
        }
        if table is not None:  # state 5 (optional: absent = built at open)
            record: dict[str, Any] = {
                "embedder": table.embedder,
                "dim": table.dim,
                "rows": len(table.words),
                "pending": len(table.pending),
            }
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
        records=view.core.applied,
        memories=len(view.core.memories),
        vectors=len(ids),
        bytes=total,
        seconds=time.perf_counter() - t0,
        instances=instances,
    )


@dataclass
class Loaded:
    """A checkpoint's state read and checked, ready to restore into fresh organs (each
    organ reads and checks its own sidecars as it restores)."""

    path: Path
    version: int
    state: dict[str, Any]
    vocab: VocabTable | None = None  # vocab.emb (state 5): the expansion lane's word table


def read(root: Path) -> Loaded | None:
    """The live checkpoint's state (checked and migrated) and word table. None when
    there is none; raises CorruptionError or UnsupportedFormat when it cannot be used."""
    path = store.current(root)
    if path is None:
        return None
    version, state = fmt.read_state(path / STATE)
    state = migrate(version, state)
    try:
        if not isinstance(state["organs"], dict) or not isinstance(state["sidecars"], dict):
            raise CorruptionError("the state's organs and sidecars are not maps")
        vocab = _read_vocab(path, state)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise CorruptionError(f"checkpoint {path.name}: {type(exc).__name__}: {exc}") from exc
    return Loaded(path, version, state, vocab)


def _read_vocab(path: Path, state: dict[str, Any]) -> VocabTable | None:
    """The word table of a state-5 checkpoint that has one, checked against the state's record
    of it (file, rows, pending words, dim); None when the state has none."""
    record = state.get("vocabulary")
    if record is None:
        return None
    want = state["sidecars"][VOCAB]
    if (want["bytes"], want["crc"]) != ((path / VOCAB).stat().st_size, fmt.tail_crc(path / VOCAB)):
        raise CorruptionError(f"{VOCAB} is not the one the state file was written with")
    table = read_vocab(path / VOCAB)
    if (len(table.words), len(table.pending), table.dim) != (
        record["rows"],
        record["pending"],
        record["dim"],
    ):
        raise CorruptionError(f"{VOCAB} does not match the state's record of it")
    if not isinstance(record["embedder"], str):
        raise CorruptionError(f"{VOCAB}: the recorded embedder is not a name")
    table.embedder = record["embedder"]
    graph_rows = record.get("graph_rows")
    if (
        graph_rows is not None
    ):  # the word graph over the first rows (vocab.hnsw), checked against them
        want = state["sidecars"][VOCAB_GRAPH]
        if (want["bytes"], want["crc"]) != (
            (path / VOCAB_GRAPH).stat().st_size,
            fmt.tail_crc(path / VOCAB_GRAPH),
        ):
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
    into the new one (chitta/field/checkpoint/migrate_memories.py). It also added the
    recall index's optional ``columns`` (ids, event times, label codes and tables
    of the live memories, packed; without them restore builds the columns from the
    live puts, as version 3 did) and wrote its ``staged`` ids in arrival order
    (version 3: any order; they then arrive in the memories' order): nothing to
    change there."""
    from chitta.field.checkpoint.migrate_memories import memories_v3_to_v4

    state["organs"]["memories"] = memories_v3_to_v4(state["organs"]["memories"])
    return state


def _v4_to_v5(state: dict[str, Any]) -> dict[str, Any]:
    """Version 5 added the optional ``vocabulary`` record and its sidecar ``vocab.emb`` (the
    expansion lane's word table): absent, so a field that expands builds the table at open,
    as version 4 did at its first recall. Nothing to change."""
    return state


def _v5_to_v6(state: dict[str, Any]) -> dict[str, Any]:
    """Version 6 added the knowledge organ. A version-5 writer counted its op types
    (AddTriplet, InvalidateTriplet) as unrouted: with none unrouted, the organ starts
    empty; otherwise it stays absent and the field replays its log."""
    if int(state["unrouted"]) == 0:
        state["organs"].setdefault("knowledge", {"triplets": 0, "entities": 0, "ignored": 0})
    return state


# The op types the organs of state version 6 routed (memories, graph, settings, recall_index,
# encoder, knowledge): PutPayload 0, UpdateState 1, DeleteMemory 2, AddAssocEdge 3,
# AddTriplet 5, InvalidateTriplet 6, UpdateSparseCode 12, DemoteMemory 13,
# UpdateMemoryContent 24, UpdateSparseEncoder 65, ConfigureField 66.
_V6_ROUTED = (0, 1, 2, 3, 5, 6, 12, 13, 24, 65, 66)


def _v6_to_v7(state: dict[str, Any]) -> dict[str, Any]:
    """Version 7 records which op types the writer's organs routed and how many records of
    each other type it counted as unrouted, so an organ added later can start empty from it
    (``organ_may_start_empty``). A version-6 state knows only the total: with none unrouted
    every type's count is zero; otherwise the per-type counts are unknown (``None``)."""
    state["routed_types"] = list(_V6_ROUTED)
    state["unrouted_types"] = [] if int(state["unrouted"]) == 0 else None
    return state


def _v7_to_v8(state: dict[str, Any]) -> dict[str, Any]:
    """Version 8 no longer writes ``units.emb`` (the unit rows are normalised from
    ``vectors.emb`` at open). A version-7 checkpoint's ``units.emb`` is read as before:
    nothing to change."""
    return state


def _v8_to_v9(state: dict[str, Any]) -> dict[str, Any]:
    """Version 9 writes the dense graph in HNSW format 2.0 (its live vectors are
    references to the dense lane's unit rows); a version-8 graph (format 1.0, every
    vector stored) is read as before: nothing to change."""
    return state


def _v9_to_v10(state: dict[str, Any]) -> dict[str, Any]:
    """Version 10 may store the vectors as references into the log (``vectors.ref`` and the
    memories organ's ``vector_refs``); a version-9 checkpoint's ``vectors.emb`` is read as
    before: nothing to change."""
    return state


_MIGRATIONS = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
    8: _v8_to_v9,
    9: _v9_to_v10,
}  # version -> step to version + 1


def migrate(version: int, state: dict[str, Any]) -> dict[str, Any]:
    """Bring a state map of an older format version to the current one, one step
    per version."""
    try:
        while version < fmt.STATE_VERSION:
            state = _MIGRATIONS[version](state)
            version += 1
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptionError(
            f"checkpoint state version {version} could not be migrated: {exc}"
        ) from exc
    if version != fmt.STATE_VERSION:
        raise UnsupportedFormat(f"no migration from checkpoint state version {version}")
    return state


def organ_may_start_empty(state: dict[str, Any], handles: Iterable[int]) -> bool:
    """Whether an organ the checkpoint holds no state for can start empty from it: true when
    the checkpoint's writer had no organ for any of the organ's op types and counted no
    record of any of them before the watermark. Otherwise the field replays the log."""
    counts = state["unrouted_types"]
    if counts is None:
        return False
    seen = {int(t) for t, n in counts if int(n) > 0}
    routed = {int(t) for t in state["routed_types"]}
    return not any(int(t) in routed or int(t) in seen for t in handles)


def restore(field: FieldCore, loaded: Loaded) -> None:
    """Fill ``field``'s fresh organs from ``loaded`` through the organ contract, in
    registry order, and seed its log positions. Raises on anything malformed (an
    organ the checkpoint has no state for included); the caller then discards the organs."""
    content.check(loaded.state)  # intact bytes are not enough: the content must fit the log
    organs = loaded.state["organs"]
    mark = loaded.state["watermark"]
    ctx = RestoreFiles(loaded.path, loaded.version, loaded.state["sidecars"])
    ctx.shared["root"] = field.path  # state 10: the vectors are read back from the log
    ctx.shared["watermark"] = mark["positions"]
    for organ in field.organs:
        if organ.name not in organs:
            if organ_may_start_empty(loaded.state, organ.handles):
                continue  # none of its op types came before the watermark: it stays empty
            raise CorruptionError(
                f"the checkpoint has no state for organ {organ.name!r} (written before it"
                " existed, after records of its op types)"
            )
        try:
            organ.restore(organs[organ.name], ctx)
        except OSError as exc:  # a sidecar missing or unreadable
            raise CorruptionError(
                f"checkpoint {loaded.path.name}, organ {organ.name}: {exc}"
            ) from exc
    field.vocab_saved = (
        loaded.vocab
    )  # adopted by chitta.recall.expand.attach once the embedder is known
    field.applied = int(loaded.state["applied"])
    field.unrouted = int(loaded.state["unrouted"])
    counts = loaded.state["unrouted_types"]  # None: not known per type (a state-6 checkpoint)
    dropped = {int(t) for t in loaded.state["routed_types"]} - set(field.routes)
    # Records an organ routed then, and none now, were not counted: per-type counts unknown.
    field.unrouted_types = (
        None if counts is None or dropped else {int(t): int(n) for t, n in counts}
    )
    positions = [(str(n), int(o), int(s), bool(h), bool(d)) for n, o, s, h, d in mark["positions"]]
    field.log.seed_positions(positions, int(mark["clock"]))


def try_load(field: FieldCore) -> Loaded | None:
    """Read the live checkpoint of ``field``'s root; warn (CheckpointIgnored) and
    return None when it exists but cannot be used."""
    try:
        return read(field.path)
    except ChittaError as exc:
        warnings.warn(
            f"checkpoint ignored, the field is rebuilt from its log: {exc}",
            CheckpointIgnored,
            stacklevel=4,
        )
        return None
