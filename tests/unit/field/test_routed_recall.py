"""Routed recall (chitta/field/routed.py) on a real field: each dispatch against what the
organs hold (oracles: the ids written here, dates worked out by hand), replay determinism
of the router's decisions, the model hook's log, the four metrics, and bad input."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

import pytest

import chitta
from chitta import ops
from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument
from chitta.field.recall import recall as plain_recall
from chitta.recall.router import route
from chitta.recall.router_ir import RecallRequest
from chitta.recall.router_parse import parse


def at(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, 12, tzinfo=timezone.utc)


def _field(tmp_path, name="f"):
    return chitta.open(tmp_path / name, embedder=HashingEmbedder(64))


def _applied(f) -> int:
    return f.stats().records_applied


def test_temporal_dispatch_uses_relative_dates_in_memory_text(tmp_path):
    with _field(tmp_path) as f:
        # Both say the same; one was written on 8 May about 7 May ("yesterday"), the other,
        # written first (the lower id wins ties), on 20 June: only the first is about 7 May.
        plain = f.remember("Caroline went to the support group and liked it", at=at(2023, 6, 20))
        told = f.remember("Caroline went to the support group yesterday", at=at(2023, 5, 8))
        f.wait_embedded()
        q = "What did Caroline do on 7 May 2023?"
        assert str(f.explain_route(q).dispatch) == "Temporal"
        routed = f.recall(q, k=2, touch=False, explain=True)
        unrouted = f.recall(q, k=2, touch=False, route=False)
        assert [h.id for h in routed] == [told, plain]
        # the unrouted prior sees only the event time (8 May), outside 7 May: no boost
        assert [h.id for h in unrouted] == [plain, told]
        time = [x for x in routed[0].factors if x.name == "time"]
        assert time and time[0].value == pytest.approx(2.0)  # 1 + time_prior
        assert any(x.name == "dispatch:temporal" for x in routed[0].factors)


def test_when_question_prefers_memories_stating_a_time(tmp_path):
    with _field(tmp_path) as f:
        dated = f.remember("Melanie ran the charity race last Sunday", at=at(2023, 5, 25))
        undated = f.remember("Melanie ran the charity race for the shelter", at=at(2023, 5, 25))
        f.wait_embedded()
        q = "When did Melanie run the charity race?"
        assert [h.id for h in f.recall(q, k=2, touch=False)] == [dated, undated]
        assert [h.id for h in f.recall(q, k=2, touch=False, route=False)] == [undated, dated]


def test_exact_dispatch_answers_from_the_knowledge_graph(tmp_path):
    with _field(tmp_path) as f:
        src = f.remember("Ana moved to the platform team as its lead")
        other = f.remember("Ana's role was discussed at length")
        f.core.commit(ops.AddTriplet(subject="Ana", predicate="role", object="platform lead",
                                     source_memory_id=src, recorded_ms=1))  # fmt: skip
        info = f.explain_route("What is Ana's role?")
        assert str(info.dispatch) == "Exact" and info.request.predicate == "role"
        hits = f.recall("What is Ana's role?", touch=False)
        assert [h.id for h in hits] == [src] and hits[0].lanes == {"exact": 1}
        assert other not in {h.id for h in hits}


def test_exact_kind_listing_newest_first(tmp_path):
    with _field(tmp_path) as f:
        old = f.remember("we use postgres for the schema", kind="decision", at=at(2023, 5, 3))
        new = f.remember("the schema keeps uuid keys", kind="decision", at=at(2023, 5, 20))
        f.remember("the schema diagram is on the wiki", at=at(2023, 5, 21))
        f.remember("deploys go out on fridays", kind="decision", at=at(2023, 5, 22))
        hits = f.recall("what did we decide about the schema in May?", touch=False)
        assert [h.id for h in hits] == [new, old]


def test_causal_dispatch_reads_symbol_events(tmp_path):
    with _field(tmp_path) as f:
        note = f.remember("test_parse failed after the tokenizer change")
        f.remember("parser.py is the module that tokenizes input")
        f.core.commit(ops.AnalyticsEvent(event="symbol_event", at_ms=5, outcome="TestFailed",
                                         symbol="test_parse", file_path="src/parser.py",
                                         memory_ids=(note,)))  # fmt: skip
        q = "which tests failed after I edited parser.py?"
        assert str(f.explain_route(q).dispatch) == "Causal"
        assert [h.id for h in f.recall(q, touch=False)] == [note]


def test_exact_with_nothing_falls_back_to_the_lanes_and_counts_an_error(tmp_path):
    with _field(tmp_path) as f:
        mid = f.remember("Bruno's email is bruno at example dot org")
        f.wait_embedded()
        hits = f.recall("what's Bruno's email?")  # the knowledge graph is empty
        assert mid in {h.id for h in hits}
        f.maintain()
        assert f.stats().router["router_error_rate"] == 1.0


def test_route_false_is_the_unrouted_recall(tmp_path):
    with _field(tmp_path) as f:
        for i in range(20):
            f.remember(f"note {i} about the deploy pipeline", at=at(2023, 5, 1 + i))
        f.wait_embedded()
        q = "what about the deploy pipeline"
        a = f.recall(q, k=5, touch=False, route=False)
        b = plain_recall(f.core, q, k=5, touch=False)
        assert [h.id for h in a] == [h.id for h in b]


def test_router_decisions_replay_deterministically(tmp_path):
    qs = ["When did Caroline go to the support group?", "what did we decide last week?",
          "what's Bruno's email?", "which tests failed after I edited parser.py?",
          "postgres pool settings", "what did he say?"]  # fmt: skip
    with _field(tmp_path) as f:
        f.remember("Caroline went to the support group yesterday", at=at(2023, 5, 8))
        f.remember("we decided to pin postgres 16", kind="decision")
        f.wait_embedded()
        for q in qs:
            f.recall(q)
        logged = [(r[2], r[3], r[4]) for r in f.core.organs[-1].requests]
        f.maintain()
        assert f.stats().router["replay_rate"] == 1.0
    for _ in range(2):  # two full replays of the log: the same log, the same decisions
        with chitta.open(tmp_path / "f", embedder=HashingEmbedder(64)) as f:
            organ = next(o for o in f.core.organs if o.name == "router")
            assert [(r[2], r[3], r[4]) for r in organ.requests] == logged
            for _seq, _at, q, ran, _ids, meta in organ.requests:
                assert route(parse(q, meta["at"])).kind.value == ran


def test_model_hook_fills_only_the_named_slot_and_is_logged(tmp_path):
    asked = []

    def hook(req, slot):
        asked.append((req.text, slot))
        return "Ana"

    with _field(tmp_path) as f:
        mid = f.remember("Ana said the budget is fine")
        f.wait_embedded()
        f.set_slot_filler(hook)
        f.recall("postgres pool settings")  # fully bound: the hook is not asked
        assert asked == []
        f.recall("what did she say about the budget?")
        assert asked == [("what did she say about the budget?", "subject")]
        organ = next(o for o in f.core.organs if o.name == "router")
        assert [(q, s, v) for _a, q, s, v in organ.fills] == [
            ("what did she say about the budget?", "subject", "Ana")
        ]
        f.maintain()
        r = f.stats().router
        assert r["slot_fills"] == 1 and r["token_displacement"] == pytest.approx(1 / 2)
        assert r["replay_rate"] == 1.0  # the fill is replayed from its op, the hook not asked
        assert len(asked) == 1 and mid


def test_bad_hook_value_is_an_error_and_logs_nothing(tmp_path):
    with _field(tmp_path) as f:
        f.remember("Ana said the budget is fine")
        f.set_slot_filler(lambda req, slot: 42)
        before = _applied(f)
        with pytest.raises(InvalidArgument, match="slot filler"):
            f.recall("what did she say about the budget?")
        assert _applied(f) == before
        with pytest.raises(InvalidArgument):
            f.set_slot_filler("not callable")  # type: ignore[arg-type]


def test_contradiction_yield_counts_new_pairs_per_pass(tmp_path):
    with _field(tmp_path) as f:
        f.remember("we deploy the api on fridays after noon", kind="decision")
        f.remember("we deploy the api on fridays is risky", kind="thought")
        f.maintain()
        first = f.stats().router["contradiction_yield"]
        f.core.maintenance_runs.clear()
        f.maintain()
        assert (first, f.stats().router["contradiction_yield"]) == (
            len(f.detect_contradictions()),
            0,
        )
        assert first == 1


def test_bad_input_is_an_error_and_changes_nothing(tmp_path):
    with _field(tmp_path) as f:
        f.remember("a note")
        before = _applied(f)
        with pytest.raises(InvalidArgument, match="unknown dispatch"):
            f.recall("a note", route="sideways")
        with pytest.raises(InvalidArgument, match="unknown dispatch"):
            f.recall(vector=[0.0] * 64, route="sideways")
        with pytest.raises(InvalidArgument, match="RecallRequest"):
            route("a note")  # type: ignore[arg-type]
        good = parse("a note", 0)
        for bad in (
            dataclasses.replace(good, kind_filter=("opinion",)),
            dataclasses.replace(good, time_from_ms=10, time_to_ms=5),  # an empty range
            dataclasses.replace(good, time_from_ms=10),  # half a range
            dataclasses.replace(good, causal_tool="Exploded"),
            dataclasses.replace(good, months=(13,)),
            dataclasses.replace(good, unbound=("mood",)),
            dataclasses.replace(good, role="boss"),
            dataclasses.replace(good, subject=""),
            dataclasses.replace(good, ref_ms="now"),  # type: ignore[arg-type]
        ):
            with pytest.raises(InvalidArgument, match="RecallRequest"):
                route(bad)
        with pytest.raises(InvalidArgument):
            f.explain_route("")
        with pytest.raises(InvalidArgument):
            f.explain_route("a note", ref_ms="yesterday")  # type: ignore[arg-type]
        assert _applied(f) == before


def test_request_is_frozen_and_validated_fields_listed():
    req = RecallRequest(text="x", ref_ms=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.subject = "Ana"  # type: ignore[misc]


def test_a_query_longer_than_the_ir_takes_runs_the_lanes(tmp_path):
    with _field(tmp_path) as f:
        mid = f.remember("deploy pipeline notes")
        f.wait_embedded()
        long_query = "deploy pipeline " * 400  # 6,400 characters, under recall's 32 KiB
        hits = f.recall(long_query, touch=False)
        assert [h.id for h in hits] == [
            h.id for h in f.recall(long_query, route=False, touch=False)
        ]
        assert mid in {h.id for h in hits}


def test_an_edited_text_gets_its_event_dates_again(tmp_path):
    with _field(tmp_path) as f:
        plain = f.remember("Caroline went to the support group yesterday", at=at(2023, 6, 20))
        told = f.remember("Caroline went to the support group today", at=at(2023, 5, 8))
        f.wait_embedded()
        q = "What did Caroline do on 7 May 2023?"
        # 19 June and 8 May: neither is 7 May, the tie goes to the lower id
        assert [h.id for h in f.recall(q, k=2, touch=False)] == [plain, told]
        f.update(told, text="Caroline went to the support group yesterday")
        f.wait_embedded()
        assert [h.id for h in f.recall(q, k=2, touch=False)] == [told, plain]
