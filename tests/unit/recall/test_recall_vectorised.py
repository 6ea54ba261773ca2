"""The vectorised recall scorer against the per-candidate one it replaced.

Oracle: tests/helpers/_recall_reference.py, the old engine loop (one
``Scorer.score`` per candidate, one dot product per cosine). On random fields
with every scoring input varied (kinds, event times, confidence, strength,
tiers, staged and recalled memories, access traces, superseding and
contradicting edges, forgotten memories, filters, lane subsets) both must
return the same ids in the same order, scores within 1e-9, the same lanes,
fused scores, memories and explanations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _recall_reference import reference_recall, same_hits

import chitta
from chitta import ops
from chitta.errors import InvalidArgument
from chitta.recall.blas import one_thread
from chitta.recall.factors import FactorSettings
from chitta.recall.scorer import CandidateBatch, CandidateView, Scorer, access_columns

T0 = 1_790_000_000.0
DAY = 86_400.0
WORDS = [f"w{i}" for i in range(60)]
KINDS = ("observation", "decision", "lesson", "thought", "episode", "code_fact")
LANE_SETS = (
    None,
    ("bm25",),
    ("dense",),
    ("posting",),
    ("bm25", "neighbour"),
    ("dense", "posting", "neighbour"),
)


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def random_field(
    root: Path, seed: int, n: int = 300
) -> tuple[chitta.Field, Clock, np.random.Generator]:
    rng = np.random.default_rng(seed)
    clock = Clock(T0)
    f = chitta.open(root, embedder="hashing", clock=clock)
    items = []
    for _ in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(3, 9)))
        items.append(
            {
                "text": " ".join(words),
                "kind": str(rng.choice(KINDS)),
                "realm": str(rng.choice(["a", "b"])),
                "confidence": float(rng.choice([1.0, 0.5, rng.random()])),
                "at": T0 - float(rng.choice([0.0, 1.0, rng.random() * 400 * DAY])),
            }
        )
    ids = f.remember_many(items)
    for mid in rng.choice(ids, 30, replace=False).tolist():
        f.update(mid, strength=float(rng.choice([0.0, 0.3, 2.5])), confidence=float(rng.random()))
    for mid in rng.choice(ids, 20, replace=False).tolist():
        f.core.commit_group(
            [ops.DemoteMemory(id=mid, tier=int(rng.integers(1, 4)), at_ms=int(clock.t * 1000))]
        )
    for _ in range(15):
        a, b = rng.choice(ids, 2, replace=False).tolist()
        f.link(a, b, str(rng.choice(["Supersedes", "Contradicts", "RelatedTo"])))
    for _ in range(25):  # access traces, promotions out of the write gate, CoRetrieved edges
        clock.t += float(rng.random() * 3 * DAY)
        f.recall(" ".join(rng.choice(WORDS, 3)), k=int(rng.integers(1, 6)))
    for mid in rng.choice(ids, 10, replace=False).tolist():
        f.forget(mid)
    clock.t += float(rng.random() * DAY)
    return f, clock, rng


def query_args(
    f: chitta.Field, rng: np.random.Generator, lanes: tuple[str, ...] | None
) -> dict[str, object]:
    text = " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))
    vec = f.core.encoding.embed([text])[0]
    vec = vec / np.linalg.norm(vec)
    enc = f.core.encoder_organ.encoder
    code = enc.encode(vec[None, :]).features[0] if enc is not None else None
    filters = rng.choice(
        [
            {},
            {"realm": "a"},
            {"include_staged": False},
            {"kinds": frozenset({"decision", "lesson"})},
        ]
    )
    return {
        "text": text,
        "vector": vec,
        "code": code,
        "k": int(rng.choice([1, 5, 10, 30])),
        "allowed": f.core.index.allowed(**filters),
        "now_ms": f.core.now_ms(),
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vectorised_recall_equals_the_per_candidate_reference(tmp_path: Path, seed: int) -> None:
    f, _clock, rng = random_field(tmp_path / "f", seed)
    compared = 0
    with f, one_thread():
        for _ in range(40):
            lanes = LANE_SETS[int(rng.integers(len(LANE_SETS)))]
            engine = f.core.engine if lanes is None else f.core.engine.with_lanes(lanes)
            args = query_args(f, rng, lanes)
            for explain in (False, True):
                new = engine.recall(**args, explain=explain)  # type: ignore[arg-type]
                ref = reference_recall(engine, **args, explain=explain)  # type: ignore[arg-type]
                same_hits(new, ref)
                compared += len(new)
    assert compared > 500  # the fields and filters left real work to compare


def test_field_recall_equals_the_reference_with_filters(tmp_path: Path) -> None:
    f, _clock, rng = random_field(tmp_path / "f", 7, n=200)
    with f:
        for realm in (None, "a"):
            hits = f.recall("w1 w2 w3", k=15, realm=realm, explain=True, touch=False)
            args = query_args(f, rng, None)
            vec = f.core.encoding.embed(["w1 w2 w3"])[0]
            args.update(
                text="w1 w2 w3",
                vector=vec / np.linalg.norm(vec),
                k=15,
                allowed=f.core.index.allowed(realm=realm),
            )
            args["code"] = f.core.encoder_organ.encoder.encode(args["vector"][None, :]).features[0]
            same_hits(hits, reference_recall(f.core.engine, **args, explain=True))  # type: ignore[arg-type]
            assert hits


def test_score_batch_is_bit_for_bit_score_on_edge_values() -> None:
    now = 1_700_000_000_000
    rng = np.random.default_rng(5)
    views = []
    for i in range(400):
        created = now - int(
            rng.choice([0, -5000, 500, 10**6, int(rng.random() * 10**12)])
        )  # incl. future times
        trace = tuple(
            [created]
            + sorted(int(now - rng.random() * 10**9) for _ in range(int(rng.integers(0, 40))))
        )
        views.append(
            CandidateView(
                fused=float(rng.choice([0.0, rng.random()])),
                cosine=rng.choice([None, -0.3, 0.0, float(rng.random())]),
                access_ms=trace,
                created_ms=created,
                confidence=float(rng.random()),
                strength=float(rng.choice([-1.0, 0.0, 1.0, rng.random() * 5])),
                staged=bool(rng.random() < 0.5),
                tier=int(rng.integers(-1, 4)),
                kind=str(rng.choice([*KINDS, "unknown-kind"])),
                suppressed=float(rng.choice([1.0, 0.6, 0.3])),
            )
        )
    offsets, flat = access_columns([v.access_ms for v in views])
    batch = CandidateBatch(
        fused=np.array([v.fused for v in views]),
        cosine=np.array([np.nan if v.cosine is None else v.cosine for v in views]),
        access_offsets=offsets,
        access_ms=flat,
        created_ms=np.array([v.created_ms for v in views], np.int64),
        confidence=np.array([v.confidence for v in views]),
        strength=np.array([v.strength for v in views]),
        staged=np.array([v.staged for v in views]),
        tier=np.array([v.tier for v in views], np.int64),
        kind=[v.kind for v in views],
        suppressed=np.array([v.suppressed for v in views]),
    )
    odd = FactorSettings(
        w_fused=0.7,
        w_similarity=0.3,
        w_activation=0.2,
        w_freshness=0.15,
        freshness_rate=0.05,
        actr_decay=0.7,
        staged_multiplier=0.5,
        tier_step=0.4,
        kind_weights={"decision": 1.7},
    )
    for scorer in (Scorer(), Scorer(odd)):
        for best in (0.0, 0.7):
            got = scorer.score_batch(batch, best_fused=best, now_ms=now)
            want = [scorer.score(v, best_fused=best, now_ms=now)[0] for v in views]
            assert got.tolist() == want
    assert all(batch.view(i) == v for i, v in enumerate(views))


def test_score_batch_refuses_malformed_access_columns() -> None:
    one = np.ones(1)
    bad = CandidateBatch(
        one,
        one,
        np.array([0, 5], np.int64),
        np.zeros(2, np.int64),
        np.zeros(1, np.int64),
        one,
        one,
        np.zeros(1, bool),
        np.zeros(1, np.int64),
        ["observation"],
        one,
    )
    with pytest.raises(InvalidArgument):
        Scorer().score_batch(bad, best_fused=1.0, now_ms=0)


def test_an_empty_batch_scores_nothing() -> None:
    empty = CandidateBatch(
        np.zeros(0),
        np.zeros(0),
        np.zeros(1, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0, bool),
        np.zeros(0, np.int64),
        [],
        np.zeros(0),
    )
    assert Scorer().score_batch(empty, best_fused=1.0, now_ms=0).shape == (0,)
