"""The dense lane's graph search started on the search thread while BM25 runs
(``RecallSettings.concurrent_lanes``) gives the same hits as the two lanes one
after the other: the sequential path is the oracle (ids, scores, fused, lanes,
memories compared with ``==``), on the native and the Python tail, with
filters, several k, vectors written after the checkpoint's graph (pending,
stale) and fields that scan exactly (no graph)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta.organs import recall_index_dense
from chitta.organs.index._hnsw_tiered import TieredHNSW
from chitta.recall.hit import Hit

T0 = 1_780_000_000.0
WORDS = [f"w{i}" for i in range(40)]


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _build(root: Path, n: int, seed: int, checkpoint: bool) -> None:
    rng = np.random.default_rng(seed)
    with chitta.open(root, embedder="hashing", clock=Clock(T0), instance_id=0x5EED) as f:
        f.remember_many(
            [
                {
                    "text": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))),
                    "realm": str(rng.choice(["a", "b"])),
                    "session": str(rng.choice(["s1", "s2", "s3"])),
                    "at": T0 - float(rng.random() * 1e7),
                }
                for _ in range(n)
            ]
        )
        if checkpoint:
            f.checkpoint()


def _recall(f: chitta.Field, concurrent: bool, native: bool, **kw: Any) -> list[Hit]:
    engine = f.core.engine
    saved = engine.settings
    engine.settings = dataclasses.replace(saved, concurrent_lanes=concurrent)
    engine.native = native
    try:
        return f.recall(**kw, touch=False)
    finally:
        engine.settings = saved
        engine.native = True


def _assert_same(a: list[Hit], b: list[Hit]) -> None:
    assert [h.id for h in a] == [h.id for h in b]
    for x, y in zip(a, b):
        assert x.score == y.score and x.fused == y.fused  # bit for bit
        assert x.lanes == y.lanes and x.memory == y.memory and x.text == y.text


def _compare_all(f: chitta.Field, seed: int, queries: int = 40) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for i in range(queries):
        text = " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))
        kw: dict[str, Any] = {"query": text, "k": int(rng.choice([1, 5, 10, 60]))}
        if i % 4 == 1:
            kw["realm"] = "a"
        elif i % 4 == 2:
            kw["session"] = "s2"
        for native in (True, False):
            _assert_same(_recall(f, True, native, **kw), _recall(f, False, native, **kw))
            checked += 1
    return checked


@pytest.fixture()
def small_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 200)


def test_graph_field_same_hits_and_the_graph_search_is_started(
    tmp_path: Path, small_graph: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    _build(root, 700, seed=1, checkpoint=True)
    started: list[int] = []
    real = TieredHNSW.search_async

    def counting(self: TieredHNSW, *a: Any, **k: Any) -> Any:
        started.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(TieredHNSW, "search_async", counting)
    with chitta.open(root, embedder="hashing", clock=Clock(T0 + 10), read_only=True) as f:
        assert f.core.index.stats()["dense_path"] == "hnsw"
        assert _compare_all(f, seed=2) == 80
    assert len(started) >= 40  # every unfiltered hybrid recall started the graph search early


def test_pending_and_stale_vectors_beside_the_graph(tmp_path: Path, small_graph: None) -> None:
    root = tmp_path / "f"
    _build(root, 600, seed=3, checkpoint=True)
    with chitta.open(root, embedder="hashing", clock=Clock(T0 + 10)) as f:
        rng = np.random.default_rng(4)
        f.remember_many([{"text": " ".join(rng.choice(WORDS, 5)), "realm": "a"} for _ in range(30)])
        for mid in list(f.ids())[
            :10
        ]:  # a new vector for a graphed memory: its graph entry is stale
            f.update(mid, text=" ".join(rng.choice(WORDS, 4)))
        dense = f.core.index
        q = np.asarray(dense.recent_vectors(1)[0], np.float32)
        wait = dense.dense_start(q, 50, None)
        assert wait is not None
        a_ids, a_cos = wait()
        b_ids, b_cos = dense.dense(q, 50, None)
        assert a_ids.tolist() == b_ids.tolist() and a_cos.tobytes() == b_cos.tobytes()
        assert _compare_all(f, seed=5) == 80


def test_exact_scan_fields_take_the_plain_path(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root, 300, seed=6, checkpoint=False)  # no graph: the exact scan, nothing started early
    with chitta.open(root, embedder="hashing", clock=Clock(T0 + 10)) as f:
        q = np.asarray(f.core.index.recent_vectors(1)[0], np.float32)
        assert f.core.index.dense_start(q, 50, None) is None
        assert _compare_all(f, seed=7, queries=12) == 24


def test_async_search_equals_search_and_copies_its_inputs() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1500, 24)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    g = TieredHNSW(24, threshold=1000)
    g.add(np.arange(1, 1501, dtype=np.uint64), x)
    allowed = np.arange(1, 1501, 2, dtype=np.uint64)
    for i in range(30):
        q = x[i] + 0.1 * rng.standard_normal(24).astype(np.float32)
        for filt in (None, allowed):
            want = g.search(q, 10, allowed=filt)
            qq, ff = q.copy(), None if filt is None else filt.copy()
            pending = g.search_async(qq, 10, allowed=ff)
            qq[:] = 0  # the caller's arrays may change meanwhile
            if ff is not None:
                ff[:] = 2
            got = pending.wait()
            assert got[0].tolist() == want[0].tolist() and got[1].tobytes() == want[1].tobytes()
            assert pending.done and pending.wait()[0].tolist() == want[0].tolist()
    dropped = g.search_async(x[:3], 5)  # dropped unwaited: the handle waits for it
    del dropped


def test_async_search_errors_are_the_search_errors() -> None:
    g = TieredHNSW(8)
    g.add(np.arange(1, 101, dtype=np.uint64), np.eye(8, dtype=np.float32)[np.arange(100) % 8])
    with pytest.raises(chitta.errors.InvalidArgument):
        g.search_async(np.zeros(7, np.float32), 5)  # wrong width: raised at once, like search
    with pytest.raises(chitta.errors.InvalidArgument):
        g.search_async(np.ones(8, np.float32), 0)
    with pytest.raises(type(_error_of(g))):  # a zero vector: the search's own error, raised at wait
        g.search_async(np.zeros(8, np.float32), 5).wait()


def _error_of(g: TieredHNSW) -> Exception:
    try:
        g.search(np.zeros(8, np.float32), 5)
    except Exception as e:  # noqa: BLE001 - the oracle is whatever search raises
        return e
    raise AssertionError("search accepted a zero vector")
