"""Recall through the Field: filters inside lanes, the write gate with a
controllable clock, budgets, explanations, reopening, embedder records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta import errors
from chitta.encode import HashingEmbedder

DAY = 86_400.0
T0 = 1_790_000_000.0  # epoch seconds


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


NOTES = [
    ("the staging server listens on port 8080", "ops", "s1", "codex-cli", "observation"),
    (
        "production listens on port 8443 behind the load balancer",
        "ops",
        "s1",
        "codex-cli",
        "observation",
    ),
    ("deploys happen on tuesdays after the standup", "ops", "s2", "claude", "decision"),
    ("priya owns the on-call rotation in december", "people", "s2", "claude", "observation"),
    (
        "marco reviews every c++ change and asks for a sanitizer run",
        "people",
        "s3",
        "claude",
        "observation",
    ),
    ("the flaky integration test races the database container", "ci", "s3", "codex-cli", "thought"),
]


@pytest.fixture
def field(tmp_path: Path) -> chitta.Field:
    clock = Clock()
    f = chitta.open(tmp_path / "field", embedder="hashing", clock=clock)
    f.test_clock = clock  # type: ignore[attr-defined]
    for text, realm, session, tool, kind in NOTES:
        f.remember(text, realm=realm, session=session, source_tool=tool, kind=kind)
    yield f
    f.close()


def test_keyword_query_finds_its_memory_first(field: chitta.Field) -> None:
    hits = field.recall("which port does staging listen on", k=3, touch=False)
    assert hits[0].text == NOTES[0][0]
    assert "bm25" in hits[0].lanes and hits[0].lanes["bm25"] == 1
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    "filters,allowed",
    [
        ({"realm": "people"}, {3, 4}),
        ({"session": "s1"}, {0, 1}),
        ({"harness": "codex"}, {0, 1, 5}),
        ({"kinds": ["decision", "thought"]}, {2, 5}),
        ({"realm": "ops", "harness": "claude-code"}, {2}),
    ],
)
def test_filters_apply_inside_lanes_and_k_results_come_back(
    field: chitta.Field, filters: dict[str, object], allowed: set[int]
) -> None:
    texts = {NOTES[i][0] for i in allowed}
    # a query that matches other memories best: filtering after ranking would lose these
    hits = field.recall("staging port 8080 listens", k=len(allowed), touch=False, **filters)  # type: ignore[arg-type]
    assert {h.text for h in hits} == texts


def test_time_filters_use_event_time(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        old = f.remember("release notes for version one", at=T0 - 30 * DAY)
        new = f.remember("release notes for version two", at=T0)
        assert [h.id for h in f.recall("release notes", since=T0 - DAY, touch=False)] == [new]
        assert [h.id for h in f.recall("release notes", until=T0 - DAY, touch=False)] == [old]
        assert f.get(old).created_ms == int((T0 - 30 * DAY) * 1000)


def test_first_recall_promotes_staged_and_staged_ones_are_ranked_lower(field: chitta.Field) -> None:
    assert field.write_gate_stats()["staged_count"] == len(NOTES)
    (hit,) = field.recall("priya on-call rotation", k=1, explain=True)
    staged = {x.name: x.value for x in hit.factors}["staged"]
    assert staged == 0.80  # scored while still staged
    assert field.write_gate_stats()["staged_count"] == len(NOTES) - 1
    assert field.get(hit.id).access_count == 1
    (again,) = field.recall("priya on-call rotation", k=1, explain=True)
    assert {x.name: x.value for x in again.factors}["staged"] == 1.0
    assert again.score > hit.score
    only_promoted = field.recall("priya on-call rotation marco", include_staged=False, touch=False)
    assert [h.id for h in only_promoted] == [hit.id]


def test_stale_staged_memories_are_pruned_after_seven_days(field: chitta.Field) -> None:
    kept = field.recall("marco sanitizer", k=1)[0].id  # recalled: no longer staged
    field.test_clock.t += 8 * DAY  # type: ignore[attr-defined]
    fresh = field.remember("written today, never recalled")
    assert field.write_gate_stats()["oldest_staged_age_days"] == pytest.approx(8.0)
    decision = next(m.id for m in field.memories() if m.kind == "decision")  # never pruned
    pruned = field.write_gate_pass()
    assert pruned == len(NOTES) - 2
    assert set(field.ids()) == {kept, fresh, decision}
    with chitta.open(
        field.path, read_only=True, embedder="hashing"
    ) as again:  # the prune is in the log
        assert set(again.ids()) == {kept, fresh, decision}


def test_write_gate_pass_reads_only_the_old_end_of_the_staged_queue(field: chitta.Field) -> None:
    field.test_clock.t += 8 * DAY  # type: ignore[attr-defined]
    young = field.remember_many(
        [f"young note {i}" for i in range(2000)]
    )  # the gate runs by itself here
    decision = next(m.id for m in field.memories() if m.kind == "decision")  # never pruned
    assert set(field.ids()) == set(young) | {decision}  # the other old staged ones went
    reads: list[int] = []
    real_get = field.core.memories.get
    field.core.memories.get = lambda mid: reads.append(mid) or real_get(mid)  # type: ignore[method-assign]
    assert field.write_gate_pass() == 0
    # the kept old one, then the first young one stops the pass: it does not scan 2,000
    assert reads == [decision, young[0]]


def test_budget_keeps_whole_memories_in_rank_order(field: chitta.Field) -> None:
    hits = field.recall("port listens staging production", k=4, touch=False)
    lines = [f"- [{h.memory.kind}] {h.text}\n" for h in hits]
    sizes = [len(x.encode()) for x in lines]
    budget = sizes[0] + sizes[2] + 1  # the second does not fit after the first; the third does
    if sizes[1] <= sizes[2]:
        budget = sizes[0] + max(sizes[1:]) - 1  # fallback shape: take whatever fits, never truncate
    fitted = field.recall("port listens staging production", k=4, budget_bytes=budget, touch=False)
    rendered = field.render(fitted, budget)
    assert len(rendered.encode()) <= budget
    for h in fitted:
        assert f"- [{h.memory.kind}] {h.text}\n" in rendered  # whole lines only
    assert [h.id for h in fitted] == [h.id for h in hits if h.id in {x.id for x in fitted}]
    assert fitted[0].id == hits[0].id
    assert field.recall("port", k=3, budget_bytes=0, touch=False) == []


def test_explain_lists_every_factor_and_lanes(field: chitta.Field) -> None:
    (hit,) = field.recall("deploys tuesdays", k=1, explain=True, touch=False)
    names = [x.name for x in hit.factors]
    assert names[:4] == ["fused", "similarity", "activation", "freshness"]
    assert {"confidence", "strength", "staged", "tier", "kind"} <= set(names)
    assert "fused" in hit.explain() and str(hit.id) in hit.explain() and hit.lanes
    (plain,) = field.recall("deploys tuesdays", k=1, touch=False)
    assert plain.factors == () and plain.score == pytest.approx(hit.score)


def test_recall_after_reopen_equals_recall_before(tmp_path: Path) -> None:
    clock = Clock()
    with chitta.open(tmp_path / "f", embedder="hashing", clock=clock) as f:
        for text, *_ in NOTES:
            f.remember(text)
        f.recall("priya", k=1)  # a touch, so state is not only puts
        before = [
            (h.id, round(h.score, 9), h.lanes)
            for h in f.recall("port production load balancer", touch=False)
        ]
    with chitta.open(tmp_path / "f", embedder="hashing", clock=clock, read_only=True) as f:
        after = [
            (h.id, round(h.score, 9), h.lanes) for h in f.recall("port production load balancer")
        ]
    assert before == after and before


def test_triplets_are_glossed_into_a_linked_alias(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        t_id, a_id = f.remember_triplet("jeff", "uses", "rust")
        assert f.get(a_id).text == "Jeff uses rust." and f.get(a_id).kind == "alias"
        assert f.get(t_id).text == "jeff | uses | rust" and f.get(t_id).meta == {
            "triplet": ["jeff", "uses", "rust"]
        }
        assert f.get(a_id).embedding.tolist() == f.get(t_id).embedding.tolist()  # type: ignore[union-attr]
        ids = [h.id for h in f.recall("what does jeff use", k=5, touch=False)]
        assert a_id in ids and t_id in ids
    records = list(chitta.field.inspect.iter_records(tmp_path / "f"))
    (group,) = [r for r in records if r["op"] == "Batch"]
    inner = [x["op"] for x in group["fields"]["ops"]]
    assert inner.count("PutPayload") == 2 and "AddAssocEdge" in inner  # one atomic group
    edge = next(x for x in group["fields"]["ops"] if x["op"] == "AddAssocEdge")["fields"]
    assert (edge["src"], edge["dst"], edge["edge"]) == (a_id, t_id, "AliasOf")


def test_neighbour_lane_brings_co_retrieved_memories(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        x = f.remember("the alpha project deadline is friday")
        y = f.remember("the deadline moved because of the outage")
        f.remember("unrelated note about lunch")
        top = [h.id for h in f.recall("alpha deadline outage", k=2)]  # touches link the top hits
        assert set(top) == {x, y}
        hits = f.recall("alpha project", k=5, lanes=("bm25", "neighbour"), touch=False)
        by_id = {h.id: h for h in hits}
        assert by_id[x].lanes.get("bm25") == 1
        assert y in by_id and by_id[y].lanes == {
            "neighbour": 1
        }  # no keyword match: only the edge brings it


def test_caller_vectors_are_recorded_and_never_mixed_with_a_model(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((5, 16)).astype(np.float32)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        ids = [f.remember(f"memory {i}", embedding=vecs[i]) for i in range(5)]
        hits = f.recall(vector=vecs[3], k=1, touch=False)
        assert hits[0].id == ids[3] and hits[0].lanes.get("dense") == 1
        with pytest.raises(errors.InvalidArgument):
            f.remember("another size", embedding=np.ones(8, np.float32))
    with chitta.open(tmp_path / "f") as f:  # "auto" keeps caller-supplied fields model-free
        assert f.recall(vector=vecs[1], k=1, touch=False)[0].id == ids[1]


def test_mismatched_embedder_is_refused_unless_reembedding(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder(384)) as f:
        mid = f.remember("the staging server listens on port 8080")
    with pytest.raises(errors.EmbedderMismatch):
        chitta.open(tmp_path / "f", embedder=HashingEmbedder(128))
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder(128), reembed=True) as f:
        assert f.get(mid).embedding is not None and f.get(mid).embedding.shape == (128,)  # type: ignore[union-attr]
        assert f.recall("staging port", k=1, touch=False)[0].id == mid
    with chitta.open(
        tmp_path / "f", embedder=HashingEmbedder(128)
    ) as f:  # now recorded as the 128-d family
        assert f.stats().embedding_dim in (128, 384)
        assert f.recall("staging port", k=1, touch=False)[0].id == mid


@pytest.mark.parametrize(
    "kwargs",
    [
        {"query": ""},
        {"query": 5},
        {"query": "x", "k": 0},
        {"query": "x", "k": True},
        {"query": "x", "kinds": ["gossip"]},
        {"query": "x", "lanes": ["bm25", "telepathy"]},
        {"query": "x", "lanes": []},
        {"query": "x", "budget_bytes": -1},
        {"query": "x", "since": "yesterday"},
        {"query": None},
        {"query": "x", "vector": [float("nan")] * 384},
        {"query": "x", "vector": [1.0, 2.0]},
    ],
)
def test_bad_recall_arguments(field: chitta.Field, kwargs: dict[str, object]) -> None:
    applied = field.stats().records_applied
    query = kwargs.pop("query")
    with pytest.raises(errors.InvalidArgument):
        field.recall(query, **kwargs)  # type: ignore[arg-type]
    assert field.stats().records_applied == applied  # no touch was written


def test_reencode_rewrites_only_codes_whose_features_changed(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        ids = f.remember_many(
            [f"note {i} about topic {i % 7} and project {i % 3}" for i in range(300)]
        )
        before = {mid: f.core.index.code_features(mid) for mid in ids}
        version = f.learn_encoder()
        assert version == 1
        rewritten = f.reencode()
        encoder = f.core.encoder_organ.encoder
        import numpy as np

        vecs = np.stack([f.core.index.vector(mid) for mid in ids])
        now = encoder.encode(vecs).features
        expected = sum(1 for i, mid in enumerate(ids) if tuple(now[i]) != before[mid])
        assert rewritten == expected
        assert all(f.core.index.code_features(mid) == tuple(now[i]) for i, mid in enumerate(ids))
        assert f.reencode() == 0  # nothing left to change
