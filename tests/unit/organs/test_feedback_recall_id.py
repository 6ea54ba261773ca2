"""feedback(recall_id=...): a recall's hits carry its id; feedback takes the query (and a
lone hit) from it. Oracle: the same feedback given with memory_id and query on a twin field."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemontools import DaemonProcess, child_env

import chitta
from chitta.errors import InvalidArgument, NotFound

TEXTS = ["the staging port is 8081", "deploys happen on tuesdays", "the cache sits before postgres"]


def _field(path: Path) -> chitta.Field:
    f = chitta.open(path, embedder="hashing")
    for t in TEXTS:
        f.remember(t, source_tool="agent-a")
    return f


def test_hits_carry_one_id_per_recall(tmp_path: Path) -> None:
    with _field(tmp_path / "f") as f:
        a = f.recall("staging port", k=3, touch=False)
        b = f.recall("staging port", k=3, touch=False)
        assert len({h.recall_id for h in a}) == 1 and len({h.recall_id for h in b}) == 1
        rid = a[0].recall_id
        assert rid is not None and len(rid) == 12 and int(rid, 16) >= 0
        assert rid != b[0].recall_id


def test_feedback_by_recall_id_equals_feedback_by_query(tmp_path: Path) -> None:
    with _field(tmp_path / "a") as a, _field(tmp_path / "b") as b:
        hits = a.recall("staging port", k=3, touch=False)
        target = hits[1]
        by_recall = a.call(
            "feedback", recall_id=hits[0].recall_id, memory_id=target.id, useful=True
        )
        twin = next(h for h in b.recall("staging port", k=3, touch=False) if h.text == target.text)
        by_query = b.call("feedback", memory_id=twin.id, query="staging port", useful=True)
        for key in ("source", "domain", "source_weight", "model_version", "scorer_learned"):
            assert by_recall[key] == by_query[key], key


def test_a_lone_hit_needs_no_memory_id(tmp_path: Path) -> None:
    with _field(tmp_path / "f") as f:
        (hit,) = f.recall("staging port", k=1, touch=False)
        out = f.call("feedback", recall_id=hit.recall_id, useful=False)
        assert out["memory_id"] == str(hit.id)


def test_bad_recall_ids_change_nothing(tmp_path: Path) -> None:
    with _field(tmp_path / "f") as f:
        hits = f.recall("staging port", k=2, touch=False)
        others = set(f.ids()) - {h.id for h in hits}
        before = f.stats().records_applied
        with pytest.raises(NotFound, match="recent recall"):
            f.call("feedback", recall_id="0123456789ab", memory_id=hits[0].id, useful=True)
        with pytest.raises(InvalidArgument, match="not among the hits"):
            f.call(
                "feedback", recall_id=hits[0].recall_id, memory_id=next(iter(others)), useful=True
            )
        with pytest.raises(InvalidArgument, match="give memory_id"):
            f.call("feedback", recall_id=hits[0].recall_id, useful=True)  # two hits: which one?
        with pytest.raises(InvalidArgument, match="memory_id"):
            f.call("feedback", useful=True)
        with pytest.raises(InvalidArgument):
            f.call("feedback", recall_id=7, memory_id=hits[0].id, useful=True)
        assert f.stats().records_applied == before


def test_through_the_daemon(tmp_path: Path) -> None:
    with _field(tmp_path / "f"):
        pass
    d = DaemonProcess(tmp_path / "f", tmp_path / "d.sock", env=child_env(CHITTA_EMBEDDER="hashing"))
    try:
        with chitta.connect(tmp_path / "d.sock", timeout=30) as remote:
            hits = remote.recall("staging port", k=3, touch=False)
            assert hits[0].recall_id is not None
            out = remote.call(
                "feedback", recall_id=hits[0].recall_id, memory_id=hits[0].id, useful=True
            )
            assert out["memory_id"] == str(hits[0].id)
    finally:
        d.close()


def test_an_exact_dispatch_answer_has_a_recall_id_too(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        f.remember("Decision: Ana chose postgres for the schema", kind="decision")
        hits = f.recall("what did Ana decide about the schema?", k=3, touch=False)
        assert hits and hits[0].recall_id is not None
        assert f.explain_route("what did Ana decide about the schema?").ran.value == "exact"
        out = f.call("feedback", recall_id=hits[0].recall_id, memory_id=hits[0].id, useful=True)
        assert out["memory_id"] == str(hits[0].id)
