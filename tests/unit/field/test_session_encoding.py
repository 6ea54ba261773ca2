"""Session-aware encoding (chitta/field/sessions.py): one rule for every write path.

Oracles: the rule written out here over the turn list (which earlier texts make each
memory's keyword and embedding contexts), the hashing embedder called directly on
those inputs (each vector), and the three write paths against each other.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from _deferred_embedders import Gated

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument
from chitta.field.importers import Turn, import_conversation
from chitta.field.sessions import EMBED_KEY
from chitta.recall.context import CONTEXT_KEY

D1 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
D2 = datetime(2023, 6, 1, 9, 0, tzinfo=timezone.utc)
TURNS = [
    Turn("Ana", "I adopted a dog last week.", "s1", D1),
    Turn("Ben", "What breed is it?", "s1", D1),
    Turn("Ana", "A beagle, very loud.", "s1", D1),
    Turn("Ben", "Did the beagle settle in?", "s2", D2),
    Turn("Ana", "Yes, it sleeps all day now.", "s2", D2),
    Turn("Ben", "And the neighbours?", "s1", D1),  # back to s1: its context is s1's
]


def _text(t: Turn) -> str:
    return f"{t.speaker}: {t.text}"


def _expected() -> list[tuple[str | None, str | None]]:
    """(keyword context, embedding context) of each turn, by the documented rule."""
    out = []
    for i, t in enumerate(TURNS):
        earlier = [_text(u) for u in TURNS[:i] if u.session == t.session]
        out.append(("\n".join(earlier[-2:]) or None, earlier[-1] if earlier else None))
    return out


def _docs() -> list[dict]:
    return [
        {"text": _text(t), "session": t.session, "at": t.at, "meta": {"speaker": t.speaker}}
        for t in TURNS
    ]


def _state(f: chitta.Field, ids: list[int]) -> list[tuple]:
    mems = [f.get(i) for i in ids]
    return [
        ((m.meta or {}).get(CONTEXT_KEY), (m.meta or {}).get(EMBED_KEY), np.array(m.embedding))
        for m in mems
    ]


def test_one_by_one_many_and_importer_encode_alike(tmp_path):
    results = {}
    with chitta.open(tmp_path / "one", embedder=HashingEmbedder(64)) as f:
        results["one"] = _state(f, [f.remember(**d) for d in _docs()])
    with chitta.open(tmp_path / "deferred", embedder=Gated(64)) as f:
        ids = [f.remember(**d) for d in _docs()]
        assert f.wait_embedded(timeout=30)
        results["deferred"] = _state(f, ids)
    with chitta.open(tmp_path / "many", embedder=HashingEmbedder(64)) as f:
        results["many"] = _state(f, f.remember_many(_docs()))
    with chitta.open(tmp_path / "import", embedder=HashingEmbedder(64)) as f:
        results["import"] = _state(f, import_conversation(f, TURNS))
    want = _expected()
    emb = HashingEmbedder(64)
    inputs = [_text(t) if e is None else f"{e}\n{_text(t)}" for t, (_, e) in zip(TURNS, want)]
    ref = emb.embed(inputs)
    for name, got in results.items():
        assert [(k, e) for k, e, _ in got] == want, name
        for (_, _, vec), r in zip(got, ref):
            assert np.allclose(vec / np.linalg.norm(vec), r / np.linalg.norm(r), atol=1e-6), name


def test_contexts_are_in_the_log_and_survive_reopen(tmp_path):
    root = tmp_path / "f"
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        ids = [f.remember(**d) for d in _docs()[:3]]
        before = _state(f, ids)
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        after = _state(f, ids)
        # the handle meets s1 again: its context comes from the field's memories of s1
        nxt = f.remember("Ben: How old is it?", session="s1", at=D1)
        assert f.get(nxt).meta[CONTEXT_KEY] == "Ben: What breed is it?\nAna: A beagle, very loud."
        assert f.get(nxt).meta[EMBED_KEY] == "Ana: A beagle, very loud."
    for (k1, e1, v1), (k2, e2, v2) in zip(before, after):
        assert (k1, e1) == (k2, e2) and np.array_equal(v1, v2)


def test_a_context_in_the_callers_meta_wins(tmp_path):
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder(64)) as f:
        f.remember("first", session="s")
        mid = f.remember("second", session="s", meta={CONTEXT_KEY: "mine", EMBED_KEY: ""})
        m = f.get(mid)
        assert m.meta == {CONTEXT_KEY: "mine", EMBED_KEY: ""}
        assert np.allclose(m.embedding, HashingEmbedder(64).embed(["second"])[0], atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"session": 7},
        {"session": ""},
        {"session": ["s1"]},
        {"at": "yesterday"},
        {"at": datetime.now(timezone.utc) + timedelta(days=30)},
        {"at": 4e10},
        {"at": float("nan")},
    ],
)
def test_bad_session_or_time_writes_nothing(tmp_path, kwargs):
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder(64)) as f:
        f.remember("kept", session="s")
        n, applied = len(f), f.stats().records_applied
        with pytest.raises(InvalidArgument):
            f.remember("refused", **kwargs)
        with pytest.raises(InvalidArgument):
            f.remember_many([{"text": "refused too", **kwargs}])
        assert len(f) == n and f.stats().records_applied == applied
        ok = f.remember("after", session="s")
        assert f.get(ok).meta[CONTEXT_KEY] == "kept"  # the refused ones left no context


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Ana: I adopted a dog.", "Ana"),
        ("Mary Jane Watson: hello there", "Mary Jane Watson"),
        ("O'Brien: fine", "O'Brien"),
        ("Note: the deploy needs the VPN", None),
        ("TODO: rotate the keys", None),
        ("the caroline: lowercase first word", None),
        ("Ana:no space after the colon", None),
        ("One Two Three Four: too many words", None),
        ("plain text without a label", None),
    ],
)
def test_a_transcript_line_names_its_speaker(tmp_path, text, who):
    with chitta.open(tmp_path / "f", embedder=None) as f:
        with_session = f.get(f.remember(text, session="s")).meta or {}
        without = f.get(f.remember(text)).meta or {}
        own = f.get(f.remember(text, session="s", meta={"speaker": "Zed"})).meta
    assert with_session.get("speaker") == who
    assert "speaker" not in without  # only session writes are read as transcript lines
    assert own["speaker"] == "Zed"  # the caller's word wins
