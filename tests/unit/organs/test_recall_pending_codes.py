"""The pending sparse codes hand over every id's newest code, chunk by chunk (D-089).
Oracle: a plain dict replaying the same calls in order (a single code, a run's rows,
a forget), against ``drain`` and ``take``."""

from __future__ import annotations

import numpy as np
import pytest

from chitta.organs.recall_codes import PendingCodes

ACTIVE = 4


def _code(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray]:
    feats = tuple(int(x) for x in rng.choice(1000, ACTIVE, replace=False))
    return feats, rng.random(ACTIVE).astype(np.float32)


@pytest.mark.parametrize("seed", range(12))
def test_drain_gives_each_ids_newest_code_as_a_dict_replay_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pending = PendingCodes()
    model: dict[int, tuple[tuple[int, ...], bytes]] = {}
    for _ in range(60):
        kind = rng.integers(3)
        if kind == 0:  # one code
            mid = int(rng.integers(40))
            feats, acts = _code(rng)
            pending.set(mid, feats, acts.tobytes())
            model[mid] = (feats, acts.tobytes())
        elif kind == 1:  # a run (an id may repeat: its last row wins)
            n = int(rng.integers(1, 9))
            ids = rng.integers(40, size=n).astype(np.uint64)
            rows = [_code(rng) for _ in range(n)]
            feats = np.array([f for f, _ in rows], np.uint32)
            acts = np.array([a for _, a in rows], np.float32)
            pending.add_run(ids, feats, acts)
            for mid, f, a in zip(ids.tolist(), rows, acts):
                model[mid] = (f[0], a.tobytes())
        else:  # forgotten
            mid = int(rng.integers(40))
            pending.discard(mid)
            model.pop(mid, None)
    # a run of another width stays out of a take of ACTIVE features
    pending.add_run(
        np.array([99], np.uint64), np.zeros((1, 2), np.uint32), np.ones((1, 2), np.float32)
    )
    got: dict[int, tuple[tuple[int, ...], bytes]] = {}
    parts = list(pending.drain(ACTIVE))
    for ids, feats, acts in parts:
        for mid, f, a in zip(ids.tolist(), feats.tolist(), acts):
            assert mid not in got  # each id once
            got[mid] = (tuple(f), np.asarray(a, np.float32).tobytes())
    assert got == model
    assert not pending  # drained
    assert pending.take(ACTIVE)[0].size == 0


def test_take_is_the_drained_parts_in_order() -> None:
    rng = np.random.default_rng(3)
    build = []
    for b in range(3):
        ids = np.arange(b * 5, b * 5 + 5, dtype=np.uint64)
        feats = np.array([_code(rng)[0] for _ in range(5)], np.uint32)
        acts = rng.random((5, ACTIVE)).astype(np.float32)
        build.append((ids, feats, acts))
    one = _code(rng)

    def filled() -> PendingCodes:
        p = PendingCodes()
        for ids, feats, acts in build:
            p.add_run(ids, feats, acts)
        p.discard(7)
        p.set(100, one[0], one[1].tobytes())
        return p

    parts = list(filled().drain(ACTIVE))
    ids, feats, acts = filled().take(ACTIVE)
    assert ids.tolist() == [i for p in parts for i in p[0].tolist()]
    assert ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 100]
    assert np.array_equal(feats, np.concatenate([p[1] for p in parts]))
    assert np.array_equal(acts, np.concatenate([p[2] for p in parts]))
