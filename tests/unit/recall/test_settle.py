"""Directed co-recall coupling, settle() and attractor_settle() (chitta/recall/settle.py,
chitta/recall/attractor.py, chitta/organs/graph_ops.py).

settle()'s oracle is an independent numpy solve: Newton's method on
``a = sigmoid(g (W^T a - theta))`` over the nodes reachable from the clamped seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta.encode.hashing import HashingEmbedder
from chitta.errors import InvalidArgument, NotFound
from chitta.recall import settle as s


def _field(tmp_path: Path, **kw: Any) -> chitta.Field:
    return chitta.open(tmp_path / "f", embedder=kw.pop("embedder", None), **kw)


def test_co_recall_couples_forward_fully_and_back_at_exactly_0_3(tmp_path: Path) -> None:
    with _field(tmp_path) as f:
        for t in ("alpha beta gamma", "alpha beta", "alpha", "unrelated words"):
            f.remember(t)
        hits = f.recall("alpha beta gamma", k=3)
        a, b, c = (h.id for h in hits)
        g: Any = f.organ("graph")
        for hi, lo in ((a, b), (a, c), (b, c)):
            assert g.weight(hi, lo, "CoRetrieved") == s.COUPLING == 0.1
            assert g.weight(lo, hi, "CoRetrieved") == s.COUPLING * 0.3
            assert g.weight(lo, hi, "CoRetrieved") / g.weight(hi, lo, "CoRetrieved") == (
                pytest.approx(0.3, abs=1e-15)
            )
        f.recall("alpha beta gamma", k=3)  # the same ranking again: both directions add up
        assert g.weight(a, b, "CoRetrieved") == 0.2
        assert g.weight(b, a, "CoRetrieved") == 2 * (0.1 * 0.3)
        want = {(x, y): g.weight(x, y, "CoRetrieved") for x in (a, b, c) for y in (a, b, c)}
        applied = f.core.applied
    # replay applies the logged weights (nothing re-derived): equal after a plain reopen and
    # after a checkpoint
    for checkpoint in (False, True):
        with _field(tmp_path) as f:
            g = f.organ("graph")
            assert {k: g.weight(*k, "CoRetrieved") for k in want} == want
            if checkpoint:
                f.checkpoint()
            else:
                assert f.core.applied == applied
    with _field(tmp_path) as f:
        g = f.organ("graph")
        assert {k: g.weight(*k, "CoRetrieved") for k in want} == want


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def newton_fixed_point(w: np.ndarray, seeds: list[int], gain: float, theta: float) -> np.ndarray:
    """Activations (NaN where unreachable) solving a = sigmoid(gain (W^T a - theta))."""
    n = len(w)
    reach = np.zeros(n, bool)
    reach[seeds] = True
    for _ in range(n):
        reach |= (w[reach] > 0).any(axis=0)
    free = [i for i in range(n) if reach[i] and i not in seeds]
    a = np.zeros(n)
    a[seeds] = 1.0
    x = np.full(len(free), 0.5)
    for _ in range(100):
        a[free] = x
        h = w[:, free].T @ (a * reach)
        f = x - _sigmoid(gain * (h - theta))
        sg = _sigmoid(gain * (h - theta))
        jac = np.eye(len(free)) - (gain * sg * (1 - sg))[:, None] * w[np.ix_(free, free)].T
        x = x - np.linalg.solve(jac, f)
    a[free] = x
    assert np.abs(x - _sigmoid(gain * (w[:, free].T @ (a * reach) - theta))).max() < 1e-13
    return np.where(reach, a, np.nan)


def _network(f: chitta.Field, w: np.ndarray) -> list[int]:
    ids = [f.remember(f"node {i}") for i in range(len(w))]
    for i, j in zip(*np.nonzero(w)):
        f.link(ids[i], ids[j], "RelatedTo", float(w[i, j]))
    return ids


def test_settle_reaches_the_numpy_fixed_point(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 9
    w = np.where(rng.random((n, n)) < 0.3, rng.random((n, n)) * 0.6, 0.0)
    np.fill_diagonal(w, 0.0)
    w[:, 8] = 0.0  # node 8 is unreachable
    w[8, 2] = 0.4
    w[0, 3] = 0.5  # the seed reaches something
    gain, theta = 4.0, 0.2
    want = newton_fixed_point(w, [0, 1], gain, theta)
    with _field(tmp_path) as f:
        ids = _network(f, w)
        got = f.call("settle", seeds=[ids[0], ids[1]], steps=100, gain=gain, threshold=theta,
                     min_activation=0.0)  # fmt: skip
        acts = {p["id"]: p["activation"] for p in got["pattern"]}
        assert got["steps"] < 100  # converged
        assert got["discovered"] == int(np.sum(~np.isnan(want))) - 2
        for i in range(2, n):
            if np.isnan(want[i]):
                assert ids[i] not in acts
            else:
                assert acts[ids[i]] == pytest.approx(want[i], abs=1e-9)
        # the completed pattern at the default cut: exactly the nodes at >= 0.5, strongest first
        cut = f.call("settle", seeds=[ids[0], ids[1]], steps=100, gain=gain, threshold=theta)
        on = [p["id"] for p in cut["pattern"]]
        assert set(on) == {ids[i] for i in range(2, n) if want[i] >= 0.5}
        assert [acts[i] for i in on] == sorted((acts[i] for i in on), reverse=True)


def test_settle_discovers_one_hop_per_step(tmp_path: Path) -> None:
    w = np.zeros((5, 5))
    w[0, 1] = w[1, 2] = w[2, 3] = w[3, 4] = 0.5  # a chain
    with _field(tmp_path) as f:
        ids = _network(f, w)
        for steps in (1, 2, 3):
            got = f.call("settle", seeds=[ids[0]], steps=steps, min_activation=0.0)
            assert got["discovered"] == steps
            assert {p["id"] for p in got["pattern"]} == set(ids[1 : steps + 1])
        one = f.call("settle", seeds=[ids[0]], steps=1, min_activation=0.0)["pattern"]
        # after one update node 1 has seen only the clamped seed
        assert one[0]["activation"] == pytest.approx(_sigmoid(np.array(10 * (0.5 - 0.1))).item())


def test_settle_and_attractor_bad_input_change_nothing(tmp_path: Path) -> None:
    with _field(tmp_path) as f:
        ids = _network(f, np.array([[0, 0.5], [0, 0]]))
        before = f.core.applied
        bad: list[tuple[type[Exception], dict[str, Any]]] = [
            (InvalidArgument, {"seeds": []}),
            (InvalidArgument, {"seeds": ["x1"]}),
            (InvalidArgument, {"seeds": [ids[0]], "steps": 0}),
            (InvalidArgument, {"seeds": [ids[0]], "steps": 101}),
            (InvalidArgument, {"seeds": [ids[0]], "gain": float("nan")}),
            (InvalidArgument, {"seeds": [ids[0]], "min_activation": 2}),
            (NotFound, {"seeds": [ids[0] + 99]}),
        ]
        for err, args in bad:
            with pytest.raises(err):
                f.call("settle", **args)
        f.forget(ids[1])
        before = f.core.applied
        with pytest.raises(NotFound, match="forgotten"):
            f.call("settle", seeds=[ids[1]])
        assert f.call("settle", seeds=[ids[0]])["pattern"] == []  # a forgotten memory is skipped
        for args in ({}, {"code": [1], "query": "x"}, {"code": []}, {"code": [1], "steps": 2},
                     {"code": [1], "steps": 6}, {"code": [-1]}, {"query": "no embedder here"}):  # fmt: skip
            with pytest.raises(InvalidArgument):
                f.call("attractor_settle", **args)
        assert f.core.applied == before


def test_attractor_settle_recovers_a_stored_code(tmp_path: Path) -> None:
    texts = [f"topic {w} with details {w}{w} and more {w}s" for w in
             ("apple", "river", "engine", "violin", "garden", "planet", "copper", "winter")]  # fmt: skip
    with _field(tmp_path, embedder=HashingEmbedder()) as f:
        ids = [f.remember(t) for t in texts]
        f.wait_embedded() if hasattr(f, "wait_embedded") else None
        index: Any = f.core.index
        codes = [list(index.code_features(m)) for m in ids]
        assert all(codes)
        for mid, code in zip(ids, codes):
            got = f.call("attractor_settle", code=code, steps=3, k=3)
            assert got["ids"][0] == mid and got["steps"] == 3
        rng = np.random.default_rng(0)
        top = f.core.encoder_organ.encoder.n_features
        noisy = codes[2][: len(codes[2]) // 2] + [int(x) for x in rng.integers(0, top, 32)]
        got = f.call("attractor_settle", code=noisy, steps=5, k=3)
        assert got["ids"][0] == ids[2] and len(got["code"]) <= len(set(noisy))
        by_text = f.call("attractor_settle", query=texts[5], k=1)
        assert by_text["ids"] == [ids[5]]
