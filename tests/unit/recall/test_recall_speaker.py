"""The speaker prior: a query naming one speaker ranks that speaker's memories higher."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import chitta
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import snapshot
from chitta.recall.context import MAX_SPEAKER_CHARS, speaker_of
from chitta.recall.query import named_speaker


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("What did Caroline research?", "Caroline"),
        ("what did CAROLINE research", "Caroline"),
        ("When did Caroline and Melanie meet?", None),  # two named: no single one
        ("What is the weather?", None),
        ("Is Carol here?", None),  # a word, not a prefix
        ("Did Jon Snow win?", "Jon Snow"),
        ("Did Jon win?", None),  # every word of the name
        ("Caroline's dog", "Caroline"),
    ],
)
def test_named_speaker(query: str, want: str | None) -> None:
    assert named_speaker(query, ["Caroline", "Melanie", "Jon Snow", "I"]) == want


def test_a_name_of_function_words_never_counts() -> None:
    assert named_speaker("what do I like", ["I", "Me"]) is None


@pytest.mark.parametrize(
    ("meta", "want"),
    [
        ({"speaker": " Ana "}, "Ana"),
        ({"speaker": ""}, None),
        ({"speaker": 3}, None),
        ({"speaker": "x" * (MAX_SPEAKER_CHARS + 1)}, None),
        ({}, None),
        (None, None),
    ],
)
def test_speaker_of(meta: dict | None, want: str | None) -> None:
    assert speaker_of(meta) == want


def _two_speakers(field: chitta.Field) -> tuple[int, int]:
    # the same text, said by two people: without a prior they tie (id order decides)
    a = field.remember("likes green tea in the morning", meta={"speaker": "Ana"})
    b = field.remember("likes green tea in the morning", meta={"speaker": "Ben"})
    return a, b


def test_named_speaker_ranks_first(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _two_speakers(f)
        assert [h.id for h in f.recall("green tea", touch=False)] == [a, b]  # the tie
        assert [h.id for h in f.recall("Does Ben like green tea?", touch=False)] == [b, a]
        assert [h.id for h in f.recall("Does Ana like green tea?", touch=False)] == [a, b]
        assert [h.id for h in f.recall("Do Ana and Ben like green tea?", touch=False)] == [a, b]
        hits = f.recall("Does Ben like green tea?", lanes=("bm25",), touch=False)
        # b is second in the keyword lane (RRF k 20: 1/22), times 1 + RecallSettings.speaker_prior
        assert [h.fused for h in hits] == [pytest.approx(1.3 / 22), pytest.approx(1 / 21)]


def test_explain_shows_what_the_speaker_prior_added(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _two_speakers(f)
        hits = f.recall("Does Ben like green tea?", explain=True, touch=False)
        by_id = {h.id: h for h in hits}
        speaker = [x for x in by_id[b].factors if x.name == "speaker"]
        assert not [x for x in by_id[a].factors if x.name == "speaker"]  # Ana was not named
        assert (
            len(speaker) == 1
            and speaker[0].kind == "prior"
            and speaker[0].value == pytest.approx(1.3)
        )
        f.core.engine.settings = dataclasses.replace(f.core.engine.settings, speaker_prior=0.0)
        plain = {h.id: h.score for h in f.recall("Does Ben like green tea?", touch=False)}
        # the oracle: the same recall with the prior off (a few ms later: freshness moves in the 11th digit)
        assert speaker[0].contribution == pytest.approx(by_id[b].score - plain[b], rel=1e-6)
        assert speaker[0].contribution > 0


def test_prior_off(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _two_speakers(f)
        f.core.engine.settings = dataclasses.replace(f.core.engine.settings, speaker_prior=0.0)
        assert [h.id for h in f.recall("Does Ben like green tea?", touch=False)] == [a, b]


def test_meta_update_and_forget_follow(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _two_speakers(f)
        f.update(b, meta={"speaker": "Cy"})
        assert [h.id for h in f.recall("Does Ben like green tea?", touch=False)] == [a, b]
        assert [h.id for h in f.recall("Does Cy like green tea?", touch=False)] == [b, a]
        f.forget(b)
        assert [h.id for h in f.recall("Does Cy like green tea?", touch=False)] == [a]
        assert f.core.index.speaker_ids("Cy?") is None


def test_bad_speaker_meta_is_stored_but_ignored(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("likes tea", meta={"speaker": 7})
        assert f.get(a).meta == {"speaker": 7}
        assert [h.id for h in f.recall("does 7 like tea", touch=False)] == [a]


def test_replay_and_checkpoint_keep_speakers(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder="hashing") as f:
        a, b = _two_speakers(f)
        f.update(b, meta={"speaker": "Cy"})  # a put's meta no longer tells b's speaker
        want = dict(f.core.index._speaker)
    with chitta.open(root, embedder="hashing") as f:  # replayed from the log
        assert f.core.index._speaker == want
        f.checkpoint()
    with chitta.open(root, embedder="hashing") as f:  # from the checkpoint
        assert f.checkpoint_loaded is not None
        assert f.core.index._speaker == want == {a: "Ana", b: "Cy"}
        assert [h.id for h in f.recall("Does Cy like green tea?", touch=False)] == [b, a]


def test_state_without_speakers_reads_them_from_the_puts(tmp_path: Path) -> None:
    assert fmt.STATE_VERSION >= 3
    state = {"organs": {"recall_index": {}}}
    assert (
        snapshot._MIGRATIONS[2](state) is state
    )  # the v2 -> v3 step: the key is optional, nothing to add
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        a, b = _two_speakers(f)
    organ_cls = type(chitta.open(root, embedder=None, read_only=True).core.index)
    organ = organ_cls()
    organ.restore_speakers(None, [a, b], [{"speaker": "Ana"}, None])
    assert organ._speaker == {a: "Ana"}
