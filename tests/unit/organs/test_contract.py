"""The generic organ contract test: every registered organ, checked the same way.

For each organ of the registry (the built-in ones and the toy ``SessionTally``,
registered here with its one line), over a log that exercises every op type the
organ handles:
- two replays of the same log give identical state (the organ's snapshot map and
  the bytes of every sidecar it writes);
- a checkpoint, then more writes, then a reopen from the checkpoint equals a full
  replay of the log (the same snapshot map, stats and sidecar names);
- a malformed payload of each of its op types is a CorruptionError located at
  segment and offset under strict replay, and is skipped and reported under
  salvage (the organ's state then equals the state without that record);
- a payload from a newer writer with extra trailing fields is applied as if the
  extra fields were absent.
A new organ gets these checks by registering (the sample ops come from
``_op_samples.SAMPLES``, one per op type, plus the public-API workload).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from _op_samples import SAMPLES
from toy_organ import SessionTally

import chitta
from chitta import _core, ops
from chitta.encode import HashingEmbedder
from chitta.errors import CorruptionError
from chitta.field.checkpoint.snapshot import SnapshotFiles
from chitta.organs import registry

SAMPLE_BY_TYPE = {int(op.op_type): op for op in SAMPLES}
# The PutPayload sample's id is 2**64-1, the indexes' reserved padding id: its own test
# (test_reserved_id_is_located_corruption) covers that; here it meets the other memories.
SAMPLE_BY_TYPE[int(ops.OpType.PutPayload)] = msgspec.structs.replace(SAMPLES[0], id=(7 << 32) | 1)
# The ConfigureField sample records another embedder, which a writer would then refuse to mix with.
SAMPLE_BY_TYPE[int(ops.OpType.ConfigureField)] = ops.ConfigureField(
    key="dense_index", value="hnsw", at_ms=1
)


@pytest.fixture(autouse=True)
def _toy_registered() -> Iterator[None]:
    registry.register(SessionTally)  # the toy organ's one registry line
    yield
    registry.unregister(SessionTally)


registry.register(SessionTally)
FACTORIES = {f().name: f for f in registry.factories()}  # every organ registered at collection
registry.unregister(SessionTally)
ORGANS = list(FACTORIES)


def _open(root: Path, **kw: Any) -> chitta.Field:
    """A writer (hashing vectors, so the dense organs get work), or with
    ``read_only=True`` a view that embeds nothing (the samples reconfigure the embedder)."""
    return chitta.open(
        root, embedder=None if kw.get("read_only") else HashingEmbedder(dim=64), **kw
    )


def _raw_append(root: Path, records: list[tuple[int, bytes]]) -> None:
    """Append records as another writer instance would, bypassing Field's checks."""
    log = _core.SegmentLog(
        str(root),
        instance_id=0,
        durability="flush",
        segment_bytes=256 << 20,
        create=False,
        read_only=False,
        salvage=False,
    )
    try:
        for code, payload in records:
            log.append(code, payload)
    finally:
        log.close()


def _workload(root: Path, seed: int) -> None:
    """Public-API writes that reach every built-in organ, then one sample op of every
    op type any registered organ handles (as another writer's records)."""
    with _open(root) as f:
        ids = [
            f.remember(
                f"note {seed} {i} about the build cache and port {8000 + i}", tags=[f"t{i % 3}"]
            )
            for i in range(24)
        ]
        f.update(ids[0], text="the build cache lives in ~/.cache/chitta", confidence=0.7)
        f.forget(ids[1])
        f.link(ids[2], ids[3], "Supports")
        f.link(ids[4], ids[5], "Contradicts", weight=0.5)
        f.set_dense_index("exact")
        f.learn_encoder(max_vectors=64)
        f.call("session_note", session="s-a", event="register")
        f.call("session_note", session="s-a", event="deregister")
        f.remember_many([f"batched {seed} {i}" for i in range(5)])
        f.remember_many(["Jeff lives in Paris.", "Jeff moved to Berlin."])  # extracted triplets
        f.call("themes_cluster", max_members=4)  # themes created, split, merged
        _curated_workload(f, seed)
    handled = {int(t) for name in ORGANS for t in _organ(name).handles}
    _raw_append(
        root,
        [
            (code, ops.encode(SAMPLE_BY_TYPE[code]))
            for code in sorted(handled)
            if code in SAMPLE_BY_TYPE and code != int(ops.OpType.UpdateSparseEncoder)
        ],
    )


def _curated_workload(f: chitta.Field, seed: int) -> None:
    """The curated organ's events: vocabulary, filings, a dispute and its end, a
    supersede, a pin, a capture left open."""
    f.call("vocabulary_declare", path="build", descriptor="how the project builds")
    f.call("vocabulary_declare", path="build/cache", descriptor="the build cache")
    f.call("vocabulary_amend", path="build/cache", descriptor="the build cache and ccache")
    a = f.call("memory_remember", body=f"ccache dir {seed}", paths=["build/cache"])["fact"]
    b = f.call("memory_remember", body=f"no ccache {seed}", paths=["build/cache"], disputes=a)
    f.call("memory_resolve", fact=b["fact"], other=a, winner=a)
    f.call("memory_supersede", fact=a, body=f"ccache dir is ~/.ccache {seed}")
    f.call("memory_pin", task=f"t{seed}", paths=["build/cache"])


def _organ(name: str) -> Any:
    return FACTORIES[name]()


def _state(field: chitta.Field, name: str, where: Path) -> tuple[Any, dict[str, bytes]]:
    """An organ's snapshot map and its sidecars' bytes, written into ``where``."""
    where.mkdir(parents=True)
    ctx = SnapshotFiles(where)
    for (
        organ
    ) in field.core.organs:  # in registry order: later organs read what earlier ones published
        state = organ.snapshot(ctx)
        if organ.name == name:
            break
    files = {p.name: p.read_bytes() for p in sorted(where.iterdir())}
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state)), files


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    registry.register(SessionTally)
    try:
        root = tmp_path_factory.mktemp("contract") / "f"
        _workload(root, seed=1)
    finally:
        registry.unregister(SessionTally)
    return root


@pytest.mark.parametrize("name", ORGANS)
def test_two_replays_give_identical_state(built: Path, tmp_path: Path, name: str) -> None:
    with (
        _open(built, read_only=True, load_checkpoint=False) as a,
        _open(built, read_only=True, load_checkpoint=False) as b,
    ):
        assert a.organ(name) is not b.organ(name)
        assert _state(a, name, tmp_path / "a") == _state(b, name, tmp_path / "b")


@pytest.mark.parametrize("name", ORGANS)
def test_checkpoint_then_reopen_equals_full_replay(tmp_path: Path, name: str) -> None:
    root = tmp_path / "f"
    _workload(root, seed=2)
    with _open(root) as f:
        f.checkpoint()
        f.remember("written after the checkpoint")
        f.call("session_note", session="s-b", event="register")
    with (
        _open(root, read_only=True) as warm,
        _open(root, read_only=True, load_checkpoint=False) as cold,
    ):
        assert warm.checkpoint_loaded is not None and cold.checkpoint_loaded is None
        (state_w, files_w), (state_c, files_c) = (
            _state(warm, name, tmp_path / "warm"),
            _state(cold, name, tmp_path / "cold"),
        )
        assert state_w == state_c and warm.organ(name).stats() == cold.organ(name).stats()
        # Native index files may lay out the same content differently after a restore
        # (bm25.idx keeps restored and new documents in separate blocks): the names must
        # match; what the indexes answer is compared by tests/unit/field/checkpoint/.
        assert files_w.keys() == files_c.keys()


def _malformed(code: int) -> list[bytes]:
    """Payloads of op type ``code`` that must not decode: not msgpack, the wrong
    shape, and the right shape with a field of the wrong type."""
    good = msgspec.msgpack.decode(ops.encode(SAMPLE_BY_TYPE[code]))
    wrong_type = list(good)
    wrong_type[0] = {"not": "this"}
    return [
        b"\xc1",
        msgspec.msgpack.encode("a string, not an array"),
        msgspec.msgpack.encode(wrong_type),
    ]


HANDLED = sorted(
    {(name, int(t)) for name in ORGANS for t in _organ(name).handles if int(t) in SAMPLE_BY_TYPE}
)


@pytest.mark.parametrize(("name", "code"), HANDLED)
def test_a_malformed_payload_is_located_corruption_strict_and_skipped_under_salvage(
    tmp_path: Path, name: str, code: int
) -> None:
    root = tmp_path / "f"
    with _open(root) as f:
        f.remember("before the damage")
    with _open(root, read_only=True) as clean:
        expected = _state(clean, name, tmp_path / "clean")
    bad = _malformed(code)
    _raw_append(root, [(code, payload) for payload in bad])
    with pytest.raises(CorruptionError) as info:
        _open(root, read_only=True)
    assert getattr(info.value, "segment", None) and isinstance(
        getattr(info.value, "offset", None), int
    )
    with _open(root, read_only=True, salvage=True) as salvaged:
        assert len(salvaged.salvaged) == len(bad)
        assert {d["kind"] for d in salvaged.salvaged} == {"CorruptionError"}
        assert _state(salvaged, name, tmp_path / "salvaged") == expected


@pytest.mark.parametrize(("name", "code"), HANDLED)
def test_unknown_trailing_fields_from_a_newer_writer_are_ignored(
    tmp_path: Path, name: str, code: int
) -> None:
    sample = SAMPLE_BY_TYPE[code]
    plain, newer = tmp_path / "plain", tmp_path / "newer"
    with _open(plain) as f:
        f.remember("a memory for the sample ops to meet")
    shutil.copytree(plain, newer)  # the same base log, byte for byte
    fields = msgspec.msgpack.decode(ops.encode(sample))
    _raw_append(plain, [(code, ops.encode(sample))])
    _raw_append(newer, [(code, msgspec.msgpack.encode([*fields, "from a newer writer", {"x": 1}]))])
    with _open(plain, read_only=True) as a, _open(newer, read_only=True) as b:
        state_a, files_a = _state(a, name, tmp_path / "a")
        state_b, files_b = _state(b, name, tmp_path / "b")
    assert state_a == state_b and files_a.keys() == files_b.keys()


def test_the_toy_organ_answers_through_python(tmp_path: Path) -> None:
    with _open(tmp_path / "f") as f:
        assert f.call("session_tally", session="s") == {"session": "s", "events": {}, "total": 0}
        f.call("session_note", session="s", event="register")
        f.call("session_note", session="s", event="message_ack")
        assert f.call("session_tally", session="s")["events"] == {"message_ack": 1, "register": 1}
        with pytest.raises(chitta.InvalidArgument, match="session"):
            f.call("session_tally")
        with pytest.raises(chitta.InvalidArgument, match="one of"):
            f.call("session_note", session="s", event="exploded")
        with pytest.raises(chitta.InvalidArgument, match="no operation named"):
            f.call("no_such_operation")
    with _open(tmp_path / "f", read_only=True) as again:  # replayed from the log
        assert again.call("session_tally", session="s")["total"] == 2
        with pytest.raises(chitta.InvalidArgument, match="read_only"):
            again.call("session_note", session="s")


def test_reserved_id_is_located_corruption(tmp_path: Path) -> None:
    """A put with id 2**64-1 (the indexes' padding id) from another writer: strict open
    refuses it at its segment and offset; salvage skips it and the indexes never see it."""
    root = tmp_path / "f"
    with _open(root) as f:
        f.remember("an ordinary memory")
    pad = msgspec.structs.replace(SAMPLES[0], id=ops.RESERVED_ID, embedding=None)
    with pytest.raises(chitta.InvalidArgument, match="reserved"):
        ops.validate(pad)
    _raw_append(root, [(int(ops.OpType.PutPayload), ops.encode(pad))])
    with pytest.raises(CorruptionError, match="reserved") as info:
        _open(root, read_only=True)
    assert getattr(info.value, "offset", None) is not None
    with chitta.open(root, embedder=None, salvage=True) as salvaged:
        assert len(salvaged) == 1 and [d["kind"] for d in salvaged.salvaged] == ["CorruptionError"]
        hits = salvaged.recall("ordinary memory", k=5, touch=False)  # the keyword index flushes
        assert [h.text for h in hits] == ["an ordinary memory"]
