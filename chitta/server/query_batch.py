"""Query embeddings of concurrent recalls, as one model batch (the daemon, default model).

A model embeds a batch of texts for a fraction of the cost of embedding them one
at a time (MiniLM ONNX on 2 cores: ~4.3 ms of CPU for one query, ~1.4 ms each in a
batch of 8). The daemon's recalls run beside each other, each embedding its query;
:class:`BatchedQueries` wraps the field's embedder so that the queries asked for
while one batch runs are embedded together in the next. The first thread to find
no batch running leads (takes every queued query, calls the model once, hands each
caller its rows, passes the lead on); no thread is added. Every other attribute
(``embed`` for documents, ``name``, ``family``, ``load``, ...) is the model's own.

The vectors are the model's, row for row: chitta's ONNX embedder gives a text the
same vector alone or in a batch (tests/unit/server/test_query_batch.py checks it).
:meth:`BatchedQueries.prime` embeds the queries of recalls that queued together as one
batch ahead of them (the daemon's reader takes them as a group): the next
``embed_query`` of one of those texts takes its row instead of calling the model.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.encode.base import embed_query

MAX_TEXTS = 64  # queries one model call takes at most
MAX_PRIMED = 256  # rows embedded ahead (prime) kept for their recall at most


class _Ask:
    __slots__ = ("done", "error", "rows", "texts", "wake")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.rows: npt.NDArray[np.float32] | None = None
        self.error: BaseException | None = None
        self.done = False
        self.wake = threading.Lock()
        self.wake.acquire()


class BatchedQueries:
    """``embedder`` with ``embed_query`` batched across threads (module doc)."""

    def __init__(self, embedder: Any) -> None:
        self.inner = embedder
        self._mu = threading.Lock()
        self._queue: deque[_Ask] = deque()
        self._leading = False
        self._primed: dict[str, npt.NDArray[np.float32]] = {}  # text -> row, embedded ahead
        self.calls = 0  # model calls made for queries
        self.texts = 0  # queries they embedded

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def prime(self, texts: list[str]) -> None:
        """Embed ``texts`` now, as one batch; each is taken once by its own ``embed_query``."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._primed]
        if not todo:
            return
        rows = self.embed_query(todo)
        with self._mu:
            if len(self._primed) + len(todo) > MAX_PRIMED:
                self._primed.clear()  # rows whose recall never asked (its query changed)
            for text, row in zip(todo, rows):
                self._primed[text] = row

    def embed_query(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if len(texts) == 1 and self._primed:
            with self._mu:
                row = self._primed.pop(texts[0], None)
            if row is not None:
                return row[None, :]
        ask = _Ask(list(texts))
        with self._mu:
            self._queue.append(ask)
            lead = not self._leading
            self._leading = True
        if not lead:
            ask.wake.acquire()
        if not ask.done:  # this thread leads; its ask heads the queue
            try:
                self._lead()
            finally:
                with self._mu:
                    if self._queue:
                        self._queue[0].wake.release()  # the next batch's leader
                    else:
                        self._leading = False
        if ask.error is not None:
            raise ask.error
        assert ask.rows is not None
        return ask.rows

    def _lead(self) -> None:
        with self._mu:
            batch = [self._queue.popleft()]
            n = len(batch[0].texts)
            while self._queue and n + len(self._queue[0].texts) <= MAX_TEXTS:
                n += len(self._queue[0].texts)
                batch.append(self._queue.popleft())
        try:
            vectors = embed_query(self.inner, [t for a in batch for t in a.texts])
            start = 0
            for a in batch:
                a.rows = vectors[start : start + len(a.texts)]
                start += len(a.texts)
        except BaseException as exc:  # noqa: BLE001  every caller of the batch gets the error
            for a in batch:
                a.error = exc
        finally:
            self.calls += 1
            self.texts += n
            for a in batch:
                a.done = True
            for a in batch[1:]:  # the leader's own ask is batch[0]
                a.wake.release()
