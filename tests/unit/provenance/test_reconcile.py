"""The reconciler: R0 over a field written without the rules (raw ops, as an older
chitta or another writer would have logged them) against a brute-force oracle, the
R1 proposer hook, and detect_contradictions logging its pairs to the KG."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta import ops
from chitta.model import Memory
from chitta.policies.reconcile import Proposal, ReconcileReport, set_proposer

KINDS = ["observation", "thought", "decision", "code_fact", "lesson"]
EDGES = sorted(ops.EDGE_KINDS)
# the seed's rule, restated: an observation or a decision may not rest on a thought
# (claim, evidence) per evidential edge; every edge but co-occurrence is laundering-guarded
CLAIM_IS_SRC = {"DerivedFrom": True, "Supports": False, "Confirms": False}
UNGUARDED = {"CoRetrieved", "SameSession"}


def _oracle(
    kinds: dict[int, str], cands: set[int], edges: set[tuple[int, int, str]], live: set[int]
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    illegal, laundering = [], []
    for src, dst, edge in sorted(edges):
        if src not in live or dst not in live:
            continue
        if edge in CLAIM_IS_SRC:
            claim, evidence = (src, dst) if CLAIM_IS_SRC[edge] else (dst, src)
            if kinds[claim] in ("observation", "decision") and kinds[evidence] == "thought":
                illegal.append((src, dst, edge))
        if edge not in UNGUARDED and src in cands and dst not in cands:
            laundering.append((src, dst, edge))
    return illegal, laundering


def _keys(rows: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    return [(r["src"], r["dst"], r["edge"]) for r in rows]


def _raw_field(root: Path, seed: int) -> tuple[chitta.Field, dict[int, str], set[int], set[Any]]:
    """A field whose edges were logged as raw ops, past the matrix and the guard."""
    rng = random.Random(seed)
    f = chitta.open(root, embedder=None)
    kinds = {f.remember(f"memory {i}", kind=(k := rng.choice(KINDS))): k for i in range(30)}
    ids = sorted(kinds)
    cands = set(rng.sample(ids, 8))
    core = f.core
    for mid in sorted(cands):
        core.commit(
            ops.ProvenanceEvent(
                event="assign", id=mid, at_ms=1, provenance="open_weight_generated", candidate=True
            )
        )
    edges: set[tuple[int, int, str]] = set()
    for _ in range(220):
        src, dst = rng.sample(ids, 2)
        edge = rng.choice(EDGES)
        edges.add((src, dst, edge))
        core.commit(ops.AddAssocEdge(src=src, dst=dst, edge=edge, at_ms=1))
    return f, kinds, cands, edges


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reconcile_all_finds_exactly_what_the_rules_forbid(tmp_path: Path, seed: int) -> None:
    f, kinds, cands, edges = _raw_field(tmp_path / "f", seed)
    gone = sorted(kinds)[seed]
    f.forget(gone)  # edges of a forgotten memory are not findings
    live = set(f.ids())
    illegal, laundering = _oracle(kinds, cands, edges, live)
    assert illegal and laundering  # the random field holds both kinds of finding
    applied = f.stats().records_applied
    got = f.call("reconcile_all")
    assert _keys(got["illegal_edges"]) == illegal
    assert _keys(got["laundering"]) == laundering
    assert {r["rule"] for r in got["illegal_edges"]} == {"no-fact-from-speculation"}
    assert {r["rule"] for r in got["laundering"]} == {"candidate-laundering"}
    assert all(r["src_kind"] == kinds[r["src"]] for r in got["illegal_edges"])
    assert got["unresolved"] == len(illegal) + len(laundering)
    assert got["edges_scanned"] == sum(1 for s, d, _ in edges if s in live and d in live)
    assert f.stats().records_applied == applied  # R0 writes nothing
    assert f.call("reconcile_all") == got  # deterministic
    f.checkpoint()
    f.close()
    with chitta.open(tmp_path / "f", read_only=True) as g:  # and the same after reopening
        assert g.call("reconcile_all") == got


def test_witnessing_a_candidate_resolves_its_laundering(tmp_path: Path) -> None:
    f, kinds, cands, edges = _raw_field(tmp_path / "f", 7)
    live = set(f.ids())
    one = min(cands)
    f.call("witness_memory", id=one, signal="router_hit_rate")
    _, laundering = _oracle(kinds, cands - {one}, edges, live)
    assert _keys(f.call("reconcile_all")["laundering"]) == laundering


class Recorder:
    """A real proposer: proposes legal and illegal edges from what it is shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[ReconcileReport, list[Memory]]] = []
        self.proposals: list[Any] = []

    def __call__(self, report: ReconcileReport, memories: Sequence[Memory]) -> list[Any]:
        self.calls.append((report, list(memories)))
        by_kind: dict[str, list[int]] = {}
        for m in memories:
            by_kind.setdefault(m.kind, []).append(m.id)
        obs, th, dec = by_kind["observation"], by_kind["thought"], by_kind["decision"]
        self.proposals = [
            Proposal(th[0], obs[0], "DerivedFrom", reason="the thought rests on an observation"),
            Proposal(obs[1], th[1], "Supports"),  # evidence for a hypothesis: legal
            Proposal(dec[0], th[0], "DerivedFrom"),  # a decision resting on a thought: illegal
            Proposal(th[0], obs[0], "DerivedFrom"),  # the same again
            Proposal(obs[0], obs[0], "RelatedTo"),  # to itself
            Proposal(obs[0], 999, "RelatedTo"),  # no such memory
            Proposal(obs[0], obs[1], "Resembles"),  # no such edge
            Proposal(obs[0], obs[1], "RelatedTo", weight=float("nan")),
            Proposal(self.cand, obs[2], "Supports"),  # candidate -> established: laundering
            {"src": obs[0], "dst": obs[1], "edge": "RelatedTo"},  # not a Proposal
        ]
        return self.proposals

    cand = 0


def test_r1_proposals_are_committed_only_when_r0_validates_them(tmp_path: Path) -> None:
    f = chitta.open(tmp_path / "f", embedder=None)
    for i, k in enumerate(["observation"] * 3 + ["thought"] * 2 + ["decision"]):
        f.remember(f"memory {i}", kind=k)
    proposer = Recorder()
    proposer.cand = f.remember("a candidate", provenance="open_weight_generated")
    assert f.call("reconcile_all")["accepted"] == []  # no proposer by default: R0 only
    set_proposer(f, proposer)
    applied = f.stats().records_applied
    got = f.call("reconcile_all")
    p = proposer.proposals
    assert [(a["src"], a["dst"], a["edge"]) for a in got["accepted"]] == [
        (p[0].src, p[0].dst, "DerivedFrom"),
        (p[1].src, p[1].dst, "Supports"),
    ]
    reasons = [r["reason"] for r in got["rejected"]]
    assert len(reasons) == len(p) - 2
    for want in (
        "no-fact-from-speculation",
        "exists already",
        "itself",
        "no live memory 999",
        "unknown edge",
        "finite",
        "candidate-laundering",
        "not a Proposal",
    ):
        assert sum(want in r for r in reasons) == 1, want
    assert f.stats().records_applied == applied + 2  # the valid ones only (applied counts ops)
    logged = [
        r for mid in (p[0].src, p[1].src) for r in f.history(mid) if r["op"] == "AddAssocEdge"
    ]
    assert len(logged) == 2 and all(r["batch"] for r in logged)  # one atomic group
    assert len({r["seqno"] for r in logged}) == 1
    graph = f.core.graph
    assert graph.has_edge(p[0].src, p[0].dst, "DerivedFrom")
    assert graph.has_edge(p[1].src, p[1].dst, "Supports")
    assert not graph.has_edge(p[2].src, p[2].dst, "DerivedFrom")
    assert not graph.has_edge(p[8].src, p[8].dst, "Supports")
    assert proposer.calls[-1][0].unresolved == 0 and len(proposer.calls[-1][1]) == 7
    again = f.call("reconcile_all")  # the same proposals again: all now duplicates or illegal
    assert again["accepted"] == [] and f.stats().records_applied == applied + 2
    set_proposer(f, None)
    assert f.call("reconcile_all")["rejected"] == []
    with pytest.raises(chitta.InvalidArgument, match="proposer"):
        set_proposer(f, "not callable")  # type: ignore[arg-type]


def test_detect_contradictions_logs_its_pairs_to_the_kg(tmp_path: Path) -> None:
    f = chitta.open(tmp_path / "f", embedder=None)
    obs = f.remember("the deploy target for the api is render", kind="observation")
    dec = f.remember("the deploy target for the api: fly", kind="decision")
    div = f.remember("the deploy target for the api is heroku", kind="observation")
    pairs = f.detect_contradictions()
    assert {(p.a, p.b, p.score) for p in pairs} == {
        (min(obs, dec), max(obs, dec), 0.6),
        (min(dec, div), max(dec, div), 0.6),
        (min(obs, div), max(obs, div), 0.4),
    }
    rows = f.call("kg_query", predicate="conflict_score")["triplets"]
    got = {(r["subject"], r["object"]) for r in rows}
    assert got == {(f"contradiction:{p.a}-{p.b}", f"{p.score:g}") for p in pairs}
    assert {r["object"] for r in rows} == {"0.6", "0.4"}
    assert all(r["source_memory_ids"] for r in rows)
    applied = f.stats().records_applied
    assert f.detect_contradictions() == pairs
    assert f.stats().records_applied == applied  # a repeat logs nothing more
    f.close()
    with chitta.open(tmp_path / "f", read_only=True) as g:  # read-only: found, not logged
        assert g.detect_contradictions() == pairs
        assert len(g.call("kg_query", predicate="conflict_score")["triplets"]) == len(pairs)


def test_a_proposer_that_fails_writes_nothing(tmp_path: Path) -> None:
    f = chitta.open(tmp_path / "f", embedder=None)
    a, b = f.remember("one", kind="observation"), f.remember("two", kind="observation")

    def proposer(report: ReconcileReport, memories: Sequence[Memory]) -> Any:
        yield Proposal(a, b, "Supports")  # valid, but the proposer fails before it is done
        raise RuntimeError("the model timed out")

    set_proposer(f, proposer)
    applied = f.stats().records_applied
    with pytest.raises(RuntimeError, match="timed out"):
        f.call("reconcile_all")
    assert f.stats().records_applied == applied and not f.core.graph.has_edge(a, b, "Supports")
