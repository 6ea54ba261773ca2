"""The write gate's prune: soft, never of what a person wanted kept, undoable."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument, NotFound

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def _field(root: Path) -> tuple[chitta.Field, Clock]:
    clock = Clock()
    return chitta.open(root, embedder=None, clock=clock), clock


def test_prune_spares_what_people_keep_and_can_be_undone(tmp_path: Path) -> None:
    f, clock = _field(tmp_path / "f")
    with f:
        plain = f.remember("a passing remark about lunch")
        spared = [
            f.remember("we ship on tuesdays", kind="decision"),
            f.remember("parse() lives in src/parse.py", kind="code_fact"),
            f.remember("from MEMORY.md", meta={"provenance": "human"}),
            f.remember("pinned note", tags=["pinned"]),
            f.remember("curated fact", meta={"curated": True}),
        ]
        clock.t += 8 * DAY
        young = f.remember("written today")
        assert f.write_gate_pass() == 1
        assert set(f.ids()) == {*spared, young}
        (row,) = f.pruned()
        assert row["id"] == str(plain) and row["by"] == "write_gate"
        assert row["pruned_at"] == pytest.approx(clock.t)
        new = f.restore(plain)
        back = f.get(new)
        assert back.text == "a passing remark about lunch"
        assert back.meta == {"restored_from": str(plain)}
        assert f.pruned() == []
        with pytest.raises(NotFound):
            f.restore(plain)  # restored once
        with pytest.raises(NotFound):
            f.restore(young)  # live, not pruned
        clock.t += 30 * DAY
        assert f.write_gate_pass() == 1  # only `young`; the restored one is kept
        assert new in f
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert [r["id"] for r in g.pruned()] == [str(young)]


def test_prune_age_is_a_setting(tmp_path: Path) -> None:
    f, clock = _field(tmp_path / "f")
    with f:
        a = f.remember("never recalled")
        f.call("set_prune_days", days=0)
        clock.t += 400 * DAY
        assert f.write_gate_pass() == 0 and a in f  # 0: never
        f.call("set_prune_days", days=500)
        assert f.maintain()["pruned_staged"] == 0
        f.call("set_prune_days", days=300)
        assert f.maintain()["pruned_staged"] == 1 and a not in f
        with pytest.raises(InvalidArgument):
            f.call("set_prune_days", days=-1)
