"""An organ added after a checkpoint was written (a plugin, or a built-in organ of a newer
chitta): the checkpoint is used, with the organ empty, exactly when no record of the organ's
op types came before its watermark (FORMAT.md §8, D-041); otherwise the field replays the
log. The oracle is a full replay (``load_checkpoint=False``) with the organ registered."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toy_organ import SessionTally

import chitta
from chitta import ops
from chitta.errors import CheckpointIgnored
from chitta.ops import Op, OpType
from chitta.organs import OrganBase, RestoreContext, SnapshotContext, registry

GOLDEN_V6 = Path(__file__).resolve().parents[3] / "format" / "golden" / "checkpoint-v6"


class PutCount(OrganBase):
    """A late organ over an op type the built-in organs already route."""

    name = "put_count"
    handles = frozenset({OpType.PutPayload})

    def __init__(self) -> None:
        self.puts = 0

    def apply(self, op: Op) -> None:
        self.puts += 1

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {"puts": self.puts}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        self.puts = int(state["puts"])

    def stats(self) -> dict[str, Any]:
        return {"puts": self.puts}


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    yield
    registry.unregister(SessionTally)
    registry.unregister(PutCount)


def _event(f: chitta.Field, session: str, event: str = "register") -> None:
    f.core.commit(ops.SessionEvent(event=event, session=session, at_ms=f.core.now_ms()))


def _open_with(root: Path, factory: Any, *, checkpoint: bool = True) -> tuple[Any, str | None]:
    """The late organ's state and the checkpoint the field loaded, warnings as errors."""
    registry.register(factory)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with chitta.open(root, embedder=None, load_checkpoint=checkpoint) as f:
            organ = f.organ(factory.name)
            state = dict(organ.counts) if factory is SessionTally else organ.puts
            return state, f.checkpoint_loaded


def test_organ_whose_ops_never_came_starts_empty_from_the_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember("the build uses ninja")
        name = Path(f.checkpoint().path).name
    state, loaded = _open_with(root, SessionTally)
    assert (state, loaded) == ({}, name)
    registry.register(SessionTally)
    with chitta.open(root, embedder=None) as f:  # it works from there on, and checkpoints
        f.call("session_note", session="s", event="register")
        f.checkpoint()
    assert _open_with(root, SessionTally)[0] == _open_with(root, SessionTally, checkpoint=False)[0]


def test_organ_whose_ops_are_in_the_log_before_the_watermark_replays(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember("one")
        _event(f, "s-1")  # unrouted here: no organ for SessionEvent in this process
        _event(f, "s-1", "deregister")
        f.checkpoint()
    with pytest.raises(CheckpointIgnored, match="session_tally"):
        _open_with(root, SessionTally)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CheckpointIgnored)
        with chitta.open(root, embedder=None) as f:
            assert f.organ("session_tally").counts == {"s-1": {"register": 1, "deregister": 1}}
            assert f.checkpoint_loaded is None


def test_organ_over_an_op_type_others_route_replays(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember("one")
        f.remember("two")
        f.checkpoint()
    with pytest.raises(CheckpointIgnored, match="put_count"):
        _open_with(root, PutCount)
    assert _open_with(root, PutCount, checkpoint=False)[0] == 2


def test_records_an_unregistered_organ_routed_are_not_forgotten(tmp_path: Path) -> None:
    """A checkpoint holds the toy's state; a process without the toy reopens and writes a
    new checkpoint (without that state); the toy's records before it must not be lost."""
    root = tmp_path / "f"
    registry.register(SessionTally)
    with chitta.open(root, embedder=None) as f:
        f.call("session_note", session="s", event="register")
        f.checkpoint()
    registry.unregister(SessionTally)
    with chitta.open(root, embedder=None) as f:
        f.remember("written without the toy")
        f.checkpoint()
    with pytest.raises(CheckpointIgnored, match="session_tally"):
        _open_with(root, SessionTally)
    assert _open_with(root, SessionTally, checkpoint=False)[0] == {"s": {"register": 1}}


def test_state_6_checkpoint_with_nothing_unrouted_takes_a_new_organ(tmp_path: Path) -> None:
    root = tmp_path / "f"
    shutil.copytree(GOLDEN_V6, root)
    state, loaded = _open_with(root, SessionTally)
    assert state == {} and loaded is not None


def test_state_6_checkpoint_never_lets_an_organ_over_routed_types_start_empty(
    tmp_path: Path,
) -> None:
    root = tmp_path / "f"
    shutil.copytree(GOLDEN_V6, root)
    with pytest.raises(CheckpointIgnored, match="put_count"):
        _open_with(root, PutCount)


def test_state_6_routed_types_are_the_organs_of_state_6() -> None:
    """The migration's constant names exactly what the state-6 organs handled (those organs
    are the first six of BUILTIN, in their order; a new built-in organ is appended)."""
    from chitta.field.checkpoint.snapshot import _V6_ROUTED

    state_6 = ("memories", "graph", "settings", "recall_index", "encoder", "knowledge")
    organs = [f() for f in registry.BUILTIN]
    assert [o.name for o in organs[:6]] == list(state_6)
    # op types added since state 6 that those organs now handle too (no state-6 writer met one)
    added_since = {int(OpType.UpdateSparseCodeU8)}
    assert sorted(_V6_ROUTED) == sorted(
        {int(t) for o in organs[:6] for t in o.handles} - added_since
    )
