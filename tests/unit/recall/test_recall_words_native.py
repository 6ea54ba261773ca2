"""The expansion lane's native word search (chitta._core._WordIndex, csrc/recall/word_index.h) and
its wiring: the rows and cosines against a numpy brute-force oracle, exact below the limit and
through the graph above it, the words ``Vocabulary.nearest`` / ``nearest_start`` pick equal to the
numpy reference's, bad arguments refused with nothing changed, ``_index_rows(0)`` (a restored
table) rebuilding the index, adds while searches run on the search thread, and the engine
starting the word search before BM25 when ``concurrent_lanes`` is on (same hits either way)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta import _core
from chitta.errors import InvalidArgument
from chitta.recall import expand
from chitta.recall.engine import RecallEngine, RecallSettings
from chitta.recall.expand import Vocabulary


def _units(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _oracle(rows: np.ndarray, q: np.ndarray, want: int) -> tuple[list[int], np.ndarray]:
    """numpy brute force in float64: the best ``want`` rows, cosine descending then row ascending."""
    cos = rows.astype(np.float64) @ (q.astype(np.float64) / np.linalg.norm(q.astype(np.float64)))
    order = np.lexsort((np.arange(len(cos)), -cos))[:want]
    return order.tolist(), cos


def _numpy_nearest(
    words: list[str],
    vecs: np.ndarray,
    vector: np.ndarray,
    m: int,
    min_cosine: float,
    exclude: set[str],
) -> list[str]:
    """The words the numpy exact scan picked before the native index (expand.py at fc77190)."""
    q = np.asarray(vector, np.float32).reshape(-1)
    q = q / float(np.linalg.norm(q))
    want = m + len(exclude)
    sims = vecs @ q
    top = np.argpartition(-sims, want - 1)[:want] if want < len(sims) else np.arange(len(sims))
    top = top[np.lexsort((top, -sims[top]))]
    out = []
    for r, s in zip(top.tolist(), sims[top].tolist()):
        if s >= min_cosine and words[r] not in exclude:
            out.append(words[r])
            if len(out) == m:
                break
    return out


@pytest.mark.parametrize("limit", [4096, 64])
def test_rows_and_cosines_equal_the_brute_force_oracle(limit: int) -> None:
    rows = _units(1500, 24, 3)
    index = _core._WordIndex(24, limit, 64)
    index.add(rows[:40])
    index.add(rows[40:])  # the graph (limit 64) is built at the second add
    assert len(index) == 1500 and index.has_graph == (limit == 64)
    hit = 0
    for q in _units(30, 24, 4) * 3.0:  # not unit: normalised
        got, cos = index.search(q, 10)
        want, oracle = _oracle(rows, q, 10)
        assert cos == sorted(cos, reverse=True) and len(got) == 10
        assert np.allclose(cos, oracle[got], atol=1e-6)
        if limit == 4096:  # exact: the oracle's rows, unless two cosines are within float rounding
            for g, w in zip(got, want):
                assert g == w or abs(oracle[g] - oracle[w]) < 1e-6
        hit += len(set(got) & set(want))
    assert hit >= 0.95 * 300  # the graph: recall@10 (random vectors are its worst case)


def test_ties_go_to_the_smaller_row_and_a_started_search_gives_the_same() -> None:
    rows = np.array([[0, 1], [1, 0], [0.6, 0.8], [1, 0], [0, 0]], np.float32)
    index = _core._WordIndex(2, 4096, 64)
    index.add(rows)
    q = np.array([2, 0], np.float32)
    assert index.search(q, 5) == ([1, 3, 2, 0, 4], [1.0, 1.0, pytest.approx(0.6), 0.0, 0.0])
    handle = index.start(q, 5)
    assert handle.wait() == index.search(q, 5) and handle.done


@pytest.mark.parametrize("call", ["search", "start"])
def test_bad_arguments_are_refused_and_change_nothing(call: str) -> None:
    with pytest.raises(InvalidArgument):
        _core._WordIndex(0, 4096, 64)
    with pytest.raises(InvalidArgument):
        _core._WordIndex(4, 4096, 0)
    index = _core._WordIndex(4, 4096, 64)
    index.add(_units(3, 4, 1))
    bad_rows = _units(2, 4, 2)
    bad_rows[1, 2] = np.nan
    with pytest.raises(InvalidArgument):
        index.add(bad_rows)
    with pytest.raises(InvalidArgument):
        index.add(_units(2, 5, 2))  # wrong width
    with pytest.raises(InvalidArgument):
        index.add(_units(2, 4, 2).astype(np.float64))
    assert len(index) == 3
    run = getattr(index, call)
    good = np.ones(4, np.float32)
    for query, want in [
        (np.ones(5, np.float32), 2),
        (np.array([1, np.nan, 0, 0], np.float32), 2),
        (np.array([np.inf, 0, 0, 0], np.float32), 2),
        (np.zeros(4, np.float32), 2),
        (np.ones(4), 2),
        (good, 0),
        (good, -3),
    ]:
        with pytest.raises(InvalidArgument):
            run(query, want)
    assert len(index.search(good, 2)[0]) == 2


class Table:
    def __init__(self, words: list[str], dim: int, seed: int) -> None:
        self.vecs = dict(zip(words, _units(len(words), dim, seed)))

    def __call__(self, words: list[str]) -> np.ndarray:
        return np.array([self.vecs[w] for w in words], np.float32)


def _names(n: int) -> list[str]:
    return [
        f"w{chr(97 + i // 676 % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}" for i in range(n)
    ]


@pytest.mark.parametrize("background", [False, True])
def test_the_vocabulary_picks_the_numpy_references_words(background: bool) -> None:
    names = _names(900)
    vocab = Vocabulary(Table(names, 16, 5))
    vocab.add_texts([" ".join(names[:300]), " ".join(names[300:])])
    assert vocab.refresh() == 900
    words, vecs = vocab._words, vocab._vecs
    assert vecs is not None
    rng = np.random.default_rng(8)
    for i in range(40):
        q = rng.standard_normal(16).astype(np.float32)
        exclude = set(rng.choice(words, 3).tolist()) if i % 2 else set()
        m, tau = int(rng.integers(1, 8)), float(rng.choice([-1.0, 0.0, 0.3]))
        got = vocab.nearest_start(q, m, tau, exclude, background=background)()
        assert got == _numpy_nearest(words, vecs, q, m, tau, exclude)


def test_a_restored_table_is_indexed_from_row_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expand, "EXACT_WORDS", 100)
    names = _names(400)
    source = Vocabulary(Table(names, 8, 6))
    source.add_texts([" ".join(names)])
    source.refresh()
    restored = Vocabulary(
        Table(names, 8, 6)
    )  # helper P's restore: the table set, then _index_rows(0)
    restored._words, restored._row, restored._vecs = (
        list(source._words),
        dict(source._row),
        source._vecs,
    )
    restored._index_rows(0)
    first = restored._index
    restored._index_rows(0)  # again: a fresh index, swapped in whole
    assert (
        restored._index is not first and restored._graph is not None and len(restored._index) == 400
    )
    for q in _units(10, 8, 7):
        assert restored.nearest(q, 5, -1.0) == source.nearest(q, 5, -1.0)


def test_words_added_while_searches_run_on_the_search_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expand, "EXACT_WORDS", 300)  # the graph is built while searches run
    names = _names(2000)
    vocab = Vocabulary(Table(names, 16, 9))
    vocab.add_texts([" ".join(names[:50])])
    vocab.refresh()
    errors: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        try:
            qs = _units(50, 16, 10)
            while not done.is_set():
                for q in qs:
                    got = vocab.nearest_start(q, 5, -1.0)()
                    assert len(got) == 5 and len(set(got)) == 5 and set(got) <= set(names)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(2)]
    for t in threads:
        t.start()
    for at in range(50, 2000, 150):
        vocab.add_texts([" ".join(names[at : at + 150])])
        vocab.refresh()
    done.set()
    for t in threads:
        t.join()
    assert not errors and len(vocab) == 2000 and vocab._graph is not None
    exact = Vocabulary(Table(names, 16, 9))
    monkeypatch.setattr(expand, "EXACT_WORDS", 10_000)
    exact.add_texts([" ".join(names)])
    exact.refresh()
    overlap = sum(
        len(set(vocab.nearest(q, 5, -1.0)) & set(exact.nearest(q, 5, -1.0)))
        for q in _units(40, 16, 11)
    )
    assert overlap >= 0.95 * 200


class Embedder:
    name, family, dim = "stub-words-v1", "stub-words", 8

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for t in texts:
            rng = np.random.default_rng(sum(map(ord, t)) * 7919 + len(t))
            rows.append(rng.standard_normal(8))
        return np.array(rows, np.float32)


@pytest.mark.parametrize("explain", [False, True])
def test_the_engine_starts_the_word_search_before_bm25_and_the_hits_do_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explain: bool
) -> None:
    texts = [
        f"note {i}: {' '.join(_names(60)[i % 50 : i % 50 + 4])} river stone" for i in range(120)
    ]
    results = {}
    for concurrent in (True, False):
        settings = RecallSettings(
            fusion_alpha=0.5,
            expansion_weight=0.4,
            expansion_words=5,
            expansion_min_cosine=-1.0,
            concurrent_lanes=concurrent,
        )
        with chitta.open(
            tmp_path / f"f{concurrent}",
            embedder=Embedder(),
            recall_settings=settings,
            clock=lambda: 1_780_000_000.0,
        ) as field:
            position = {
                mid: i for i, mid in enumerate(field.remember_many([{"text": t} for t in texts]))
            }
            events: list[str] = []
            vocab = field.core.engine.vocabulary
            start, expansion = vocab.expansion_start, vocab.expansion
            scored = field.core.index.keyword_scored

            def spy(label: str, fn: Any, events: list[str] = events) -> Any:
                return lambda *a, **k: (events.append(label), fn(*a, **k))[1]

            monkeypatch.setattr(vocab, "expansion_start", spy("start", start))
            monkeypatch.setattr(vocab, "expansion", spy("inline", expansion))
            monkeypatch.setattr(field.core.index, "keyword_scored", spy("bm25", scored))
            got = []
            for q in ("river stone wabc", "note stone", "waab wbbc"):
                events.clear()
                hits = field.recall(q, k=8, touch=False, explain=explain)
                got.append([(position[h.id], h.score, h.fused, dict(h.lanes)) for h in hits])
                # concurrent: started before BM25 (then BM25 again for the expansion lane's scores);
                # else searched inline after it (expansion -> expansion_start(background=False))
                assert events == (
                    ["start", "bm25", "bm25"] if concurrent else ["bm25", "inline", "start", "bm25"]
                )
                assert any("expansion" in h.lanes for h in hits)
            results[concurrent] = got
    assert results[True] == results[False]


def test_an_unused_started_search_is_harmless() -> None:
    vocab = Vocabulary(Table(_names(50), 8, 12))
    vocab.add_texts([" ".join(_names(50))])
    for q in _units(20, 8, 13):
        vocab.nearest_start(q, 3, 0.0)  # never finished: the search thread runs it and drops it
    finish = vocab.nearest_start(_units(1, 8, 14)[0], 3, -1.0)
    assert len(finish()) == 3


def test_the_engine_keeps_its_vocabulary_in_with_lanes() -> None:
    engine = RecallEngine(memories=Any, index=Any, graph=Any)  # type: ignore[arg-type]
    engine.vocabulary = Vocabulary(Table(_names(5), 8, 1))
    assert engine.with_lanes(("bm25",)).vocabulary is engine.vocabulary
