"""The edge-legality matrix (chitta/policies/edge_legality.py, docs/KINDS.md).

The oracle is the seed's rule written out here by hand as the illegal cells:
(Observation, Thought) and (Decision, Thought), read (claim, evidence), for the
evidential edges, whose claim end is read off each edge's meaning in
chitta.ops.memory (DerivedFrom: src was made from dst; Supports: src is evidence
for dst; Confirms: src re-observes dst). Every cell of the code's table, the
table in docs/KINDS.md and the field's doors are checked against it.
"""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

import chitta
from chitta import inspect as cinspect
from chitta.ops import EDGE_KINDS, MEMORY_KINDS
from chitta.policies.edge_legality import RULE, table

ILLEGAL = {
    ("DerivedFrom", "observation", "thought"),  # an observation made from a thought
    ("DerivedFrom", "decision", "thought"),  # a decision made from a thought
    ("Supports", "thought", "observation"),  # a thought as evidence for an observation
    ("Supports", "thought", "decision"),
    ("Confirms", "thought", "observation"),  # a thought "re-observing" an observation
    ("Confirms", "thought", "decision"),
}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "KINDS.md"


def test_every_cell_matches_the_seed_rule() -> None:
    cells = table()
    assert set(cells) == set(product(EDGE_KINDS, MEMORY_KINDS, MEMORY_KINDS))
    assert len(cells) == 9 * 8 * 8
    wrong = [c for c, legal in cells.items() if legal == (c in ILLEGAL)]
    assert not wrong


def docs_table() -> dict[tuple[str, str, str], bool]:
    out: dict[tuple[str, str, str], bool] = {}
    edge, cols = None, None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#### (\w+) \(", line)
        if m:
            edge, cols = m.group(1), None
            continue
        if edge is None or not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cols is None:
            cols = cells[1:]
            continue
        for dst, mark in zip(cols, cells[1:], strict=True):
            assert mark in ("yes", "**no**"), line
            out[(edge, cells[0], dst)] = mark == "yes"
    return out


def test_docs_table_is_the_full_table() -> None:
    documented = docs_table()
    assert documented == table()
    assert {c for c, legal in documented.items() if not legal} == ILLEGAL


# ---- the field's doors -------------------------------------------------------------------


def edge_records(path: Path) -> list[tuple[int, int, str]]:
    return [
        (r["fields"]["src"], r["fields"]["dst"], r["fields"]["edge"])
        for r in cinspect.iter_records(path)
        if r["op"] == "AddAssocEdge"
    ]


@pytest.fixture
def field(tmp_path: Path):  # type: ignore[no-untyped-def]
    with chitta.open(tmp_path / "f", embedder=None) as f:
        yield f


def test_link_checks_every_edge_and_kind_pair(field: chitta.Field, tmp_path: Path) -> None:
    ids = {k: field.remember(f"a {k} memory", kind=k) for k in sorted(MEMORY_KINDS)}
    logged = []
    for edge, s, d in sorted(product(EDGE_KINDS, MEMORY_KINDS, MEMORY_KINDS)):
        if s == d:
            continue  # no self-links; same-kind pairs are legal in the oracle (below)
        a, b = ids[s], ids[d]
        if (edge, s, d) in ILLEGAL:
            with pytest.raises(chitta.InvalidArgument) as err:
                field.link(a, b, edge)
            msg = str(err.value)
            assert RULE in msg and str(a) in msg and str(b) in msg and "instead" in msg
            assert not field.core.graph.has_edge(a, b, edge)
        else:
            field.link(a, b, edge)
            logged.append((a, b, edge))
    assert not any(s == d for _, s, d in ILLEGAL)  # so skipping s == d loses no check
    field.core.log.flush()
    assert edge_records(tmp_path / "f") == logged  # nothing logged for an illegal edge


def test_confirm_is_checked_supersede_and_contradict_pass(
    field: chitta.Field, tmp_path: Path
) -> None:
    t = field.remember("maybe x", kind="thought")
    o = field.remember("x", kind="observation")
    d = field.remember("do x", kind="decision")
    for target in (o, d):
        with pytest.raises(chitta.InvalidArgument, match=RULE):
            field.confirm(t, target)
    field.confirm(o, t)  # an observation re-observing a thought's content: legal
    field.supersede(t, d)  # not evidential: legal both ways
    field.supersede(d, t)
    field.contradict(t, o)
    field.contradict(o, t)
    field.core.log.flush()
    assert edge_records(tmp_path / "f") == [
        (o, t, "Confirms"),
        (d, t, "Supersedes"),
        (t, d, "Supersedes"),
        (t, o, "Contradicts"),
        (o, t, "Contradicts"),
    ]


def test_internal_edges_stay_writable(field: chitta.Field) -> None:
    t = field.remember("thought about the cache", kind="thought", realm="r")
    o = field.remember("the cache is warm", kind="observation", realm="r")
    for s, d in ((t, o), (o, t)):
        for edge in ("CoRetrieved", "AliasOf", "SameSession"):
            field.link(s, d, edge)
            assert field.core.graph.has_edge(s, d, edge)
    t_id, a_id = field.remember_triplet("cache", "is", "warm", kind="thought")
    assert field.core.graph.has_edge(a_id, t_id, "AliasOf")
