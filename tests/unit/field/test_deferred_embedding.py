"""Embedding off the caller's thread (chitta/field/deferred.py, embed_worker.py).

Oracles: the hashing embedder called directly (what each vector must be), the
embedder's own record of its calls and threads (when and where texts were
embedded), and a second replay of the same log (determinism).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from _deferred_embedders import Gated

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument
from chitta.field import embed_worker

TEXTS = [f"note {i}: the {w} crossed the river at dawn" for i, w in enumerate("abcdefghij" * 3)]


def _vectors(f: chitta.Field) -> dict[int, np.ndarray]:
    out = {}
    for mid in f.ids():
        vec = f.core.index.vector(mid)
        assert vec is not None, f"memory {mid} has no vector"
        out[mid] = np.array(vec)
    return out


def test_remember_returns_before_the_model_runs(tmp_path):
    emb = Gated()
    emb.gate.clear()  # the model blocks: remember must not wait for it
    f = chitta.open(tmp_path / "f", embedder=emb)
    try:
        ids = [f.remember(t) for t in TEXTS[:5]]
        assert emb.calls == []
        assert f.stats().embed_backlog == 5
        assert f.core.index.vector(ids[0]) is None
        assert not f.wait_embedded(timeout=0.05)
        emb.gate.set()
        assert f.wait_embedded(timeout=30)
        assert f.stats().embed_backlog == 0
        assert emb.threads == {"chitta-embedder"}  # never the caller's thread
        assert sorted(emb.texts()) == sorted(TEXTS[:5])
        ref = HashingEmbedder(64).embed(TEXTS[:5])
        for mid, want in zip(ids, ref):
            assert np.allclose(f.core.index.vector(mid), want, atol=1e-6)
            assert f.core.index.code_version(mid) is not None  # its sparse code came with it
    finally:
        emb.gate.set()
        f.close()


def test_recall_before_and_after_embedding(tmp_path):
    emb = Gated()
    emb.gate.clear()
    f = chitta.open(tmp_path / "f", embedder=emb)
    try:
        for t in TEXTS[:10]:
            f.remember(t)
        target = f.remember("the quokka photographed on Rottnest island")
        # 1 ms later: no vector yet, the keyword lane finds it
        hits = f.recall("quokka", k=3, touch=False)
        assert hits and hits[0].id == target
        assert f.recall("quokka", k=3, lanes=["dense"], touch=False) == [] or all(
            h.id != target for h in f.recall("quokka", k=3, lanes=["dense"], touch=False)
        )
        emb.gate.set()
        assert f.wait_embedded(timeout=30)
        qvec = HashingEmbedder(64).embed(["the quokka photographed on Rottnest island"])[0]
        dense = f.recall(vector=qvec, k=1, lanes=["dense"], touch=False)
        assert dense and dense[0].id == target
    finally:
        emb.gate.set()
        f.close()


def test_replay_of_deferred_vectors_is_deterministic_and_never_embeds(tmp_path):
    root = tmp_path / "f"
    with chitta.open(root, embedder=Gated()) as f:
        ids = [f.remember(t) for t in TEXTS]
        f.remember("tagged one", tags=["x"], session="s1")  # the Python put path defers too
        assert f.wait_embedded(timeout=30)
        first = _vectors(f)
    runs = []
    for _ in range(2):
        emb = Gated()
        with chitta.open(root, embedder=emb, load_checkpoint=False) as g:
            assert set(emb.texts()) & {*TEXTS, "tagged one"} == set()  # replay ran no model
            vecs = _vectors(g)
            codes = {m: g.core.index.code_features(m) for m in g.ids()}
            runs.append((vecs, codes))
    (v1, c1), (v2, c2) = runs
    assert v1.keys() == v2.keys() == first.keys()
    for mid in v1:
        assert np.array_equal(v1[mid], v2[mid]) and np.array_equal(v1[mid], first[mid])
    assert c1 == c2
    ref = HashingEmbedder(64).embed(TEXTS)
    for mid, want in zip(ids, ref):
        assert np.allclose(v1[mid], want, atol=1e-6)


def test_close_finishes_the_backlog(tmp_path):
    root = tmp_path / "f"
    emb = Gated()
    emb.gate.clear()
    f = chitta.open(root, embedder=emb)
    for t in TEXTS[:8]:
        f.remember(t)
    threading.Timer(0.2, emb.gate.set).start()
    f.close()
    again = Gated()
    with chitta.open(root, embedder=again) as g:
        assert again.texts() == []  # nothing left to embed
        assert len(_vectors(g)) == 8


def test_one_background_thread_serves_every_handle(tmp_path):
    a, b = Gated(), Gated()
    with (
        chitta.open(tmp_path / "a", embedder=a) as fa,
        chitta.open(tmp_path / "b", embedder=b) as fb,
    ):
        assert embed_worker.served() >= 2
        fa.remember("alpha text one")
        fb.remember("beta text two")
        assert fa.wait_embedded(timeout=30) and fb.wait_embedded(timeout=30)
        names = [t.name for t in threading.enumerate() if t.name == "chitta-embedder"]
        assert names == ["chitta-embedder"]
        assert a.threads == b.threads == {"chitta-embedder"}


def test_wait_embedded_bad_timeout(tmp_path):
    with chitta.open(tmp_path / "f", embedder=Gated()) as f:
        for bad in (-1, "1", True):
            with pytest.raises(InvalidArgument):
                f.wait_embedded(timeout=bad)  # type: ignore[arg-type]
    with chitta.open(tmp_path / "g", embedder=None) as f:
        assert f.wait_embedded() is True  # nothing ever waits without an embedder
