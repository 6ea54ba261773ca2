"""chitta.field.importers.conversation: one memory per turn, context-window vectors."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.encode import HashingEmbedder
from chitta.field.importers import Turn, import_conversation

D1 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
D2 = datetime(2023, 5, 25, 9, 0, tzinfo=timezone.utc)
TURNS = [
    Turn("Ana", "I adopted a dog named Pixel.", "s1", D1, {"turn": "a"}),
    Turn("Ben", "What breed is it?", "s1", D1),
    Turn("Ana", "A beagle, very loud.", "s1", D1),
    Turn("Ben", "How is Pixel doing?", "s2", D2),
    Turn("Ana", "Great, we hike every weekend.", "s2", D2),
]


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_each_turn_is_one_memory_with_speaker_session_and_date(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        ids = import_conversation(field, TURNS)
        mems = [field.get(i) for i in ids]
    assert [m.text for m in mems] == [f"{t.speaker}: {t.text}" for t in TURNS]
    assert [m.session for m in mems] == ["s1", "s1", "s1", "s2", "s2"]
    assert mems[0].created_ms == int(D1.timestamp() * 1000)
    assert mems[3].created_ms == int(D2.timestamp() * 1000)
    assert mems[0].meta == {"speaker": "Ana", "turn": "a"}
    assert all(m.embedding is None for m in mems)


def test_vectors_embed_the_previous_turn_of_the_same_session_only(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    with chitta.open(tmp_path / "f", embedder=emb) as field:
        ids = import_conversation(field, TURNS, context_turns=1)
        got = [field.get(i).embedding for i in ids]
    lines = [f"{t.speaker}: {t.text}" for t in TURNS]
    expected = [
        lines[0],
        lines[0] + "\n" + lines[1],
        lines[1] + "\n" + lines[2],
        lines[3],
        lines[3] + "\n" + lines[4],
    ]
    want = emb.embed(expected)
    for g, w in zip(got, want):
        np.testing.assert_allclose(unit(g), unit(w), atol=1e-6)


def test_context_turns_zero_embeds_each_turn_alone(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    with chitta.open(tmp_path / "f", embedder=emb) as field:
        ids = import_conversation(field, TURNS, context_turns=0)
        got = np.stack([field.get(i).embedding for i in ids])
    want = emb.embed([f"{t.speaker}: {t.text}" for t in TURNS])
    np.testing.assert_allclose(
        got / np.linalg.norm(got, axis=1, keepdims=True),
        want / np.linalg.norm(want, axis=1, keepdims=True),
        atol=1e-6,
    )


def test_the_field_records_its_own_embedder_and_reopens(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder()) as field:
        import_conversation(field, TURNS, context_turns=2)
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder()) as field:  # no EmbedderMismatch
        assert len(field) == len(TURNS)
        hits = field.recall("beagle", k=1, touch=False)
        assert hits[0].text == "Ana: A beagle, very loud."


def test_dict_turns_are_accepted(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        ids = import_conversation(field, [{"speaker": "Ana", "text": "hi", "session": "s1"}])
        assert field.get(ids[0]).text == "Ana: hi"


@pytest.mark.parametrize(
    "turns",
    [
        [{"speaker": "Ana", "text": "hi"}],  # no session
        [{"speaker": "", "text": "hi", "session": "s"}],
        [{"speaker": "Ana", "text": "  ", "session": "s"}],
        [{"speaker": "Ana", "text": "hi", "session": "s", "mood": "x"}],
        ["Ana: hi"],
        "Ana: hi",
    ],
)
def test_bad_turns_are_refused_and_nothing_is_written(tmp_path: Path, turns: object) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        good = {"speaker": "Ben", "text": "fine", "session": "s"}
        batch = [good, *turns] if isinstance(turns, list) else turns
        with pytest.raises(chitta.InvalidArgument):
            import_conversation(field, batch)  # type: ignore[arg-type]
        assert len(field) == 0


@pytest.mark.parametrize("n", [-1, 17, 1.5, True])
def test_bad_context_turns_is_refused(tmp_path: Path, n: object) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        with pytest.raises(chitta.InvalidArgument):
            import_conversation(field, TURNS, context_turns=n)  # type: ignore[arg-type]
        assert len(field) == 0


def test_keyword_contexts_are_earlier_turns_of_the_same_session() -> None:
    from chitta.field.importers import keyword_contexts

    assert keyword_contexts(TURNS, 2) == [
        None,
        "Ana: I adopted a dog named Pixel.",
        "Ana: I adopted a dog named Pixel.\nBen: What breed is it?",
        None,
        "Ben: How is Pixel doing?",
    ]
    assert keyword_contexts(TURNS, 1)[2] == "Ben: What breed is it?"
    assert keyword_contexts(TURNS, 0) == [None] * 5


def test_turn_found_by_the_words_of_the_turn_before(tmp_path: Path) -> None:
    from chitta.recall.context import CONTEXT_KEY

    with chitta.open(tmp_path / "f", embedder=None) as field:
        ids = import_conversation(field, TURNS)
        assert field.get(ids[2]).meta == {
            "speaker": "Ana",
            CONTEXT_KEY: "Ana: I adopted a dog named Pixel.\nBen: What breed is it?",
        }
        assert field.get(ids[2]).text == "Ana: A beagle, very loud."
        hits = field.recall("breed", lanes=("bm25",), touch=False)
    assert {h.id for h in hits} == {ids[1], ids[2]}


def test_keyword_context_off_and_own_context_wins(tmp_path: Path) -> None:
    from chitta.recall.context import CONTEXT_KEY

    turns = [*TURNS[:2], Turn("Ana", "A beagle.", "s1", D1, {CONTEXT_KEY: "mine"})]
    with chitta.open(tmp_path / "f", embedder=None) as field:
        ids = import_conversation(field, turns)
        assert field.get(ids[2]).meta == {"speaker": "Ana", CONTEXT_KEY: "mine"}
        ids0 = import_conversation(field, TURNS, keyword_context_turns=0)
        # "" in meta: no keyword context, where the field's session rule would add one
        assert [field.get(i).meta for i in ids0] == [
            {"speaker": "Ana", CONTEXT_KEY: "", "turn": "a"},
            *({"speaker": t.speaker, CONTEXT_KEY: ""} for t in TURNS[1:]),
        ]
        assert field.recall("breed", lanes=("bm25",), session="s1", touch=False)


@pytest.mark.parametrize("bad", [-1, 17, 1.5, True, "2"])
def test_bad_keyword_context_turns_refused_nothing_written(tmp_path: Path, bad: object) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        with pytest.raises(chitta.errors.InvalidArgument, match="keyword_context_turns"):
            import_conversation(field, TURNS, keyword_context_turns=bad)  # type: ignore[arg-type]
        assert len(field) == 0


def test_turn_view_stores_the_normalised_sum_of_both_views(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    with chitta.open(tmp_path / "f", embedder=emb) as field:
        ids = import_conversation(field, TURNS, context_turns=1, turn_view=True)
        got = [field.get(i).embedding for i in ids]
    lines = [f"{t.speaker}: {t.text}" for t in TURNS]
    with_ctx = emb.embed(
        [
            lines[0],
            lines[0] + "\n" + lines[1],
            lines[1] + "\n" + lines[2],
            lines[3],
            lines[3] + "\n" + lines[4],
        ]
    )
    alone = emb.embed(lines)
    for g, a, b in zip(got, with_ctx, alone):
        np.testing.assert_allclose(unit(g), unit(unit(a) + unit(b)), atol=1e-6)
    # a session's first turn has no context: both views are the same text, so its vector is that text's
    np.testing.assert_allclose(unit(got[3]), unit(alone[3]), atol=1e-6)


@pytest.mark.parametrize("bad", [1, "yes", 0.0])
def test_bad_turn_view_refused_nothing_written(tmp_path: Path, bad: object) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        with pytest.raises(chitta.errors.InvalidArgument, match="turn_view"):
            import_conversation(field, TURNS, turn_view=bad)  # type: ignore[arg-type]
        assert len(field) == 0
