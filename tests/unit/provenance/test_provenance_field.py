"""The provenance axis through Field: the candidate band, can_write_kind, the
laundering guard, witness_memory, the recall filter and the ranking factor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fieldtools import segment_files

import chitta
from chitta import ops
from chitta.errors import CandidateLaundering, InvalidArgument, NotFound, ProvenanceRefused
from chitta.policies import provenance as policy

OWG = "open_weight_generated"


def _field(root: Path) -> chitta.Field:
    return chitta.open(root, embedder=None)


def _log_bytes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in segment_files(root)}


def _of(f: chitta.Field, mid: int) -> dict[str, Any]:
    got: dict[str, Any] = f.call("provenance_of", id=mid)
    return got


def _unchanged(f: chitta.Field, root: Path, call: Any, error: type[Exception], match: str) -> None:
    """``call()`` raises ``error`` and the log and the applied count stay as they were."""
    f.flush()
    before, applied = _log_bytes(root), f.stats().records_applied
    with pytest.raises(error, match=match):
        call()
    f.flush()
    assert _log_bytes(root) == before and f.stats().records_applied == applied


def test_open_weight_generated_writes_enter_the_candidate_band(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    c = f.remember("the flaky test is a race in the cache", provenance=OWG)
    d = f.remember("summary of the deploy notes", provenance="OpenWeightDistilled")
    h = f.remember("deploys need the VPN", provenance="human")
    assert _of(f, c) == {"id": c, "provenance": OWG, "candidate": True, "witnesses": []}
    assert (_of(f, d)["provenance"], _of(f, d)["candidate"]) == ("open_weight_distilled", False)
    assert (_of(f, h)["provenance"], _of(f, h)["candidate"]) == ("human", False)
    assert [r["op"] for r in f.history(c)] == ["PutPayload", "ProvenanceEvent"]
    assert all(r.get("batch") for r in f.history(c))  # one atomic group
    assert f.call("candidates")["total"] == 1
    f.close()
    with chitta.open(tmp_path / "f", read_only=True) as g:  # replayed from the log
        assert _of(g, c)["candidate"] and _of(g, d)["provenance"] == "open_weight_distilled"


def test_provenance_is_inferred_from_the_writer(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    by_tool = {
        tool: f.remember(f"note from {tool}", source_tool=tool)
        for tool in ("claude-code", "codex", "ollama", "gemma-distiller", "my-script")
    }
    human = f.remember("imported by hand", meta={"provenance": "human"})
    plain = f.remember("no writer named")
    assert {t: _of(f, m)["provenance"] for t, m in by_tool.items()} == {
        t: policy.from_writer(t) or "unknown" for t in by_tool
    }
    assert _of(f, by_tool["ollama"])["candidate"]
    assert _of(f, human)["provenance"] == "human"
    assert _of(f, plain)["provenance"] == "unknown"
    # an unknown writer records nothing: old records and plain writes look the same
    assert [r["op"] for r in f.history(plain)] == ["PutPayload"]
    assert [r["op"] for r in f.history(by_tool["my-script"])] == ["PutPayload"]


def test_explicit_decision_from_open_weight_is_refused_and_nothing_logged(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    f.remember("something to open the log")
    for kind in ("decision", "code_fact"):
        _unchanged(
            f,
            tmp_path / "f",
            lambda kind=kind: f.remember("we use postgres", kind=kind, provenance=OWG),
            ProvenanceRefused,
            "can_write_kind",
        )
        _unchanged(
            f,
            tmp_path / "f",
            lambda kind=kind: f.remember_many([{"text": "x", "kind": kind, "provenance": OWG}]),
            ProvenanceRefused,
            "witness_memory",
        )
    assert len(f) == 1


def test_inferred_decision_from_open_weight_is_stored_as_a_thought(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    a = f.remember("Decision: we use postgres for the queue", provenance=OWG)
    b = f.remember("Decision: we use postgres for the queue", provenance="claude")
    c = f.remember("```def f(): pass```", source_tool="ollama")
    assert (f.get(a).kind, f.get(b).kind, f.get(c).kind) == ("thought", "decision", "thought")
    assert f.get(c).kind == "thought" and _of(f, c)["candidate"]


def test_laundering_is_rejected_with_the_documented_error_and_nothing_logged(
    tmp_path: Path,
) -> None:
    root = tmp_path / "f"
    f = _field(root)
    cand = f.remember("the cache might be stale", provenance=OWG, kind="observation")
    cand2 = f.remember("the cache is evicted hourly", provenance=OWG)
    est = f.remember("the cache is redis")
    for edge in sorted(policy.GUARDED_EDGES):
        _unchanged(
            f, root, lambda e=edge: f.link(cand, est, e), CandidateLaundering, "launder|cite"
        )
    for call in (
        lambda: f.supersede(est, cand),  # Supersedes cand -> est
        lambda: f.contradict(cand, est),
        lambda: f.confirm(cand, est),
    ):
        _unchanged(f, root, call, CandidateLaundering, "nothing was logged")
    # the other way, between candidates, and the field's own co-occurrence records pass
    f.link(est, cand, "RelatedTo")
    f.link(cand, cand2, "Supports")
    f.link(cand, est, "CoRetrieved")
    f.link(cand, est, "SameSession")
    assert f.call("reconcile_all")["laundering"] == []
    assert issubclass(CandidateLaundering, InvalidArgument)  # except ValueError keeps working


def test_candidates_are_promoted_only_through_witness_memory(tmp_path: Path) -> None:
    root = tmp_path / "f"
    f = _field(root)
    cand = f.remember("the nightly job fails on Sundays", provenance=OWG)
    est = f.remember("the nightly job runs at 02:00", provenance="human")
    # nothing else promotes it: updates, recalls, links into it, confirmations, checkpoints
    f.update(cand, confidence=1.0, text="the nightly job fails on Sundays (seen twice)")
    f.recall("nightly job")
    f.link(est, cand, "Supports")
    f.confirm(est, cand)
    f.checkpoint()
    assert _of(f, cand)["candidate"]
    with pytest.raises(CandidateLaundering):
        f.link(cand, est, "DerivedFrom")
    got = f.call("witness_memory", id=cand, signal="tool_outcome", note="ci run 41")
    assert got["candidate"] is False and got["provenance"] == OWG
    assert [w["signal"] for w in got["witnesses"]] == ["tool_outcome"]
    assert [r["op"] for r in f.history(cand)][-1] == "ProvenanceEvent"
    f.link(cand, est, "DerivedFrom")  # established now: the guard lets it cite
    f.close()
    with chitta.open(root, read_only=True) as g:  # checkpoint + replay of the rest
        assert _of(g, cand)["candidate"] is False
    with chitta.open(root) as g, pytest.raises(InvalidArgument, match="not a candidate"):
        g.call("witness_memory", id=cand, signal="user_correction")


def test_witness_memory_bad_input_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "f"
    f = _field(root)
    cand = f.remember("maybe the port is 8080", provenance=OWG)
    est = f.remember("the port is 9090")
    gone = f.remember("forgotten candidate", provenance=OWG)
    f.forget(gone)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"id": cand, "signal": "vibes"}, InvalidArgument, "signal"),
        ({"id": cand, "signal": 3}, InvalidArgument, "signal"),
        ({"id": cand}, InvalidArgument, "signal"),
        ({"id": 12345, "signal": "tool_outcome"}, NotFound, "12345"),
        ({"id": gone, "signal": "tool_outcome"}, NotFound, str(gone)),
        ({"id": est, "signal": "tool_outcome"}, InvalidArgument, "not a candidate"),
        ({"id": "x", "signal": "tool_outcome"}, InvalidArgument, "id"),
        ({"id": cand, "signal": "tool_outcome", "note": "n" * 2000}, InvalidArgument, "note"),
        ({"id": cand, "signal": "tool_outcome", "extra": 1}, InvalidArgument, "unknown"),
    ]
    for args, error, match in cases:
        _unchanged(f, root, lambda a=args: f.call("witness_memory", **a), error, match)
    assert _of(f, cand)["candidate"]


def test_bad_provenance_is_refused_and_nothing_logged(tmp_path: Path) -> None:
    root = tmp_path / "f"
    f = _field(root)
    f.remember("opening record")
    for call in (
        lambda: f.remember("x", provenance="gpt-4"),
        lambda: f.remember("x", provenance=7),  # type: ignore[arg-type]
        lambda: f.remember_many(["fine", {"text": "x", "provenance": "robot"}]),
        lambda: f.remember_triplet("a", "b", "c", provenance="nobody"),
        lambda: f.remember("x", dedup=True, provenance="gpt"),
    ):
        _unchanged(f, root, call, InvalidArgument, "provenance must be")
    with pytest.raises(InvalidArgument, match="provenance"):
        f.recall("x", provenance="martian")
    with pytest.raises(InvalidArgument, match="provenance"):
        f.recall("x", provenance=[])
    assert len(f) == 1


def test_remember_many_and_triplets_carry_provenance(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    a, b, c = f.remember_many(
        [
            {"text": "one", "provenance": OWG},
            {"text": "two", "source_tool": "codex"},
            "three",
        ]
    )
    t, al = f.remember_triplet("api", "listens on", "9090", provenance=OWG)
    assert [_of(f, m)["provenance"] for m in (a, b, c)] == [OWG, "codex", "unknown"]
    assert _of(f, t)["candidate"] and _of(f, al)["candidate"]  # twins share the band


def test_recall_filter_matches_a_brute_force_oracle(tmp_path: Path) -> None:
    f = _field(tmp_path / "f")
    who = ["human", "claude", "codex", "open_weight_distilled", OWG, None]
    written: dict[int, str] = {}
    for i in range(36):
        p = who[i % len(who)]
        mid = f.remember(f"deploy note number {i}", **({"provenance": p} if p else {}))
        written[mid] = p or "unknown"
    f.forget(next(iter(written)))
    live = set(f.ids())
    for want in (
        ["claude"],
        ["unknown"],
        [OWG, "human"],
        ["unknown", "codex"],
        list(ops.PROVENANCES),
    ):
        hits = f.recall("deploy note", k=100, provenance=want, touch=False)
        expect = {m for m, p in written.items() if p in want and m in live}
        assert {h.id for h in hits} == expect, want
    one = f.recall("deploy note", k=100, provenance="claude", touch=False)
    assert {written[h.id] for h in one} == {"claude"}


def test_provenance_factor_is_named_in_explain_and_weighs(tmp_path: Path) -> None:
    f = chitta.open(tmp_path / "f", embedder=None, clock=lambda: 1_700_000_000.0)
    cand = f.remember("the queue retries three times", provenance=OWG)
    f.remember("the queue is durable", provenance="human")

    def hit() -> Any:
        (h,) = [h for h in f.recall("queue retries", explain=True, touch=False) if h.id == cand]
        return h

    before = hit()
    (factor,) = [x for x in before.factors if x.name == "provenance"]
    assert factor.value == pytest.approx(
        policy.PROVENANCE_WEIGHTS[OWG] * policy.CANDIDATE_MULTIPLIER
    )
    assert factor.kind == "multiplier" and "provenance" in before.explain()
    # the same hit without explain (no factors) scores the same
    plain = next(h for h in f.recall("queue retries", touch=False) if h.id == cand)
    assert plain.score == before.score
    f.call("witness_memory", id=cand, signal="user_correction")
    after = hit()
    (factor,) = [x for x in after.factors if x.name == "provenance"]
    assert factor.value == pytest.approx(policy.PROVENANCE_WEIGHTS[OWG])
    assert before.score == pytest.approx(after.score * policy.CANDIDATE_MULTIPLIER)
    # the contribution shown is the score the factor took away
    assert factor.contribution == pytest.approx(after.score - after.score / factor.value)
