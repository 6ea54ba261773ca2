"""Where the memories organ cannot keep replayed vectors as references into the log
(D-088: a state-9 base matrix), replay decodes put runs' vectors straight into its
matrix (``MemoriesOrgan.vector_sink``): a field replayed that way holds exactly what the
same field replayed without it holds (and what the default replay holds), one matrix row
per vector, with duplicate puts (first wins) and per-op vector updates between the runs;
a replay that fails gives the rows it claimed back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta import _core, ops
from chitta.errors import CorruptionError
from chitta.organs.memories import MemoriesOrgan

DIM = 12
INST = 5


def _vec(rng: np.random.Generator) -> bytes:
    return rng.standard_normal(DIM).astype("<f4").tobytes()


def _write_raw(root: Path) -> int:
    """Batches and plain runs of puts, a duplicate id (first wins), vector updates
    between runs, a put without a vector. Returns how many memories there are."""
    rng = np.random.default_rng(1)
    log = _core.SegmentLog(str(root), instance_id=INST, durability="buffered")
    mid = iter(range(1, 10**6))

    def put(**kw) -> ops.PutPayload:
        return ops.PutPayload(id=(INST << 32) | next(mid), text=f"memory {kw.pop('n', 0)}", **kw)

    first = [put(n=i, embedding=_vec(rng)) for i in range(40)]
    dup = ops.PutPayload(id=first[3].id, text="a later put of the same id", embedding=_vec(rng))
    log.append(int(ops.OpType.Batch), ops.encode(ops.Batch.of(*first, dup)))
    for p in [put(n=100 + i, embedding=_vec(rng)) for i in range(30)] + [put(n=999)]:
        log.append(int(ops.OpType.PutPayload), ops.encode(p))
    for target in (first[0].id, first[7].id):
        upd = ops.UpdateMemoryContent(id=target, at_ms=5, embedding=_vec(rng))
        log.append(int(ops.OpType.UpdateMemoryContent), ops.encode(upd))
    log.append(
        int(ops.OpType.Batch),
        ops.encode(ops.Batch.of(*[put(n=200 + i, embedding=_vec(rng)) for i in range(25)])),
    )
    log.close()
    return 40 + 31 + 25


def _state(f: chitta.Field) -> dict[int, tuple]:
    return {
        m.id: (m.text, None if m.embedding is None else m.embedding.tobytes()) for m in f.memories()
    }


def _copying(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay as where references are not possible: the sink path."""
    monkeypatch.setattr(MemoriesOrgan, "references_replay", lambda self: False)


def test_sink_changes_nothing_but_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    n = _write_raw(root)
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as d:
        default = _state(d)  # references where a run is long enough, copies otherwise
        default_hits = [h.id for h in d.recall(vector=np.ones(DIM, np.float32), k=20, touch=False)]
    _copying(monkeypatch)
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as f:
        with_sink = _state(f)
        s = f.core.memories._s
        vectors = sum(1 for _, e in with_sink.values() if e is not None)
        # One row per vector put (the ignored duplicate's included: claimed, never used), then one
        # per update: nothing was copied into the matrix twice.
        assert s.nvec == vectors + 1 + 2 and not s.claims and s.claimed == 0
        hits = [h.id for h in f.recall(vector=np.ones(DIM, np.float32), k=20, touch=False)]
    monkeypatch.delattr(MemoriesOrgan, "vector_sink")
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as g:
        assert g.core.vector_sink_organ is None
        assert _state(g) == with_sink
        assert [h.id for h in g.recall(vector=np.ones(DIM, np.float32), k=20, touch=False)] == hits
    assert default == with_sink and default_hits == hits
    assert len(with_sink) == n
    assert with_sink[(INST << 32) | 4][0] == "memory 3"  # the first put of an id wins


def test_a_failed_replay_gives_its_claims_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _copying(monkeypatch)
    root = tmp_path / "f"
    rng = np.random.default_rng(2)
    with chitta.open(root, embedder=None) as w:
        w.remember_many([{"text": f"old {i}", "embedding": _vec_array(rng)} for i in range(10)])
    reader = chitta.open(root, embedder=None, read_only=True)
    try:
        s = reader.core.memories._s
        before = (s.nvec, s.dim, len(reader))
        # A good run of puts with vectors (decoded into claimed rows), then a put
        # whose payload is not msgpack (complete, CRC-valid): the replay fails
        # after claiming, before applying anything.
        log = _core.SegmentLog(str(root), instance_id=INST, durability="buffered")
        for i in range(30):
            log.append(
                int(ops.OpType.PutPayload),
                ops.encode(
                    ops.PutPayload(id=(INST << 32) | (i + 1), text=f"new {i}", embedding=_vec(rng))
                ),
            )
        log.append(
            int(ops.OpType.DeleteMemory), ops.encode(ops.DeleteMemory(id=(INST << 32) | 1, at_ms=1))
        )
        log.append(int(ops.OpType.PutPayload), b"\xc1")
        log.close()
        with pytest.raises(CorruptionError):
            reader.refresh()
        assert (s.nvec, s.dim, len(reader)) == before and not s.claims and s.claimed == 0
    finally:
        reader.close()


def _vec_array(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(DIM).astype(np.float32)
