"""BM25 keyword index: the exact-term lane of hybrid recall.

Tokenizer (``tokenize``; the same rules index documents and queries):

* Input is ``str`` (``tokenize`` also takes UTF-8 ``bytes``; invalid UTF-8 or a
  lone surrogate raises :class:`chitta.errors.InvalidArgument`).
* Tokens are maximal runs of word characters: ASCII letters and digits, ``_``,
  and letters, digits and combining marks of Latin-1/Latin Extended, Greek,
  Cyrillic, Armenian, Hebrew, Arabic, Devanagari, Bengali, Thai, Georgian,
  Hangul, Katakana and full-width ASCII. Everything else separates, including
  ``.``, ``-``, ``'`` and ``/``: ``port8080``, ``v2`` and ``snake_case`` stay
  whole, ``v2.1`` gives ``v2``, ``1``. Leading/trailing ``_`` are trimmed
  (``__init__`` -> ``init``).
* CJK ideographs and hiragana are one token per character (``東京`` -> ``東``,
  ``京``); katakana and Hangul runs stay whole.
* Lowercased: ASCII, Latin-1, Latin Extended-A and Additional, Greek (final
  sigma folds to sigma), Cyrillic; full-width letters and digits fold to ASCII.
* ``stopwords=True`` (default) drops 35 English words (Lucene's stop set plus
  ``s`` and ``t``, the tails of split apostrophes).
* ``stem=False`` by default. ``stem=True`` applies a light English suffix
  stripper to ASCII-only tokens (plurals, ``-ing``, ``-ed``, final ``y``/``e``:
  ``studies``/``study``/``studied`` -> ``studi``, ``running`` -> ``run``).

Scoring, for each distinct query term ``t`` repeated ``qtf`` times in the query::

    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))            # Lucene / bm25s variant
    score  = sum_t qtf * idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |D| / avgdl))

``N``, ``df``, ``|D|`` (tokens after stopword removal) and ``avgdl`` count live
documents only and stay exact under ``remove``. Scores are float32.
Unlike bm25s' "lucene" method (and Lucene >= 8) the constant factor ``k1 + 1``
is kept, so scores are ``k1 + 1`` times theirs; rankings are the same.

Search is pruned (block-max MaxScore: documents that cannot reach the top ``k``
are skipped using per-term and per-block bounds) when the query terms' posting
lists are long (65,536 postings or more; shorter ones are scanned, which is
faster), and returns exactly what the exhaustive scan returns: the same ids,
scores and order (``method`` forces one, for benchmarks and tests). ``save`` and
``load`` write and read the index file (docs/FORMAT.md section 8, ``bm25.idx``),
so that an index need not be rebuilt from its texts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

PAD_ID: int = 2**64 - 1
"""Id used to pad ``search`` results when fewer than ``k`` documents match."""

MAX_K: int = 1 << 24
"""Largest ``k`` ``search`` accepts (results are padded to ``k``, so ``k`` sizes memory)."""

__all__ = ["BM25", "MAX_K", "PAD_ID", "tokenize"]


def tokenize(text: str | bytes, *, stem: bool = False, stopwords: bool = True) -> list[str]:
    """Split ``text`` into index tokens (rules in the module docstring)."""
    if not isinstance(text, (str, bytes)):
        raise InvalidArgument(f"text must be str or bytes, got {type(text).__name__}")
    return _core._bm25_tokenize(text, bool(stem), bool(stopwords))


def _as_ids(ids: object, what: str = "ids") -> npt.NDArray[np.uint64]:
    """Return ``ids`` as a 1-D contiguous uint64 array, refusing anything lossy."""
    if isinstance(ids, np.ndarray):
        if ids.dtype.kind not in "iu":
            raise InvalidArgument(f"{what} must be an integer array, got dtype {ids.dtype}")
        if ids.ndim != 1:
            raise InvalidArgument(f"{what} must be 1-D, got shape {ids.shape}")
        if ids.dtype.kind == "i" and ids.size and int(ids.min()) < 0:
            raise InvalidArgument(f"{what} must be non-negative")
        return np.ascontiguousarray(ids, dtype=np.uint64)
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise InvalidArgument(f"{what} must be a uint64 array or a sequence of ints")
    items = list(ids)
    for x in items:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise InvalidArgument(f"{what} must hold ints, got {type(x).__name__}")
        if not 0 <= int(x) < 2**64:
            raise InvalidArgument(f"{what} must be in [0, 2**64), got {int(x)}")
    return np.array([int(x) for x in items], dtype=np.uint64)


class BM25:
    """Incremental BM25 index over ``(uint64 id, str text)`` documents.

    Thread-safe: ``search`` runs concurrently (the GIL is released); ``add`` and
    ``remove`` are exclusive. Every call validates its whole batch first and
    leaves the index unchanged when it raises.
    """

    __slots__ = ("_index",)

    def __init__(
        self, k1: float = 1.2, b: float = 0.75, *, stem: bool = False, stopwords: bool = True
    ) -> None:
        self._index = _core._BM25(float(k1), float(b), bool(stem), bool(stopwords))

    @property
    def k1(self) -> float:
        return self._index.k1

    @k1.setter
    def k1(self, value: float) -> None:
        self._index.set_params(float(value), self._index.b)

    @property
    def b(self) -> float:
        return self._index.b

    @b.setter
    def b(self, value: float) -> None:
        self._index.set_params(self._index.k1, float(value))

    @property
    def stem(self) -> bool:
        return self._index.stem

    @property
    def stopwords(self) -> bool:
        return self._index.stopwords

    def add(self, ids: npt.ArrayLike, texts: Sequence[str]) -> None:
        """Index ``texts[i]`` under ``ids[i]``.

        Raises InvalidArgument (nothing added) for: lengths that differ, a text
        that is not ``str`` (or not encodable as UTF-8), an id already indexed,
        repeated in the batch, or equal to ``PAD_ID``. A text with no tokens is
        a live document of length 0 that never matches.
        """
        arr = _as_ids(ids)
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise InvalidArgument("texts must be a sequence of str")
        if len(texts) != len(arr):
            raise InvalidArgument(f"got {len(arr)} ids but {len(texts)} texts")
        self._index.add(arr, texts)

    def remove(self, ids: npt.ArrayLike) -> None:
        """Remove documents. NotFound (a KeyError) for an unknown id,
        InvalidArgument for an id repeated in the batch; nothing removed then."""
        self._index.remove(_as_ids(ids))

    def search(
        self,
        query: str,
        k: int = 10,
        allowed: npt.ArrayLike | None = None,
        *,
        accumulator: Literal["auto", "dense", "sparse"] = "auto",
        method: Literal["auto", "pruned", "exhaustive"] = "auto",
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Best ``k`` documents for ``query``: ``(ids uint64[k], scores float32[k])``.

        Ordered by score (descending), ties by smaller id. Only documents with a
        positive score are hits; the rest of the ``k`` slots hold ``PAD_ID`` and
        score 0 (``k`` may exceed ``len(self)``; at most ``MAX_K``). An empty
        query, or one of only stopwords or unknown terms, returns all padding.
        ``allowed`` restricts hits to those ids (ids not in the index are
        ignored; an empty ``allowed`` gives no hits). ``method`` forces the pruned
        search or the exhaustive scan (``"auto"``: by the lists' length), and ``accumulator`` the
        exhaustive scan's score accumulator (for benchmarks and tests: results
        are identical).
        """
        if not isinstance(query, str):
            raise InvalidArgument(f"query must be str, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InvalidArgument(f"k must be an int, got {type(k).__name__}")
        if not 1 <= int(k) <= MAX_K:
            raise InvalidArgument(f"k must be in [1, {MAX_K}], got {int(k)}")
        allowed_arr = None if allowed is None else _as_ids(allowed, "allowed")
        if method not in ("auto", "pruned", "exhaustive"):
            raise InvalidArgument(
                f"method must be 'auto', 'pruned' or 'exhaustive', got {method!r}"
            )
        return self._index.search(query, int(k), allowed_arr, accumulator, method)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the live documents to ``path`` (via ``path.tmp``, fsynced, renamed).
        ChittaIOError when it cannot be written."""
        self._index.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> BM25:
        """Read a file written by :meth:`save`: the index with its k1, b and tokenizer
        options. CorruptionError for a damaged or foreign file (UnsupportedFormat
        for another major version), ChittaIOError when it cannot be read."""
        self = cls.__new__(cls)
        self._index = _core._BM25.load(os.fspath(path))
        return self

    def doc_freq(self, term: str) -> int:
        """Live documents containing ``term`` (a token as ``tokenize`` yields it)."""
        return int(self._index.doc_freq(term))

    @property
    def vocabulary_size(self) -> int:
        """Distinct terms in at least one live document."""
        return int(self._index.vocabulary_size)

    @property
    def avg_doc_length(self) -> float:
        return float(self._index.avg_doc_length)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, doc_id: object) -> bool:
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, np.integer)):
            return False
        if not 0 <= int(doc_id) < 2**64:
            return False
        return bool(self._index.contains(int(doc_id)))

    def __repr__(self) -> str:
        return f"BM25(k1={self.k1}, b={self.b}, stem={self.stem}, docs={len(self)})"
