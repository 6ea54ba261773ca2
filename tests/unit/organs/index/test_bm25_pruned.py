"""The pruned BM25 search against the exhaustive scan as the oracle: the same
ids, the same float32 scores bit for bit and the same order, on random Zipf
corpora (hypothesis) with deletions, allowed filters, repeated query terms and
k from 1 to beyond the number of hits; and the index file round trip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.errors import ChittaIOError, CorruptionError, InvalidArgument, UnsupportedFormat
from chitta.organs.index.bm25 import BM25, PAD_ID


def _zipf_words(rng: np.random.Generator, vocab: int, s: float, n: int) -> list[str]:
    p = 1.0 / np.arange(1, vocab + 1) ** s
    return [f"w{i}" for i in rng.choice(vocab, size=n, p=p / p.sum())]


def _assert_same(ix: BM25, query: str, k: int, allowed: np.ndarray | None) -> None:
    want = ix.search(query, k, allowed, method="exhaustive")
    got = ix.search(query, k, allowed, method="pruned")
    assert np.array_equal(got[0], want[0]), (query, k)
    assert got[1].tobytes() == want[1].tobytes(), (query, k)  # bit for bit


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    vocab=st.integers(5, 400),
    s=st.floats(0.6, 1.6),
    docs=st.integers(1, 700),
    k1=st.sampled_from([0.0, 0.5, 1.2, 2.0]),
    b=st.sampled_from([0.0, 0.3, 0.75, 1.0]),
    delete=st.floats(0.0, 0.8),
)
def test_pruned_equals_exhaustive_on_random_zipf_corpora(
    seed: int, vocab: int, s: float, docs: int, k1: float, b: float, delete: float
) -> None:
    rng = np.random.default_rng(seed)
    ix = BM25(k1, b)
    ids = rng.choice(10 * docs + 10, size=docs, replace=False).astype(
        np.uint64
    )  # id order != insertion order
    lengths = rng.integers(0, 20, size=docs)
    texts = [" ".join(_zipf_words(rng, vocab, s, int(n))) for n in lengths]
    ix.add(ids, texts)
    gone = ids[rng.random(docs) < delete]
    if len(gone):
        ix.remove(gone)
    live = np.setdiff1d(ids, gone)
    for _ in range(8):
        words = _zipf_words(rng, vocab, s, int(rng.integers(1, 7)))
        if rng.random() < 0.3:
            words += words[:2]  # repeated terms
        query = " ".join(words)
        for k in (1, 2, 10, 50, len(live) + 3):
            _assert_same(ix, query, k, None)
            _assert_same(ix, query, k, np.sort(live[rng.random(len(live)) < 0.5]))
            few = np.concatenate(
                [live[rng.random(len(live)) < 0.02], np.array([10**12], np.uint64)]
            )
            _assert_same(ix, query, k, few)


@pytest.mark.parametrize("method", ["auto", "pruned"])
def test_ties_keep_the_exhaustive_order(method: str) -> None:
    ix = BM25()
    n = 40000  # "red fox": 80,000 postings, above the size where "auto" prunes
    ids = np.arange(n, 0, -1, dtype=np.uint64)  # ids fall as ordinals rise
    ix.add(ids, ["red fox" if i % 3 else "red fox jumps" for i in range(n)])
    got_ids, got_scores = ix.search("red fox", 25, method=method)  # type: ignore[arg-type]
    want_ids, want_scores = ix.search("red fox", 25, method="exhaustive")
    assert np.array_equal(got_ids, want_ids) and got_scores.tobytes() == want_scores.tobytes()
    tied = got_scores == got_scores[0]
    assert tied.sum() > 1 and np.all(
        np.diff(got_ids[tied].astype(np.int64)) > 0
    )  # smaller id first


def test_bad_method_rejected() -> None:
    ix = BM25()
    ix.add(np.array([1], np.uint64), ["a b"])
    with pytest.raises(InvalidArgument):
        ix.search("a", 3, method="fast")  # type: ignore[arg-type]


def test_save_load_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    ix = BM25(1.5, 0.6, stem=True)
    ids = np.arange(1, 2001, dtype=np.uint64)
    ix.add(ids, [" ".join(_zipf_words(rng, 300, 1.1, 12)) for _ in ids])
    ix.remove(ids[::7])
    path = tmp_path / "bm25.idx"
    ix.save(path)
    back = BM25.load(path)
    assert (back.k1, back.b, back.stem, back.stopwords, len(back)) == (
        1.5,
        0.6,
        True,
        True,
        len(ix),
    )
    for q in ("w1 w2", "w30 w7 w7", "w250", "nothing here"):
        a, b = ix.search(q, 20), back.search(q, 20)
        assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes()
    back.remove(ids[1:3])  # the loaded index is a full index
    back.add(np.array([99999], np.uint64), ["w1 w2"])
    assert 99999 in back and 2 not in back and len(back) == len(ix) - 1
    ix.remove(ids[1:3])
    ix.add(np.array([99999], np.uint64), ["w1 w2"])
    for q in ("w1 w2", "w3 w4 w5"):
        a, b = ix.search(q, 30), back.search(q, 30)
        assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes()
        assert a[0][0] != PAD_ID


def test_load_damaged_file_is_corruption(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ix = BM25()
    ix.add(np.arange(1, 50, dtype=np.uint64), [f"alpha beta w{i}" for i in range(49)])
    path = tmp_path / "bm25.idx"
    ix.save(path)
    good = path.read_bytes()
    path.write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])
    with pytest.raises(CorruptionError):
        BM25.load(path)
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(CorruptionError):
        BM25.load(path)
    path.write_bytes(b"CHITPOST" + good[8:])
    with pytest.raises(CorruptionError):
        BM25.load(path)
    with pytest.raises(ChittaIOError):
        BM25.load(tmp_path / "missing.idx")
    assert issubclass(UnsupportedFormat, CorruptionError)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_bound_with_ties_deleted_and_filtered_best_documents(seed: int) -> None:
    """The pruned search starts from the k-th exact score of the rarest term's best
    blocks (csrc/bm25/search_pruned.cc, SeedTheta): with many documents tied at that
    score, and those best documents deleted or filtered out, it still returns the
    exhaustive top k (ids, bit-for-bit scores, id order among ties)."""
    rng = np.random.default_rng(seed)
    n = 4000
    shapes = [
        "r r c",
        "r c c d",
        "r",
        "c d",
        "c c c d d",
        "r r r r c d e f g",
    ]  # few distinct texts: ties
    texts = [shapes[i] for i in rng.integers(0, len(shapes), n)]
    ids = rng.choice(10 * n, size=n, replace=False).astype(np.uint64)
    ix = BM25(1.2, 0.75)
    ix.add(ids, texts)
    best = ids[[t.startswith("r r") for t in texts]]
    ix.remove(
        best[: len(best) // 2]
    )  # many of the rarest term's best blocks now hold dead documents
    live = np.setdiff1d(ids, best[: len(best) // 2])
    for query in ("r c", "r c d", "r r c e", "c d r g"):
        for k in (1, 10, 50, 200):
            _assert_same(ix, query, k, None)
            _assert_same(
                ix, query, k, np.sort(np.setdiff1d(live, best))
            )  # no best document allowed
            _assert_same(ix, query, k, np.sort(live[rng.random(len(live)) < 0.3]))
