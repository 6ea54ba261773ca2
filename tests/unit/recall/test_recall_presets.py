"""chitta.recall.presets: an embedder's preferred dense weight, applied when the caller names none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.encode import HashingEmbedder, MpnetEmbedder, NomicEmbedder, OnnxMiniLM
from chitta.field.importers import Turn, import_conversation
from chitta.recall.engine import RecallSettings
from chitta.recall.presets import settings_for


class Preferring(HashingEmbedder):
    """A hashing embedder that asks for dense weight 1 and the two-view import."""

    recall_dense_weight = 1.0
    recall_turn_view = True


def test_settings_for_plain_embedder_is_the_default() -> None:
    assert settings_for(HashingEmbedder()) == RecallSettings()
    assert settings_for(None) == RecallSettings()


def test_settings_for_sets_only_the_dense_weight() -> None:
    got = settings_for(Preferring())
    want = dict(RecallSettings().lane_weights, dense=1.0)
    assert dict(got.lane_weights) == want
    assert got.rrf_k == RecallSettings().rrf_k and got.time_prior == RecallSettings().time_prior
    base = RecallSettings(rrf_k=7)
    assert settings_for(Preferring(), base).rrf_k == 7


@pytest.mark.parametrize("bad", [float("nan"), -1.0, "1", True, None])
def test_settings_for_ignores_a_bad_preference(bad: object) -> None:
    class Odd(HashingEmbedder):
        recall_dense_weight = bad

    assert settings_for(Odd()) == RecallSettings()


def test_packaged_embedders_preferences() -> None:
    assert NomicEmbedder.recall_dense_weight == 1.0 and NomicEmbedder.recall_turn_view is True
    assert settings_for(NomicEmbedder()).lane_weights["dense"] == 1.0  # nothing is loaded for this
    assert MpnetEmbedder.recall_dense_weight == 0.75 and MpnetEmbedder.recall_turn_view is True
    # the default install: weights and views unchanged; convex fusion (docs/DECISIONS.md D-025)
    assert settings_for(OnnxMiniLM()) == RecallSettings(
        fusion_alpha=0.55, expansion_weight=0.2, dense_query_without_speaker=True
    )
    assert not hasattr(OnnxMiniLM, "recall_turn_view")
    assert settings_for(NomicEmbedder()).fusion_alpha == 0.3
    assert settings_for(MpnetEmbedder()).fusion_alpha == 0.45


def test_field_uses_the_preference_unless_settings_are_given(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "a", embedder=Preferring()) as f:
        assert f.core.engine.settings.lane_weights["dense"] == 1.0
    explicit = RecallSettings()
    with chitta.open(tmp_path / "b", embedder=Preferring(), recall_settings=explicit) as f:
        assert f.core.engine.settings.lane_weights["dense"] == 0.5
    with chitta.open(tmp_path / "c", embedder=HashingEmbedder()) as f:
        assert f.core.engine.settings == RecallSettings()


def test_import_follows_the_embedders_turn_view(tmp_path: Path) -> None:
    turns = [Turn("Ana", "I adopted a dog.", "s1"), Turn("Ben", "What breed?", "s1")]
    emb = Preferring()
    with chitta.open(tmp_path / "f", embedder=emb) as f:
        ids = import_conversation(f, turns)  # turn_view=None: the embedder's preference (True)
        got = f.get(ids[1]).embedding
        ids_off = import_conversation(f, turns, turn_view=False)
        got_off = f.get(ids_off[1]).embedding
    lines = ["Ana: I adopted a dog.", "Ben: What breed?"]
    ctx, alone = emb.embed([lines[0] + "\n" + lines[1]])[0], emb.embed([lines[1]])[0]
    mean = ctx / np.linalg.norm(ctx) + alone / np.linalg.norm(alone)
    np.testing.assert_allclose(got / np.linalg.norm(got), mean / np.linalg.norm(mean), atol=1e-6)
    np.testing.assert_allclose(
        got_off / np.linalg.norm(got_off), ctx / np.linalg.norm(ctx), atol=1e-6
    )


def test_settings_for_name_free_dense_query_takes_only_a_bool() -> None:
    class NameFree(HashingEmbedder):
        recall_dense_query_without_speaker = True

    class Odd(HashingEmbedder):
        recall_dense_query_without_speaker = 1  # not a bool: ignored

    assert settings_for(NameFree()) == RecallSettings(dense_query_without_speaker=True)
    assert settings_for(NameFree(), RecallSettings(rrf_k=7)).rrf_k == 7
    assert settings_for(Odd()) == RecallSettings()
