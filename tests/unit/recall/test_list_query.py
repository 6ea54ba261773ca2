"""List questions get RecallSettings.list_speaker_prior in place of speaker_prior."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.recall.engine import RecallSettings
from chitta.recall.list_query import asks_for_a_list


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("What activities does Ana do?", True),
        ("which books has Ana read", True),
        ("What LGBTQ+ events has Ana joined?", True),  # one word between
        ("In what ways does Ana help?", True),
        ("What instruments does Ana play?", True),
        ("What does Ana do to relax?", False),  # an auxiliary, not a plural
        ("What has Ana painted?", False),
        ("What is Ana's job?", False),
        ("When did Ana move?", False),
        ("What class did Ana take?", False),  # "class": a double s
        ("Where are Ana's books?", False),  # not a what/which question
        ("", False),
    ],
)
def test_the_form(query: str, want: bool) -> None:
    assert asks_for_a_list(query) is want


def _write(field: chitta.Field) -> list[int]:
    # two speakers, the same words: the speaker prior alone orders them, its size decides how far
    ids = []
    for i in range(6):
        ids.append(field.remember(f"hobbies include tea and hiking {i}", meta={"speaker": "Ben"}))
        ids.append(field.remember(f"hobbies include tea {i}", meta={"speaker": "Ana"}))
    return ids


def _recall(root: Path, settings: RecallSettings, query: str) -> list[tuple[int, float]]:
    with chitta.open(root, embedder=None, recall_settings=settings) as f:
        if not f.recall("tea", touch=False):
            _write(f)
        return [(h.id, round(h.fused, 12)) for h in f.recall(query, k=8, touch=False)]


LIST_Q = "What hobbies does Ana have with tea and hiking?"
POINT_Q = "Does Ana like tea and hiking?"


def test_a_list_question_recalls_as_the_stronger_prior_does(tmp_path: Path) -> None:
    """The oracle: the same field read with speaker_prior = 0.8 for every query."""
    default = RecallSettings()
    assert default.list_speaker_prior == 0.8 and default.speaker_prior == 0.3
    got = _recall(tmp_path / "f", default, LIST_Q)
    strong = _recall(
        tmp_path / "f", RecallSettings(speaker_prior=0.8, list_speaker_prior=None), LIST_Q
    )
    plain = _recall(tmp_path / "f", RecallSettings(list_speaker_prior=None), LIST_Q)
    assert got == strong
    assert got != plain  # the stronger prior moves Ana's memories past Ben's


def test_other_questions_keep_the_plain_prior(tmp_path: Path) -> None:
    got = _recall(tmp_path / "f", RecallSettings(), POINT_Q)
    plain = _recall(tmp_path / "f", RecallSettings(list_speaker_prior=None), POINT_Q)
    assert got == plain


def test_speaker_prior_off_is_off_for_list_questions_too(tmp_path: Path) -> None:
    got = _recall(tmp_path / "f", RecallSettings(speaker_prior=0.0), LIST_Q)
    off = _recall(
        tmp_path / "f", RecallSettings(speaker_prior=0.0, list_speaker_prior=None), LIST_Q
    )
    assert got == off


@pytest.mark.parametrize("bad", [-0.1, 101, True, "0.8", float("nan")])
def test_bad_setting(bad: object) -> None:
    with pytest.raises(InvalidArgument):
        RecallSettings(list_speaker_prior=bad)  # type: ignore[arg-type]
