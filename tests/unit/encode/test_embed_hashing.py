"""HashingEmbedder: C++ features against a pure-Python oracle, and behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from _hashembed_ref import embed as ref_embed
from _hashembed_ref import feature_hash
from embed_sentences import SENTENCES
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument


def test_fnv1a_oracle_matches_published_vector() -> None:
    # FNV-1a 64 of "a" with the standard basis is 0xaf63dc4c8601ec8c; the
    # oracle's loop with SEED 0 and no fmix must reproduce it.
    h = 0xCBF29CE484222325
    h = ((h ^ ord("a")) * 0x100000001B3) & ((1 << 64) - 1)
    assert h == 0xAF63DC4C8601EC8C
    assert feature_hash("w", "a") != feature_hash("c", "a")


@pytest.mark.parametrize("dim", [384, 64, 1000])
def test_cpp_matches_python_reference_on_sentences(dim: int) -> None:
    got = HashingEmbedder(dim).embed(SENTENCES)
    want = np.stack([ref_embed(s, dim) for s in SENTENCES])
    np.testing.assert_allclose(got, want, atol=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=5))
def test_cpp_matches_python_reference_on_random_unicode(texts: list[str]) -> None:
    got = HashingEmbedder(97).embed(texts)
    assert got.shape == (len(texts), 97) and got.dtype == np.float32
    for row, t in zip(got, texts):
        np.testing.assert_allclose(row, ref_embed(t, 97), atol=1e-6)


def test_rows_are_unit_norm_or_zero_for_no_words() -> None:
    v = HashingEmbedder().embed(["the build uses ninja", "", "  !!! ... ---", "a"])
    norms = np.linalg.norm(v, axis=1)
    np.testing.assert_allclose(norms, [1.0, 0.0, 0.0, 1.0], atol=1e-6)


def test_deterministic_across_instances_and_calls() -> None:
    a = HashingEmbedder().embed(SENTENCES)
    b = HashingEmbedder().embed(list(reversed(SENTENCES)))[::-1]
    assert np.array_equal(a, b)


def test_one_by_one_equals_batch() -> None:
    e = HashingEmbedder()
    batch = e.embed(SENTENCES)
    single = np.vstack([e.embed([s]) for s in SENTENCES])
    np.testing.assert_allclose(batch, single, atol=1e-5)


def test_case_and_punctuation_do_not_matter() -> None:
    v = HashingEmbedder().embed(["The Build, uses NINJA!", "the build uses ninja"])
    assert np.array_equal(v[0], v[1])


def test_matches_keyword_overlap() -> None:
    docs = [
        "the build uses ninja and cmake",
        "grandmother bakes bread on sunday",
        "interest rates rose this quarter",
        "the telescope revealed distant galaxies",
    ]
    e = HashingEmbedder()
    d = e.embed(docs)
    for query, want in [("ninja build", 0), ("bread baking", 1), ("rates", 2), ("galaxy", 3)]:
        scores = d @ e.embed([query])[0]
        assert int(np.argmax(scores)) == want, (query, scores)


def test_keywords_not_paraphrases() -> None:
    # Same meaning, no shared words or word pieces: the hashing embedder cannot see it.
    v = HashingEmbedder().embed(["The cat is sleeping on the sofa.", "A kitten naps on a couch."])
    shared = HashingEmbedder().embed(["The cat is sleeping on the sofa.", "the sofa cat"])
    assert float(v[0] @ v[1]) < 0.35 < float(shared[0] @ shared[1])


def test_name_and_family_carry_dim() -> None:
    e = HashingEmbedder(128)
    assert (e.dim, e.name, e.family) == (128, "hashing-v1-d128", "hashing-v1-d128")
    assert HashingEmbedder().name == "hashing-v1-d384"


@pytest.mark.parametrize("dim", [0, -1, 1 << 21, 3.5, True, "384"])
def test_bad_dim_is_invalid_argument(dim: object) -> None:
    with pytest.raises(InvalidArgument):
        HashingEmbedder(dim)  # type: ignore[arg-type]


def test_lone_surrogate_is_a_separator() -> None:
    v = HashingEmbedder().embed(["ab\ud800cd", "ab cd"])
    assert np.array_equal(v[0], v[1])
