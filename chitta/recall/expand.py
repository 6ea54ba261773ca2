"""Semantic keyword expansion from the field's own vocabulary.

A list question ("What activities does Melanie partake in?") is often
answered by memories that share no word with it ("I went swimming with the
kids", "my pottery class"): BM25 cannot find them and a small embedder ranks
them low. The field's own words can bridge the gap: every distinct word the
field's memories use is embedded once with the field's embedder, and a query
picks the ``m`` field words whose word vectors lie nearest to *its own query
vector* (cosine >= ``tau``; words of the query itself left out). Those words
form a second keyword query over the same BM25 index that scores the
candidates the keyword and dense lanes found (the ``expansion`` lane), and
with convex score fusion (chitta.recall.convex) each candidate gains
``beta x`` its expansion BM25 score over that lane's best:

    fused(d) = alpha * bm25(d) / max bm25 + (1 - alpha) * minmax cos(d)
               + beta * bm25_expansion(d) / max bm25_expansion

The lane re-scores; it brings in no new candidate (on LoCoMo, letting its own
top hits in added nothing over re-scoring, docs/DECISIONS.md D-027), and the BM25 index scores
so few documents from its forward lists. The query costs nothing new to
embed (its vector is the dense lane's); the nearest words come from a native
word index (``chitta._core._WordIndex``, csrc/recall/word_index.h): an exact
scan of the word vectors up to ``EXACT_WORDS`` words and an HNSW graph over
them above (search beam 64: a narrower beam, or a graph over the words' top
principal components, was cheaper but picked other words and lost recall,
D-028; below the limit the words are exactly those of a numpy scan, up to
float rounding). :meth:`Vocabulary.nearest_start` can run that search on the
process's native search thread, so that a recall overlaps it with its BM25
lane (the engine does when ``concurrent_lanes`` is on). Words enter the table
as the field's texts are indexed (the keyword lane's documents) and are
embedded when they enter the field, off the recall path: the Field indexes and
embeds the words of its own writes right after each write, those of other
processes' records at ``refresh()``, and those of the log after its checkpoint
at open (``Field._vocab_sync``); a recall embeds only what arrived since. The
table is derived state saved with checkpoints (the sidecar ``vocab.emb``,
state version 5: chitta/field/checkpoint/vocab.py, docs/FORMAT.md section 8), so an
open embeds only the words of the log after its checkpoint; a checkpoint
without a table of this embedder's (older state, or the lane just turned on)
makes the open build it once, with a progress bar when it is large. Above
``EXACT_WORDS`` the checkpoint also saves the word graph (``vocab.hnsw``, the
HNSW file format of csrc/hnsw/FORMAT.md), so an open loads it instead of
building it (:meth:`Vocabulary.restore` with the loaded index); a table
restored without one (or with rows past the graph's) is indexed by
:meth:`Vocabulary.catch_up`, in steps with progress, outside the lock a
recall takes.

Settings: ``RecallSettings.expansion_weight`` (beta; 0 = off, the default),
``expansion_words`` (m) and ``expansion_min_cosine`` (tau); an embedder may
name its weight (``recall_expansion_weight``, chitta.recall.presets).
LoCoMo dev: see docs/DECISIONS.md D-027 and D-028.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument
from chitta.organs.index.bm25 import tokenize
from chitta.recall.query import QUERY_STOPWORDS

# Above this many words the nearest words come from an HNSW graph. The exact scan (an int8 first pass
# with error bounds, then f32 cosines for the few rows that can still win: csrc/recall/word_scan.h)
# costs less than the graph's search up to about 8-10K 384-d words (docs/DECISIONS.md D-028).
EXACT_WORDS = 8192
GRAPH_EF = 64  # the word graph's search beam (raised to the words asked for)
GRAPH_BUILD_STEP = (
    1024  # rows per step when a restored table's graph is built (progress between steps)
)
EMBED_BATCH = 512
F32 = npt.NDArray[np.float32]


def check_expansion(weight: object, words: object, min_cosine: object) -> None:
    """InvalidArgument unless weight is a finite number >= 0, words an int >= 1 and min_cosine in [-1, 1]."""
    if (
        isinstance(weight, bool)
        or not isinstance(weight, (int, float))
        or not math.isfinite(weight)
        or weight < 0
    ):
        raise InvalidArgument(f"expansion_weight must be a finite number >= 0, got {weight!r}")
    if isinstance(words, bool) or not isinstance(words, int) or words < 1:
        raise InvalidArgument(f"expansion_words must be an int >= 1, got {words!r}")
    if (
        isinstance(min_cosine, bool)
        or not isinstance(min_cosine, (int, float))
        or not math.isfinite(min_cosine)
        or not -1.0 <= min_cosine <= 1.0
    ):
        raise InvalidArgument(
            f"expansion_min_cosine must be a number in [-1, 1], got {min_cosine!r}"
        )


def vocabulary_words(text: str) -> set[str]:
    """The words of ``text`` that can expand a query: alphabetic tokens of 3 or more letters
    (:func:`chitta.organs.index.bm25.tokenize`, lowercased, not stemmed) that are not function words."""
    return {
        t
        for t in tokenize(text, stopwords=False)
        if len(t) > 2 and t.isalpha() and t not in QUERY_STOPWORDS
    }


class Vocabulary:
    """The field's distinct words and their vectors (module docstring)."""

    def __init__(self, embed: Callable[[list[str]], Any], name: str = "", dim: int = 0) -> None:
        self._embed = embed
        self.name = name  # the embedder's ``name``: a checkpoint records it with the table
        self.dim = dim  # the embedder's dim (the rows' width once there are rows)
        self._words: list[str] = []
        self._row: dict[str, int] = {}
        self._pending: set[str] = set()
        self._vecs: F32 | None = None
        self._index: _core._WordIndex | None = None  # the native word index over the rows
        self._stale = False  # a restored table whose index does not cover every row yet (catch_up)
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()  # one catch_up at a time
        self._refresh_lock = threading.Lock()  # one refresh at a time (it embeds outside _lock)
        # True when a background embedder refreshes the table (chitta/field/deferred.py):
        # a search then uses the words embedded so far and never runs the model itself.
        self.background = False

    def __len__(self) -> int:
        return len(self._words)

    @property
    def _graph(self) -> _core._WordIndex | None:
        """The word index when it searches a graph (above its exact limit), else None."""
        index = self._index
        return index if index is not None and index.has_graph else None

    @property
    def unindexed(self) -> int:
        """Rows of a restored table its word index does not cover yet (:meth:`catch_up`)."""
        with self._lock:
            if not self._stale:
                return 0
            return len(self._words) - (len(self._index) if self._index is not None else 0)

    @property
    def pending(self) -> int:
        """Words seen but not embedded yet."""
        return len(self._pending)

    def add_texts(self, texts: Iterable[str]) -> None:
        """Collect the words of ``texts`` (embedded at the next :meth:`refresh`)."""
        new: set[str] = set()
        for text in texts:
            new |= vocabulary_words(text)
        new -= self._row.keys()
        if new:
            with self._lock:
                self._pending |= new

    def add_words(self, words: Iterable[str]) -> None:
        """Words known to be field words (a checkpoint's pending ones), embedded at the next refresh."""
        new = set(words) - self._row.keys()
        if new:
            with self._lock:
                self._pending |= new

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the pending words (sorted, in batches); returns how many were added.
        ``progress(done, total)`` hears each batch (words embedded so far, of ``total``)."""
        if self._stale:
            self.catch_up()
        with self._refresh_lock:
            with self._lock:
                if not self._pending:
                    return 0
                words = sorted(self._pending - self._row.keys())
                if not words:
                    self._pending.clear()
                    return 0
            # The model runs outside _lock: words keep arriving (add_texts) meanwhile.
            parts = []
            for i in range(0, len(words), EMBED_BATCH):
                parts.append(np.asarray(self._embed(words[i : i + EMBED_BATCH]), np.float32))
                if progress is not None:
                    progress(min(i + EMBED_BATCH, len(words)), len(words))
            vecs = np.concatenate(parts) if len(parts) > 1 else parts[0]
            if vecs.ndim != 2 or len(vecs) != len(words):
                raise InvalidArgument(f"the embedder returned {vecs.shape} for {len(words)} words")
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            return self._add_rows(words, vecs)

    def _add_rows(self, words: list[str], vecs: F32) -> int:
        """Append embedded ``words`` (only now leaving the pending set: an embedder that
        fails leaves them pending)."""
        with self._lock:
            self._pending.difference_update(words)
            start = len(self._words)
            self._words.extend(words)
            self._row.update((w, start + i) for i, w in enumerate(words))
            self._vecs = vecs if self._vecs is None else np.concatenate([self._vecs, vecs])
            self._index_rows(start)
            return len(words)

    def table(self) -> tuple[list[str], F32, list[str]]:
        """(words in row order, their rows, pending words): a consistent copy for a checkpoint."""
        with self._lock:
            vecs = self._vecs if self._vecs is not None else np.zeros((0, self.dim), np.float32)
            return list(self._words), vecs, sorted(self._pending)

    def restore(
        self,
        words: list[str],
        vecs: F32,
        pending: Iterable[str] = (),
        index: _core._WordIndex | None = None,
    ) -> None:
        """Start from a saved table (a fresh vocabulary only): ``words`` in row order, their unit
        rows ``vecs`` as they were embedded, and ``pending`` words to embed at the next refresh.
        ``index``: the checkpoint's word graph loaded over a prefix of these rows
        (``_WordIndex.load_graph``, checked against them), used when the table is above
        ``EXACT_WORDS``. Nothing is indexed here: :meth:`catch_up` (or the next refresh) does it."""
        vecs = np.ascontiguousarray(vecs, np.float32)
        if vecs.ndim != 2 or len(vecs) != len(words) or len(set(words)) != len(words):
            raise InvalidArgument(
                f"a table of {len(words)} words (distinct?) for rows of shape {vecs.shape}"
            )
        with self._lock:
            if self._words:
                raise InvalidArgument("restore() needs an empty vocabulary")
            if words:
                self._words = list(words)
                self._row = {w: i for i, w in enumerate(words)}
                self._vecs = vecs
                usable = (
                    index is not None and index.dim == vecs.shape[1] and len(index) <= len(words)
                )
                self._index = index if usable else None
                self._stale = True
        self.add_words(pending)

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Index the rows of a restored table its word index lacks; returns how many. Above
        ``EXACT_WORDS`` rows the graph is extended (a loaded one) or built (none, or one of
        another shape), ``GRAPH_BUILD_STEP`` rows at a time, ``progress(done, total)`` after
        each step, on an index no search sees yet and without the lock a recall takes; the
        index is swapped in at the end. The graph is the one the rows would have got had they
        been added one refresh at a time (same insertion order, same levels)."""
        with self._build_lock:
            with self._lock:
                if not self._stale:
                    return 0
                vecs, n, index = self._vecs, len(self._words), self._index
            assert vecs is not None
            graph = n > EXACT_WORDS
            if index is None or (not graph and index.has_graph) or (graph and not index.has_graph):
                index = _core._WordIndex(int(vecs.shape[1]), EXACT_WORDS, GRAPH_EF, graph_now=graph)
            start = have = len(index)
            step = GRAPH_BUILD_STEP if graph else max(n, 1)
            while have < n:
                index.add(np.ascontiguousarray(vecs[have : min(have + step, n)], np.float32))
                have = len(index)
                if progress is not None:
                    progress(have, n)
            with self._lock:
                self._index = index
                self._stale = False
                if len(self._words) > len(index):  # rows embedded meanwhile
                    self._index_rows(len(index))
            return n - start

    def save_graph(self, path: str) -> int | None:
        """Save the word graph to ``path`` (csrc/hnsw/FORMAT.md) when the index searches one;
        returns the rows it covers (a prefix of the table), else None (nothing written)."""
        index = self._index
        if index is None or not index.has_graph:
            return None
        return int(index.save_graph(path))

    def _index_rows(self, start: int) -> None:
        """Make the search structures cover rows ``start`` .. ``len(self)`` of ``_vecs`` (the rows
        before ``start`` are indexed already). ``_words`` and ``_vecs`` are the table; the search
        structures are derived from them: a native word index (exact up to ``EXACT_WORDS`` rows, a
        graph above), extended in place, or built anew (and swapped in whole, so searches in flight
        keep the old one) when it holds rows past ``start`` or vectors of another width."""
        assert self._vecs is not None
        if self._stale:
            return  # catch_up indexes every row
        vecs, n = self._vecs, len(self._words)
        index = self._index
        if index is None or index.dim != vecs.shape[1] or len(index) > start:
            index = _core._WordIndex(int(vecs.shape[1]), EXACT_WORDS, GRAPH_EF)
        have = len(index)
        if have < n:
            index.add(np.ascontiguousarray(vecs[have:n], np.float32))
        self._index = index

    def nearest_start(
        self,
        vector: npt.ArrayLike,
        m: int,
        min_cosine: float,
        exclude: frozenset[str] | set[str] = frozenset(),
        *,
        background: bool = True,
    ) -> Callable[[], list[str]]:
        """Start the search for :meth:`nearest`; the returned call finishes it and gives its words.
        ``background``: run the search on the process's native search thread (the caller does
        other work meanwhile; the call collects it, or runs it itself if the thread has not begun);
        False: search now. A vector of another width, or with no direction, finds nothing."""
        if not self.background:
            self.refresh()
        index = self._index
        if index is None or m < 1:
            return _no_words
        q = np.asarray(vector, np.float32).reshape(-1)
        if q.shape[0] != index.dim:
            return _no_words  # another embedder's vector: nothing to compare with
        want = m + len(exclude)
        try:
            if background:
                wait = index.start(q, want).wait
            else:
                found = index.search(q, want)
                wait = lambda: found
        except InvalidArgument:  # a zero, NaN or infinite vector: no direction to look in
            return _no_words
        words = self._words

        def finish() -> list[str]:
            rows, sims = wait()  # best first: cosine descending, then row ascending
            out: list[str] = []
            for r, s in zip(rows, sims):
                if s < min_cosine:
                    break
                w = words[r]
                if w not in exclude:
                    out.append(w)
                    if len(out) == m:
                        break
            return out

        return finish

    def nearest(
        self,
        vector: npt.ArrayLike,
        m: int,
        min_cosine: float,
        exclude: frozenset[str] | set[str] = frozenset(),
    ) -> list[str]:
        """Up to ``m`` words nearest to ``vector`` (cosine >= ``min_cosine``, best first), none in ``exclude``."""
        return self.nearest_start(vector, m, min_cosine, exclude, background=False)()

    def expansion_start(
        self,
        vector: npt.ArrayLike,
        text: str,
        m: int,
        min_cosine: float,
        *,
        background: bool = True,
    ) -> Callable[[], str]:
        """:meth:`expansion` started (:meth:`nearest_start`); the returned call gives its query."""
        finish = self.nearest_start(
            vector, m, min_cosine, set(tokenize(text, stopwords=False)), background=background
        )
        return lambda: " ".join(finish())

    def expansion(self, vector: npt.ArrayLike, text: str, m: int, min_cosine: float) -> str:
        """The expansion lane's keyword query for a recall of ``text`` with query ``vector``
        ("" when no field word is near enough)."""
        return self.expansion_start(vector, text, m, min_cosine, background=False)()


def _no_words() -> list[str]:
    return []


def attach(
    engine: Any, index: Any, embedder: Any, texts: Callable[[], Iterable[str]], saved: Any = None
) -> Vocabulary | None:
    """Give ``engine`` a :class:`Vocabulary` fed by ``index``'s keyword documents when its settings
    expand queries and there is an embedder; else remove any. ``saved``: the checkpoint's table
    (chitta.field.checkpoint.vocab.VocabTable), adopted when this embedder (``name`` and ``dim``) made
    it; its words are pending otherwise. ``texts``: the live memories' texts, read once when the
    keyword index already holds documents that will not pass through it again and there is no
    saved table to say what their words are. Nothing is embedded here (``Vocabulary.refresh``)."""
    if engine.settings.expansion_weight <= 0 or embedder is None:
        engine.vocabulary = None
        index.vocabulary_sink = None
        return None
    vocab = Vocabulary(lambda words: embedder.embed(words), str(embedder.name), int(embedder.dim))
    engine.vocabulary = vocab
    index.vocabulary_sink = vocab.add_texts
    if saved is not None:
        if saved.embedder == vocab.name and (saved.dim == vocab.dim or not saved.words):
            vocab.restore(saved.words, saved.vecs, saved.pending, saved.index)
        else:  # another embedder's rows: the words stay field words, embedded anew
            vocab.add_words([*saved.words, *saved.pending])
    elif (
        index.indexed_texts() > 0
    ):  # a keyword index restored as an image: its texts are not pending
        vocab.add_texts(texts())
    return vocab
