"""Randomised add/remove/search/compact sequences against the pure-Python PyModel."""

from __future__ import annotations

import numpy as np
import pytest
from posting_reference import PyModel

from chitta.errors import InvalidArgument, NotFound
from chitta.organs.index import PostingIndex

NF, ACTIVE = 40, 5


def check_search(index: PostingIndex, model: PyModel, rng: np.random.Generator) -> None:
    width = int(rng.integers(1, 9))
    q = rng.choice(NF, size=width, replace=False).astype(np.uint32)
    k = int(rng.integers(1, 40))
    allowed = None
    if rng.random() < 0.4 and model.rows:
        live = model.ids()
        pick = rng.choice(len(live), size=int(rng.integers(0, len(live) + 1)), replace=False)
        allowed = [live[i] for i in pick] + [10**12]  # plus an unknown id
    got_ids, got_counts = index.search(
        q, k, None if allowed is None else np.array(allowed, np.uint64)
    )
    want_ids, want_counts = model.search(q.tolist(), k, allowed)
    assert got_ids.tolist() == want_ids
    assert got_counts.tolist() == want_counts


@pytest.mark.parametrize("mode", ["auto", "touched", "dense"])
@pytest.mark.parametrize("seed", range(4))
def test_random_sequence_matches_model(seed: int, mode: str) -> None:
    rng = np.random.default_rng(seed)
    index = PostingIndex(n_features=NF, active=ACTIVE)
    index._set_count_mode(mode)
    model = PyModel(NF, ACTIVE)
    ever = 0
    for _step in range(250):
        op = rng.random()
        if op < 0.35:  # add a batch, sometimes re-using removed ids
            n = int(rng.integers(1, 6))
            gone = [i for i in range(ever) if i not in set(model.ids())]
            ids = []
            for _ in range(n):
                if gone and rng.random() < 0.3:
                    ids.append(gone.pop(int(rng.integers(len(gone)))))
                else:
                    ids.append(ever)
                    ever += 1
            feats = [rng.choice(NF, size=ACTIVE, replace=False).tolist() for _ in ids]
            acts = None
            if rng.random() < 0.7:
                acts = [(rng.integers(1, 5, size=ACTIVE) * 0.25).tolist() for _ in ids]
            index.add(
                np.array(ids, np.uint64),
                np.array(feats, np.uint32),
                None if acts is None else np.array(acts, np.float32),
            )
            model.add(ids, feats, acts)
        elif op < 0.55 and model.rows:  # remove a few live ids
            live = model.ids()
            pick = rng.choice(
                len(live), size=min(len(live), int(rng.integers(1, 4))), replace=False
            )
            ids = [live[i] for i in pick]
            index.remove(np.array(ids, np.uint64))
            model.remove(ids)
        elif op < 0.6:
            index.compact()
        elif op < 0.65:  # a rejected batch changes nothing
            with pytest.raises((NotFound, InvalidArgument)):
                if model.rows and rng.random() < 0.5:
                    index.remove(np.array([model.ids()[0], 10**12], np.uint64))
                else:
                    index.add(
                        np.array([ever, ever], np.uint64),
                        np.zeros((2, ACTIVE), np.uint32) + np.arange(ACTIVE, dtype=np.uint32),
                    )
        else:
            check_search(index, model, rng)
        assert len(index) == len(model.rows)
        assert index.ids().tolist() == model.ids()
    for _ in range(20):
        check_search(index, model, rng)
