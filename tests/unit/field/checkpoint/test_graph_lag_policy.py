"""A checkpoint is due again while the saved dense graph lacks too many vectors (a
checkpoint inserts only ~2 s of them): the daemon's maintenance and `chitta checkpoint
--if-needed` keep checkpointing, with nothing new appended, until the graph lacks at most
``graph_lag``. Oracle: the graph a handle opened from the checkpoint holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.field.checkpoint import CheckpointPolicy, store
from chitta.field.checkpoint.policy import saved_graph_lacks
from chitta.field.checkpoint.run import write_checkpoint
from chitta.organs import dense_ann, recall_index_dense
from chitta.server.maintenance import Maintainer

N, DIM = 400, 32
NEVER = CheckpointPolicy(records=10**9, log_bytes=1 << 60, graph_lag=40)  # only the graph lag


@pytest.fixture
def small_graph_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each checkpoint inserts one chunk of 128 vectors (a 0 s budget), from 60 vectors on."""
    monkeypatch.setattr(recall_index_dense, "AUTO_ANN_MIN", 60)
    monkeypatch.setattr(recall_index_dense, "AUTO_BUILD_SECONDS", 0.0)
    monkeypatch.setattr(dense_ann, "AUTO_BUILD_CHUNK", 128)
    monkeypatch.setattr(recall_index_dense, "AUTO_PENDING_EXACT", 40)


def _field(root: Path) -> list[int]:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((N, DIM)).astype(np.float32)
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many([{"text": f"m{i}", "embedding": v} for i, v in enumerate(vecs)])
        f.checkpoint()  # 128 of the 400 in its graph
    return ids


def _in_saved_graph(root: Path) -> int:
    with chitta.open(root, embedder=None, read_only=True) as g:
        ann = g.core.index._ann
        assert ann is not None
        return len(ann.graph)


def test_the_policy_names_the_graph_lag_only_above_its_threshold() -> None:
    policy = CheckpointPolicy(graph_lag=100)
    assert policy.due(0, 0, None, None) is None  # no graph saved
    assert policy.due(0, 0, None, 100) is None
    reason = policy.due(0, 0, None, 101)
    assert reason is not None and "lacks 101 vectors" in reason
    assert CheckpointPolicy().graph_lag == dense_ann.AUTO_PENDING_EXACT
    with pytest.raises(InvalidArgument, match="graph_lag"):
        CheckpointPolicy(graph_lag=0)


def test_maintenance_checkpoints_until_the_saved_graph_is_near_whole(
    tmp_path: Path, small_graph_steps: None
) -> None:
    root = tmp_path / "f"
    _field(root)
    assert saved_graph_lacks(store.current(root)) == N - 128 == N - _in_saved_graph(root)
    with chitta.open(root, embedder=None) as f:
        maintainer = Maintainer(f, f.core.lock, 60.0, NEVER)
        seen = []
        for _ in range(5):
            result = maintainer.run_once()
            if result["checkpoint"] is None:
                break
            assert "dense graph lacks" in result["checkpoint"]["reason"]
            seen.append(saved_graph_lacks(store.current(root)))
    # 272 -> 144 -> 16: then 16 <= 40 and no checkpoint is due
    assert seen == [144, 16]
    assert maintainer.checkpoints == 2
    assert _in_saved_graph(root) == N - 16


def test_checkpoint_if_needed_follows_the_graph_lag(
    tmp_path: Path, small_graph_steps: None
) -> None:
    root = tmp_path / "f"
    _field(root)
    lacks = []
    while (info := write_checkpoint(root, policy=NEVER)) is not None:
        lacks.append(saved_graph_lacks(info.path))
    assert lacks == [144, 16]
    assert write_checkpoint(root, policy=NEVER) is None


def test_a_field_without_a_graph_is_never_due_for_it(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember_many(
            [{"text": f"m{i}", "embedding": np.ones(DIM, np.float32) * (i + 1)} for i in range(50)]
        )
        f.checkpoint()  # 50 vectors: under AUTO_ANN_MIN, no graph saved
    assert saved_graph_lacks(store.current(root)) is None
    assert write_checkpoint(root, policy=NEVER) is None
