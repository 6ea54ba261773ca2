"""Vocabulary expansion (chitta.recall.expand, RecallSettings.expansion_*): the words a text
gives, the nearest words (exact and through the HNSW graph), hand-computed convex scores with
the expansion term, bad settings refused, the embedder's preference, and the order in a real
field on the native and the explain path, after a reopen and from a checkpoint."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.recall import expand
from chitta.recall.convex import convex_from_ranks
from chitta.recall.engine import RecallSettings
from chitta.recall.expand import Vocabulary, vocabulary_words
from chitta.recall.presets import settings_for


def test_vocabulary_words_keeps_content_words_of_three_letters_or_more() -> None:
    words = vocabulary_words("I went swimming with my kids, and Kids' pottery! 3 km run-ups")
    # "i", "with", "my", "and" are function words; "3" is no word; "km" is too short
    assert words == {"went", "swimming", "kids", "pottery", "run", "ups"}


WORDS = {  # 2-D word vectors: the query below is (1, 0)
    "swimming": (0.8, 0.6),
    "pottery": (0.6, 0.8),
    "camping": (0.28, 0.96),
    "tax": (-1.0, 0.0),
    "zero": (0.0, 0.0),
}


class Calls:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, words: list[str]) -> np.ndarray:
        self.batches.append(list(words))
        return np.array([WORDS[w] for w in words], np.float32)


def test_nearest_words_are_ordered_thresholded_and_exclude_the_query() -> None:
    calls = Calls()
    vocab = Vocabulary(calls)
    vocab.add_texts(["swimming and pottery", "camping tax"])
    vocab.add_texts(["tax zero"])
    assert len(vocab) == 0 and vocab.pending == 5
    q = np.array([2.0, 0.0])  # not unit: normalised
    assert vocab.nearest(q, 3, 0.0) == ["swimming", "pottery", "camping"]  # cosines 0.8, 0.6, 0.28
    assert calls.batches == [["camping", "pottery", "swimming", "tax", "zero"]]  # sorted, one batch
    assert vocab.nearest(q, 5, 0.5) == ["swimming", "pottery"]
    assert vocab.nearest(q, 2, -1.0, exclude={"swimming"}) == ["pottery", "camping"]
    assert vocab.expansion(q, "Swimming?", 2, 0.0) == "pottery camping"
    vocab.add_texts(["pottery swimming"])  # known words: nothing new to embed
    assert vocab.refresh() == 0 and len(calls.batches) == 1
    assert (
        vocab.nearest(np.zeros(2), 3, 0.0) == [] and vocab.nearest(np.ones(3), 3, 0.0) == []
    )  # no direction / dim


def test_an_embedder_returning_the_wrong_shape_is_refused() -> None:
    vocab = Vocabulary(lambda words: np.zeros((len(words) + 1, 2), np.float32))
    vocab.add_texts(["swimming pottery"])
    with pytest.raises(InvalidArgument):
        vocab.refresh()


def test_the_graph_above_the_exact_limit_finds_the_exact_neighbours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expand, "EXACT_WORDS", 16)
    rng = np.random.default_rng(7)
    names = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(200)]
    table = {w: rng.standard_normal(8).astype(np.float32) for w in names}
    exact = Vocabulary(lambda ws: np.array([table[w] for w in ws]))
    graph = Vocabulary(lambda ws: np.array([table[w] for w in ws]))
    monkeypatch.setattr(expand, "EXACT_WORDS", 10_000)
    exact.add_texts([" ".join(names)])
    exact.refresh()
    monkeypatch.setattr(expand, "EXACT_WORDS", 16)
    graph.add_texts([" ".join(names[:100])])
    graph.refresh()  # 100 words: the graph is built
    graph.add_texts([" ".join(names[100:])])  # and extended
    assert graph._graph is not None and exact._graph is None
    for _ in range(5):
        q = rng.standard_normal(8)
        assert graph.nearest(q, 5, -1.0) == exact.nearest(q, 5, -1.0)


def test_convex_scores_add_the_expansion_term_by_hand() -> None:
    # candidates 0..3; lanes bm25, dense, expansion; BM25 scores [4, 2]; expansion scores [3, 1.5]
    ranks = np.array([[1, 1, 0], [0, 2, 2], [2, 0, 1], [0, 3, 0]], np.int32)
    cos = np.array([0.9, 0.5, 0.7, 0.1])  # min-max: 1, 0.5, 0.75, 0
    out = convex_from_ranks(
        ranks,
        ["bm25", "dense", "expansion"],
        cos,
        (np.array([4.0, 2.0]), 0.5, np.array([3.0, 1.5]), 0.2),
    )
    # 0: 0.5 * 1 + 0.5 * 1; 1: 0.5 * 0.5 + 0.2 * 0.5; 2: 0.5 * 0.5 + 0.5 * 0.75 + 0.2 * 1; 3: 0
    np.testing.assert_allclose(out, [1.0, 0.35, 0.825, 0.0])
    plain = convex_from_ranks(
        ranks, ["bm25", "dense", "expansion"], cos, (np.array([4.0, 2.0]), 0.5)
    )
    np.testing.assert_allclose(plain, [1.0, 0.25, 0.625, 0.0])
    keep = np.array([2, 0])
    np.testing.assert_allclose(
        convex_from_ranks(
            ranks,
            ["bm25", "dense", "expansion"],
            cos[keep],
            (np.array([4.0, 2.0]), 0.5, np.array([3.0]), 0.2),
            keep,
        ),
        [0.5 * 0.5 + 0.2, 0.5 + 0.5],
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"expansion_weight": -0.1},
        {"expansion_weight": math.nan},
        {"expansion_weight": True},
        {"expansion_weight": "0.2"},
        {"expansion_words": 0},
        {"expansion_words": 2.0},
        {"expansion_words": True},
        {"expansion_min_cosine": 1.5},
        {"expansion_min_cosine": math.inf},
        {"expansion_min_cosine": None},
    ],
)
def test_bad_expansion_settings_are_refused(bad: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        RecallSettings(**bad)
    assert not (tmp_path / "f").exists()


class _Prefers:
    def __init__(self, weight: Any) -> None:
        self.recall_expansion_weight = weight


def test_embedder_preference_sets_the_weight_and_bad_ones_are_ignored() -> None:
    assert RecallSettings().expansion_weight == 0.0  # off unless asked
    assert settings_for(_Prefers(0.2)).expansion_weight == 0.2
    for bad in (-1, math.nan, True, "0.2", None):
        assert settings_for(_Prefers(bad)).expansion_weight == 0.0


class StubEmbedder:
    """4-D vectors from a table (memories on e2, e3, e4; two words near e1); any other text e3."""

    name, family, dim = "stub-expand-v1", "stub-expand", 4
    table: ClassVar[dict[str, tuple[float, ...]]] = {
        "swimming": (0.8, 0.6, 0, 0),
        "went": (0.3, 0, 0, math.sqrt(1 - 0.09)),
        "activities are fun": (0, 1, 0, 0),
        "I went swimming": (0, 0, 1, 0),
        "tax forms": (0, 0, 0, 1),
    }

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [self.table.get(t, (0.0, 0.0, 1.0, 0.0)) for t in texts]
        return np.array(rows, np.float32)


def _field(path: Path, weight: float) -> tuple[Any, dict[str, int]]:
    settings = RecallSettings(
        fusion_alpha=0.5, expansion_weight=weight, expansion_words=2, expansion_min_cosine=0.25
    )
    field = chitta.open(path, embedder=StubEmbedder(), recall_settings=settings)
    ids = {}
    if len(field) == 0:
        ids = {
            "m1": field.remember("activities are fun"),
            "m2": field.remember("I went swimming"),
            "m3": field.remember("tax forms"),
        }
    return field, ids


@pytest.mark.parametrize("explain", [False, True])
def test_the_expansion_lane_lifts_a_memory_sharing_no_query_word(
    tmp_path: Path, explain: bool
) -> None:
    q = np.array(
        [1, 0, 0, 0], np.float32
    )  # every memory at cosine 0: the cosine term is 0.5 for all
    off, ids = _field(tmp_path / "off", 0.0)
    with off:
        hits = off.recall("activities", vector=q, k=3, touch=False, explain=explain)
    assert hits[0].id == ids["m1"] and [h.fused for h in hits] == pytest.approx([1.0, 0.5, 0.5])
    on, ids = _field(tmp_path / "on", 0.4)
    with on:
        hits = on.recall("activities", vector=q, k=3, touch=False, explain=explain)
        # words: swimming (cosine 0.8), went (0.3); "fun" etc. lie at 0 < 0.25; only m2 holds them:
        # m1 = 0.5 + 0.5, m2 = 0.5 + 0.4 x 1, m3 = 0.5
        assert [h.id for h in hits] == [ids["m1"], ids["m2"], ids["m3"]]
        assert [h.fused for h in hits] == pytest.approx([1.0, 0.9, 0.5])
        assert hits[1].lanes.get("expansion") == 1 and "expansion" not in hits[0].lanes
        assert on.core.engine.vocabulary.nearest(q, 2, 0.25) == ["swimming", "went"]


def test_the_vocabulary_is_rebuilt_after_a_reopen_and_from_a_checkpoint(tmp_path: Path) -> None:
    q = np.array([1, 0, 0, 0], np.float32)
    field, ids = _field(tmp_path / "f", 0.4)
    with field:
        field.checkpoint()
    for _ in range(2):  # the first reopen loads the checkpoint
        field, _ = _field(tmp_path / "f", 0.4)
        with field:
            hits = field.recall("activities", vector=q, k=3, touch=False)
            assert [h.id for h in hits] == [ids["m1"], ids["m2"], ids["m3"]] and hits[
                1
            ].fused == pytest.approx(0.9)


def test_no_embedder_or_no_weight_means_no_vocabulary(tmp_path: Path) -> None:
    with chitta.open(
        tmp_path / "a",
        embedder=None,
        recall_settings=RecallSettings(fusion_alpha=0.5, expansion_weight=0.3),
    ) as f:
        assert f.core.engine.vocabulary is None
    with chitta.open(
        tmp_path / "b", embedder=StubEmbedder(), recall_settings=RecallSettings(fusion_alpha=0.5)
    ) as f:
        assert f.core.engine.vocabulary is None


def test_the_real_model_relates_a_category_to_its_members() -> None:
    pytest.importorskip("onnxruntime")
    from chitta.encode import OnnxMiniLM

    try:
        model = OnnxMiniLM()
    except Exception as exc:  # noqa: BLE001  (the model package is an extra)
        pytest.skip(f"MiniLM not available: {exc}")
    vocab = Vocabulary(model.embed)
    vocab.add_texts(
        [
            "I went swimming and camping, then my pottery class",
            "the invoice spreadsheet and the tax audit",
        ]
    )
    qv = model.embed(["What hobbies does Melanie enjoy?"])[0]
    top = vocab.nearest(qv, 3, 0.0)
    assert set(top) <= {"swimming", "camping", "pottery", "class", "went"} and len(top) == 3


# --- the dense query without the named speaker (RecallSettings.dense_query_without_speaker) -------------


def test_without_speaker_drops_the_pieces_that_name_the_speaker() -> None:
    from chitta.recall.query import dense_query_text, without_speaker

    assert without_speaker("What is Caroline's identity?", "Caroline") == "What is identity?"
    assert without_speaker("When did Jon and Gina meet?", "Jon") == "When did and Gina meet?"
    assert without_speaker("Did Mary Ann go camping?", "Mary Ann") == "Did go camping?"
    assert without_speaker("Caroline?", "Caroline") == "Caroline?"  # nothing else would be left
    assert (
        without_speaker("What did I say?", "I") == "What did I say?"
    )  # a name of function words only
    assert dense_query_text("What did Jon buy?", {"Jon", "Gina"}) == "What did buy?"
    assert (
        dense_query_text("What did Jon and Gina buy?", {"Jon", "Gina"})
        == "What did Jon and Gina buy?"
    )
    assert dense_query_text("What did Tom buy?", {"Jon", "Gina"}) == "What did Tom buy?"


def test_a_non_bool_setting_is_refused() -> None:
    for bad in (1, "yes", None):
        with pytest.raises(InvalidArgument):
            RecallSettings(dense_query_without_speaker=bad)  # type: ignore[arg-type]


class Recording(StubEmbedder):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts)


@pytest.mark.parametrize("on", [False, True])
def test_the_field_embeds_the_query_without_the_named_speaker(tmp_path: Path, on: bool) -> None:
    emb = Recording()
    settings = RecallSettings(dense_query_without_speaker=on)
    with chitta.open(tmp_path / "f", embedder=emb, recall_settings=settings) as field:
        field.remember("I painted a sunrise", meta={"speaker": "Melanie"})
        field.remember("I went to a support group", meta={"speaker": "Caroline"})
        emb.seen.clear()
        field.recall("What did Melanie paint?", k=2, touch=False)
        field.recall("What did they paint?", k=2, touch=False)  # names no speaker: as it is
    assert emb.seen == (
        ["What did paint?", "What did they paint?"]
        if on
        else ["What did Melanie paint?", "What did they paint?"]
    )
