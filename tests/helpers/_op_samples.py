"""Ops for the tests of chitta.ops: one hand-written sample per op type (every
field set away from its default) and a hypothesis strategy for any plain op."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
from hypothesis import strategies as st

from chitta import ops
from chitta.ops import OP_CLASSES, Batch

EMB = np.arange(8, dtype="<f4").tobytes()


# ------------------------------------------------------- value generation


def _json_values() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63 - 1)
        | st.floats(allow_nan=False)
        | st.text(max_size=8)
        | st.binary(max_size=8)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    )


def _strategy(t: msgspec.inspect.Type) -> st.SearchStrategy[Any]:
    mi = msgspec.inspect
    if isinstance(t, mi.IntType):
        lo = t.ge if t.ge is not None else -(2**63)
        hi = t.le if t.le is not None else (2**64 - 1 if lo == 0 else 2**63 - 1)
        return st.integers(lo, hi)
    if isinstance(t, mi.FloatType):
        return st.floats(allow_nan=False)
    if isinstance(t, mi.StrType):
        return st.text(max_size=20)
    if isinstance(t, mi.BytesType):
        return st.binary(max_size=32)
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.UnionType):
        return st.one_of(*[_strategy(x) for x in t.types])
    if isinstance(t, mi.VarTupleType):
        return st.lists(_strategy(t.item_type), max_size=4).map(tuple)
    if isinstance(t, mi.DictType):
        return st.dictionaries(st.text(max_size=6), _json_values(), max_size=3)
    if isinstance(t, mi.AnyType):
        return _json_values()
    if isinstance(t, mi.StructType):
        return st.builds(t.cls, **{f.name: _strategy(f.type) for f in t.fields})
    raise NotImplementedError(t)


PLAIN_CLASSES = [cls for cls in OP_CLASSES.values() if cls is not Batch]


def ops_of(cls: type[ops.OpBase]) -> st.SearchStrategy[ops.Op]:
    """Any op of the plain op class ``cls``, every field drawn from its type."""
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    return st.builds(cls, **{f.name: _strategy(f.type) for f in info.fields})


@st.composite
def plain_ops(draw: st.DrawFn) -> ops.Op:
    op: ops.Op = draw(ops_of(draw(st.sampled_from(PLAIN_CLASSES))))
    return op


# One hand-written op per type, every field set away from its default.
SAMPLES: list[ops.Op] = [
    ops.PutPayload(
        id=2**64 - 2,  # the largest id a put may carry (2**64-1 is reserved: ops.RESERVED_ID)
        text="the build uses scikit-build-core",
        kind="decision",
        created_ms=1_700_000_000_000,
        realm="proj:chitta",
        session="s-1",
        source_tool="codex-cli",
        harness="codex",
        tags=("build", "python"),
        confidence=0.8,
        strength=0.5,
        embedding=EMB,
        meta={"b": [1, 2.5, None], "a": {"nested": b"\x00\x01"}},
        artifacts=("pyproject.toml",),
        written_ms=1700000000123,
    ),
    ops.UpdateState(id=1, at_ms=5, strength=0.9, confidence=0.1, decay_rate=0.01, touch=True),
    ops.DeleteMemory(id=3, at_ms=-1),
    ops.AddAssocEdge(src=1, dst=2, edge="Contradicts", weight=0.3, at_ms=9),
    ops.UpsertArtifact(path="src/a.py", repo_root="/repo", content_hash="abc", at_ms=4),
    ops.AddTriplet(
        subject="jeff",
        predicate="uses",
        object="rust",
        weight=2.0,
        valid_from_ms=7,
        source_memory_id=11,
        confidence=0.7,
        recorded_ms=9,
    ),
    ops.InvalidateTriplet(
        subject="jeff", predicate="uses", object="rust", at_ms=8, reason="moved", recorded_ms=10
    ),
    ops.UpsertSymbol(
        name="chitta.ops.decode",
        kind="function",
        file_path="chitta/ops/__init__.py",
        project="chitta",
        line_start=10,
        line_end=20,
        signature="def decode(op_type, payload)",
        description="decode one payload",
        embedding=EMB,
        at_ms=3,
        session="s",
        harness="claude-code",
        memory_id=4,
        body_hash="b1",
    ),
    ops.RemoveSymbol(name="chitta.ops.decode", at_ms=3),
    ops.AddSymCallEdge(caller="a", callee="b", at_ms=1),
    ops.RemoveSymCallEdge(caller="a", callee="b", at_ms=2),
    ops.UpsertCodeFile(
        path="chitta/ops/__init__.py",
        project="chitta",
        mtime_ms=5,
        content_hash="h",
        language="python",
        deleted=True,
    ),
    ops.UpdateSparseCode(
        id=5, features=(3, 70, 16383), activations=np.ones(3, "<f4").tobytes(), encoder_version=2
    ),
    ops.UpdateSparseCodeU8(
        id=5,
        feature_deltas=np.array([3, 67, 16313], "<u2").tobytes(),
        levels=bytes([255, 7, 128]),
        scale=0.25,
        encoder_version=2,
    ),
    ops.DemoteMemory(id=5, tier=2, at_ms=6),
    ops.TrainPQ(
        version=1,
        dim=8,
        subquantizers=2,
        bits=1,
        codebooks=np.zeros(16, "<f4").tobytes(),
        trained_ms=3,
        sample_count=100,
    ),
    ops.UpdateResidualPQ(id=5, codes=bytes(32), pq_version=1),
    ops.SessionEvent(
        event="message_send",
        session="s1",
        at_ms=1,
        harness="codex",
        pid=42,
        cwd="/w",
        message_id=7,
        to_session="s2",
        body="hi",
    ),
    ops.TranscriptEvent(
        event="create_episode",
        transcript="t1",
        at_ms=1,
        session="s1",
        path="/t.jsonl",
        offset=100,
        turn=3,
        role="user",
        text="hello",
        first_turn=1,
        last_turn=3,
        memory_id=9,
    ),
    ops.TaskEvent(
        event="progress",
        task="dream-1",
        at_ms=1,
        kind="dream",
        session="s",
        title="consolidate",
        progress=0.5,
        detail="half",
        meta={"k": 1},
    ),
    ops.UserModelEvent(
        event="upsert", kind="person", key="ada", at_ms=1, payload={"x": [1]}, confidence=0.9
    ),
    ops.ThemeEvent(
        event="assign_member",
        theme=3,
        at_ms=1,
        label="builds",
        centroid=EMB,
        coherence=0.8,
        member=10,
        realm="r",
    ),
    ops.AnalyticsEvent(
        event="symbol_event",
        at_ms=1,
        session="s",
        harness="codex",
        memory_ids=(1, 2),
        query="q",
        outcome="TestFailed",
        value=1.5,
        symbol="a.b",
        file_path="a.py",
        ref="deadbeef",
    ),
    ops.ClearProject(project="chitta", at_ms=5),
    ops.UpdateSymbolDescription(name="a.b", description="does b", at_ms=2),
    ops.UpdateMemoryContent(id=1, at_ms=2, text="new", embedding=EMB, tags=(), meta={"z": 0}),
    ops.AssertFact(
        id=1, predicate="depends_on", args=("a", "b"), at_ms=1, source_memory_id=2, confidence=0.5
    ),
    ops.RetractFact(id=1, at_ms=2),
    ops.BranchEvent(
        event="resolve",
        branch=2,
        at_ms=1,
        parent=1,
        hypothesis="h",
        outcome="won",
        memory_ids=(4,),
    ),
    ops.TriggerEvent(
        event="fire", trigger=1, at_ms=1, pattern="p", action="a", memory_id=3, context="c"
    ),
    ops.PredictorEvent(event="transition", to_id=2, at_ms=1, from_id=1, delta=0.25),
    ops.RecordSurprise(
        expected="ok",
        actual="error",
        surprise=0.8,
        at_ms=1,
        source="patch_file",
        memory_ids=(1,),
        latency_ms=300,
        expected_latency_ms=100,
        uncertainty=0.2,
        session="s",
    ),
    ops.RegisterDebt(
        id=1,
        question="why is replay slow?",
        at_ms=1,
        hypotheses=("gc", "io"),
        tests=("disable gc",),
        memory_ids=(3,),
        priority=0.9,
        realm="r",
    ),
    ops.UpdateDebt(
        id=1, status="deferred", at_ms=2, resolution="-", defer_until_ms=9, priority=0.1
    ),
    ops.UpdateSourceWeight(domain="code", source="bm25", weight=0.7, at_ms=1, alpha=3.0, beta=2.0),
    ops.RecordFeedback(
        domain="code",
        source="bm25",
        useful=True,
        at_ms=1,
        memory_id=2,
        query="q",
        session="s",
        note="n",
    ),
    ops.UpdateSurpriseCredit(
        id=1, credit=-0.8, streak=-2, at_ms=1, strength_delta=-0.08, surprise=0.9
    ),
    ops.UpsertWisdomCandidate(
        cluster_key="k",
        statement="small hunks apply cleanly",
        at_ms=1,
        support=4,
        sessions=("s1", "s2"),
        contradictions=1,
        score=0.75,
        evidence=(1, 2),
        realm="r",
    ),
    ops.UpdateWisdomLifecycle(
        cluster_key="k", stage="trusted", at_ms=2, memory_id=12, reason="promoted"
    ),
    ops.UpdateScorerModel(
        model_version=3,
        baseline_version=1,
        at_ms=1,
        factors=(ops.FactorDelta(factor="recency", delta=0.1, min_delta=-0.2, max_delta=0.2),),
        ewma_loss=0.3,
        outcome_count=17,
    ),
    ops.AttachDebtEvidence(
        debt_id=1, memory_ids=(2, 3), confidence=0.75, at_ms=1, note="n", hypothesis=1
    ),
    ops.UpdateSparseEncoder(
        version=3,
        dim=2,
        n_features=16,
        seed=7,
        rows=(1, 9),
        atoms=np.array([[0.6, 0.8], [1.0, 0.0]], "<f4").tobytes(),
        active=4,
        at_ms=5,
        thresholds=np.linspace(-0.5, 0.5, 16, dtype="<f4").tobytes(),
    ),
    ops.ConfigureField(key="embedder", value={"name": "m@abc", "family": "f", "dim": 384}, at_ms=1),
    ops.CuratedEvent(
        event="declare",
        key="samples",
        at_ms=1,
        text="the sample domain",
        kind="fact",
        fields={"source": "s"},
        scope="global",
        paths=("samples/a",),
        refs=("01ARZ3NDEKTSV4RRFFQ69G5FAV",),
        outcome="ok",
        blob=b"b",
        provenance="human",
    ),
    ops.ProvenanceEvent(
        event="assign",
        id=7,
        at_ms=1,
        provenance="open_weight_generated",
        candidate=True,
        signal="tool_outcome",
        note="n",
    ),
]
