"""The knowledge-graph organ (chitta/organs/knowledge.py) against a brute-force reference.

The reference keeps the ops as a plain list and answers a view ``(as_of, known_at)``
by replaying the known events of each triplet along valid time (a timeline walk,
not the organ's latest-start rule), with entity classes found by merging sets to a
fixed point (not union-find) and names canonicalised with a regular expression.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from daemontools import DaemonProcess
from hypothesis import given, settings
from hypothesis import strategies as st

import chitta
from chitta import ops
from chitta.organs.knowledge import KnowledgeOrgan

# -- the reference ---------------------------------------------------------------------


def ref_entity(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip()).lower()


def ref_predicate(name: str) -> str:
    return re.sub(r"\s+", "_", name.strip()).lower()


def ref_key(s: str, p: str, o: str) -> tuple[str, str, str]:
    return ref_entity(s), ref_predicate(p), ref_entity(o)


def ref_hold(
    log: list[Any], key: tuple[str, str, str], as_of: int | None, known_at: int | None
) -> dict[str, Any] | None:
    """Walk the known events of ``key`` in valid time (at equal times an assertion
    comes before an invalidation); the state after the last event at or before
    ``as_of`` is the answer."""
    known = [
        op
        for op in log
        if ref_key(op.subject, op.predicate, op.object) == key
        and (known_at is None or op.recorded_ms <= known_at)
    ]
    events = sorted(
        (
            (op.valid_from_ms, 0, op) if type(op) is ops.AddTriplet else (op.at_ms, 1, op)
            for op in known
        ),
        key=lambda e: (e[0], e[1]),
    )
    holds, start = False, None
    for time, kind, _op in events:
        if as_of is not None and time > as_of:
            break
        holds = kind == 0
        if holds:
            start = time
    if not holds:
        return None
    adds = [
        op
        for op in known
        if type(op) is ops.AddTriplet and (as_of is None or op.valid_from_ms <= as_of)
    ]
    ends = [op.at_ms for op in known if type(op) is ops.InvalidateTriplet and op.at_ms >= start]
    sources: list[int] = []
    for op in adds:
        if op.source_memory_id is not None and op.source_memory_id not in sources:
            sources.append(op.source_memory_id)
    return {
        "valid_from_ms": start,
        "invalidated_at_ms": min(ends) if ends else None,
        "recorded_ms": min(op.recorded_ms for op in adds),
        "weight": sum(op.weight for op in adds),
        "confidence": max(op.confidence for op in adds),
        "source_memory_ids": sources,
    }


def ref_classes(log: list[Any], as_of: int | None, known_at: int | None) -> list[set[str]]:
    keys = {
        ref_key(op.subject, op.predicate, op.object)
        for op in log
        if type(op) is ops.AddTriplet and ref_predicate(op.predicate) == "alias_of"
    }
    groups = [{k[0], k[2]} for k in keys if ref_hold(log, k, as_of, known_at) is not None]
    merged = True
    while merged:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if groups[i] & groups[j]:
                    groups[i] |= groups.pop(j)
                    merged = True
                    break
            if merged:
                break
    return groups


def ref_query(
    log: list[Any],
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    as_of: int | None,
    known_at: int | None,
) -> dict[tuple[str, str, str], dict[str, Any]]:
    groups = ref_classes(log, as_of, known_at)

    def same(a: str, b: str) -> bool:
        return a == b or any(a in g and b in g for g in groups)

    keys = {
        ref_key(op.subject, op.predicate, op.object) for op in log if type(op) is ops.AddTriplet
    }
    out = {}
    for key in keys:
        if subject is not None and not same(ref_entity(subject), key[0]):
            continue
        if predicate is not None and ref_predicate(predicate) != key[1]:
            continue
        if obj is not None and not same(ref_entity(obj), key[2]):
            continue
        view = ref_hold(log, key, as_of, known_at)
        if view is not None:
            out[key] = view
    return out


def organ_query(organ: KnowledgeOrgan, *args: Any, **kw: Any) -> dict[Any, dict[str, Any]]:
    found = organ.query(*args, **kw)
    out = {ref_key(t.subject, t.predicate, t.object): view for t, view in found}
    assert len(out) == len(found)
    weights = [view["weight"] for _t, view in found]
    assert weights == sorted(weights, reverse=True)  # heaviest first
    return out


# -- random histories ------------------------------------------------------------------

NAMES = ["Jeff", "jeff ", " JEFF", "Rust", "rust", "Tokio", "Ana  Lee", "ana lee", "Berlin"]
PREDICATES = ["uses", "Uses", "lives in", "lives  in", "alias_of", "Alias Of"]
times = st.integers(min_value=0, max_value=40)


@st.composite
def histories(draw: st.DrawFn) -> list[Any]:
    log: list[Any] = []
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        s, p, o = (draw(st.sampled_from(x)) for x in (NAMES, PREDICATES, NAMES))
        if draw(st.integers(0, 3)) == 0 and log:  # invalidate one of the added triplets
            added = draw(st.sampled_from([op for op in log if type(op) is ops.AddTriplet]))
            log.append(
                ops.InvalidateTriplet(
                    subject=added.subject.upper(),  # another spelling of the same key
                    predicate=added.predicate,
                    object=added.object,
                    at_ms=draw(times),
                    recorded_ms=draw(times),
                )
            )
        else:
            log.append(
                ops.AddTriplet(
                    subject=s,
                    predicate=p,
                    object=o,
                    weight=float(draw(st.integers(1, 4))),
                    valid_from_ms=draw(times),
                    source_memory_id=draw(st.none() | st.integers(1, 3)),
                    confidence=draw(st.sampled_from([0.25, 0.5, 1.0])),
                    recorded_ms=draw(times),
                )
            )
    return log


VIEWS = [(None, None), (None, 20), (20, None), (5, 35), (35, 5), (0, 0), (40, 40)]


@settings(max_examples=150, deadline=None)
@given(histories(), st.sampled_from([None, *NAMES]), st.sampled_from([None, *PREDICATES]))
def test_views_equal_the_brute_force_reference(
    log: list[Any], subject: str | None, predicate: str | None
) -> None:
    organ = KnowledgeOrgan()
    for op in log:
        organ.apply(op)
    for as_of, known_at in VIEWS:
        for obj in (None, "rust"):
            expected = ref_query(log, subject, predicate, obj, as_of, known_at)
            got = organ_query(organ, subject, predicate, obj, as_of=as_of, known_at=known_at)
            assert got == expected, (as_of, known_at, subject, predicate, obj)
        groups = ref_classes(log, as_of, known_at)
        aliases = {
            k[0] for k, _v in ref_query(log, None, "alias_of", None, as_of, known_at).items()
        }
        classes = organ.classes(as_of, known_at)
        assert set(classes) == set().union(*groups)
        for group in groups:  # shown by its smallest member that is not an alias
            shown = min((m for m in group if m not in aliases), default=min(group))
            assert {classes[m] for m in group} == {shown}


@settings(max_examples=60, deadline=None)
@given(histories())
def test_snapshot_rows_restore_to_the_same_views(log: list[Any]) -> None:
    import tempfile

    from chitta.field.checkpoint.snapshot import SnapshotFiles

    organ = KnowledgeOrgan()
    for op in log:
        organ.apply(op)
    with tempfile.TemporaryDirectory() as where:
        ctx = SnapshotFiles(Path(where))
        state = organ.snapshot(ctx)
        back = KnowledgeOrgan()
        back.restore(state, _Restore(Path(where)))
    assert back.stats() == organ.stats()
    for as_of, known_at in VIEWS:
        assert organ_query(back, as_of=as_of, known_at=known_at) == organ_query(
            organ, as_of=as_of, known_at=known_at
        )


class _Restore:
    """The checkpoint reader's restore context over a directory SnapshotFiles wrote."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def read_records(self, name: str, magic: bytes, version: int) -> list[Any]:
        from chitta.organs.sidecar import read_records

        return read_records(self.directory / name, magic, version)[1]


# -- through a field -------------------------------------------------------------------


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _field(root: Path, clock: Clock) -> chitta.Field:
    return chitta.open(root, embedder=None, clock=clock)


def _keys(result: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {ref_key(r["subject"], r["predicate"], r["object"]) for r in result["triplets"]}


def test_invalidation_hides_from_current_queries_not_from_past_ones(tmp_path: Path) -> None:
    clock = Clock(1000.0)
    with _field(tmp_path / "f", clock) as f:
        f.call("kg_add", subject="Ana", predicate="lives in", object="Paris", valid_from=100)
        clock.t = 2000.0
        gone = f.call("kg_invalidate", subject="ana", predicate="Lives In", object="paris", at=500)
        assert gone["invalidated_at"] == 500.0
        f.call("kg_add", subject="Ana", predicate="lives in", object="Berlin", valid_from=500)
        paris, berlin = ("ana", "lives_in", "paris"), ("ana", "lives_in", "berlin")
        assert _keys(f.call("kg_query", subject="ANA")) == {berlin}
        past = f.call("kg_query", subject="Ana", as_of=300)
        assert _keys(past) == {paris}
        assert past["triplets"][0]["invalidated_at"] == 500.0  # known now: it ended at 500
        assert _keys(f.call("kg_query", subject="Ana", as_of=500)) == {berlin}
        # As the field knew it at 1500 (before the invalidation was recorded): Paris, open.
        then = f.call("kg_query", subject="Ana", known_at=1500)
        assert _keys(then) == {paris} and then["triplets"][0]["invalidated_at"] is None
        assert f.call("kg_query", subject="Ana", known_at=999)["total"] == 0


def test_canonical_names_and_reinforced_weight(tmp_path: Path) -> None:
    clock = Clock(10.0)
    with _field(tmp_path / "f", clock) as f:
        first = f.call("kg_add", subject="Jeff", predicate="uses", object="Rust", weight=1.5)
        again = f.call(
            "kg_add",
            subject="  jEFF ",
            predicate="USES",
            object="rust",
            weight=2,
            source_memory_id=7,
        )
        assert first["weight"] == 1.5 and again["weight"] == 3.5
        assert again["subject"] == "Jeff" and again["source_memory_ids"] == [7]
        f.call("kg_add", subject="Ana\tLee", predicate="works  at", object="ACME")
        assert f.call("kg_query", subject="ana lee", predicate="Works At")["total"] == 1
        assert f.organ("knowledge").stats()["triplets"] == 2


def test_aliases_join_entities_and_the_entity_table_lists_them(tmp_path: Path) -> None:
    clock = Clock(10.0)
    with _field(tmp_path / "f", clock) as f:
        f.call("kg_add", subject="JavaScript", predicate="runs on", object="V8")
        f.call("kg_add", subject="JS", predicate="has", object="closures")
        f.call("kg_alias", alias="js", canonical="JavaScript")
        f.call("kg_alias", alias="ECMAScript", canonical="js")  # a chain: one class
        log = [
            ops.AddTriplet(subject=s, predicate=p, object=o, recorded_ms=10_000)
            for s, p, o in [
                ("JavaScript", "runs on", "V8"),
                ("JS", "has", "closures"),
                ("js", "alias_of", "JavaScript"),
                ("ECMAScript", "alias_of", "js"),
            ]
        ]
        for name in ("ecmascript", "JS", "javascript"):
            got = _keys(f.call("kg_query", subject=name))
            assert got == set(ref_query(log, name, None, None, None, None))
            assert ("javascript", "runs_on", "v8") in got and ("js", "has", "closures") in got
        rows = f.call("kg_entities", prefix="ECMA")["entities"]
        assert [r["name"] for r in rows] == ["JavaScript"]
        assert sorted(rows[0]["aliases"]) == ["ECMAScript", "JS"]
        assert rows[0]["triplets"] == 4  # both facts and both alias triplets name it
        with pytest.raises(chitta.InvalidArgument, match="same entity"):
            f.call("kg_alias", alias="JS ", canonical="js")


def _unchanged(f: chitta.Field) -> tuple[Any, ...]:
    st = f.stats()
    return st.max_seqno, f.organ("knowledge").stats()


@pytest.mark.parametrize(
    ("name", "arguments", "match"),
    [
        ("kg_add", {"subject": "", "predicate": "uses", "object": "x"}, "subject is empty"),
        ("kg_add", {"subject": " \t", "predicate": "uses", "object": "x"}, "subject is empty"),
        ("kg_add", {"subject": "a", "predicate": 3, "object": "x"}, "predicate must be string"),
        ("kg_add", {"subject": "a", "predicate": "p"}, "missing required"),
        ("kg_add", {"subject": "a", "predicate": "p", "object": "x", "weight": -1}, ">= 0"),
        ("kg_add", {"subject": "a\x00", "predicate": "p", "object": "x"}, "printable"),
        ("kg_invalidate", {"subject": "nobody", "predicate": "uses", "object": "x"}, "no current"),
        ("kg_invalidate", {"subject": "Jeff", "predicate": "uses", "object": "Rust", "at": 1}, "before"),
        ("kg_query", {"subject": ""}, "subject is empty"),
        ("kg_query", {"as_of": "yesterday"}, "as_of must be number"),
        ("kg_query", {"limit": 0}, ">= 1"),
        ("kg_entities", {"prefix": 5}, "prefix must be string"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_and_changes_nothing(
    tmp_path: Path, name: str, arguments: dict[str, Any], match: str
) -> None:
    with _field(tmp_path / "f", Clock(100.0)) as f:
        f.call("kg_add", subject="Jeff", predicate="uses", object="Rust")
        before = _unchanged(f)
        with pytest.raises(chitta.InvalidArgument, match=match):
            f.call(name, **arguments)
        assert _unchanged(f) == before


def test_ops_naming_nothing_are_counted_not_raised(tmp_path: Path) -> None:
    with _field(tmp_path / "f", Clock(100.0)) as f:
        f.core.commit(ops.InvalidateTriplet(subject="x", predicate="y", object="z", at_ms=1))
        f.core.commit(ops.AddTriplet(subject="  ", predicate="y", object="z"))
        assert f.organ("knowledge").stats() == {
            "triplets": 0,
            "entities": 0,
            "invalidations": 0,
            "ignored": 2,
        }


def test_checkpoint_then_more_writes_reopens_to_the_same_views(tmp_path: Path) -> None:
    clock, root = Clock(1000.0), tmp_path / "f"
    with _field(root, clock) as f:
        for i in range(30):
            clock.t += 10
            f.call("kg_add", subject=f"s{i % 7}", predicate=f"p{i % 3}", object=f"o{i % 5}",
                   valid_from=float(i), weight=1 + i % 2)  # fmt: skip
        f.call("kg_alias", alias="S-one", canonical="s1")
        f.checkpoint()
        clock.t += 10
        f.call("kg_invalidate", subject="s-one", predicate="p1", object="o1", at=25)
        f.call("kg_add", subject="s1", predicate="p1", object="o1", valid_from=28)
    views = [(None, None), (10.0, None), (26.0, None), (None, 1200.0), (30.0, 1305.0)]
    with (
        chitta.open(root, read_only=True) as warm,
        chitta.open(root, read_only=True, load_checkpoint=False) as cold,
    ):
        assert warm.checkpoint_loaded is not None and cold.checkpoint_loaded is None
        for as_of, known_at in views:
            kw = {k: v for k, v in (("as_of", as_of), ("known_at", known_at)) if v is not None}
            a = warm.call("kg_query", limit=1000, **kw)
            assert a == cold.call("kg_query", limit=1000, **kw) and a["total"] > 0
        assert warm.call("kg_entities") == cold.call("kg_entities")


def test_the_organ_answers_through_a_real_daemon(tmp_path: Path) -> None:
    field, sock = tmp_path / "field", tmp_path / "d.sock"
    daemon = DaemonProcess(field, sock)
    try:
        with chitta.connect(sock, timeout=30) as remote:
            remote.call("kg_add", subject="Jeff", predicate="uses", object="Rust", valid_from=10)
            remote.call("kg_add", subject="Rust", predicate="has async via", object="Tokio")
            remote.call("kg_invalidate", subject="jeff", predicate="uses", object="rust", at=20)
            assert remote.call("kg_query", subject="JEFF")["total"] == 0
            past = remote.call("kg_query", subject="JEFF", as_of=15)["triplets"]
            assert [(r["subject"], r["object"]) for r in past] == [("Jeff", "Rust")]
            with pytest.raises(chitta.InvalidArgument, match="predicate must be string"):
                remote.call("kg_add", subject="a", predicate=1, object="b")
            remote.flush()
    finally:
        daemon.close()
    with chitta.open(field, read_only=True) as f:  # what the daemon logged replays here
        assert f.call("kg_query", subject="jeff", as_of=15)["triplets"] == past
        assert f.call("kg_query", object="tokio")["total"] == 1
