"""The expansion lane's word table kept current off the recall path.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. When the field's recall settings expand
queries (``expansion_weight > 0``) and it has an embedder, every distinct word
of its memories is embedded once (chitta.recall.expand). The words enter the
table when they enter the field: ``_vocab_sync`` indexes the keyword documents
waiting in the recall index (their words go to the table) and embeds the new
words, after each write of this handle, after ``refresh()`` and at open (the
checkpoint's table, ``vocab.emb``, plus the log after it; a field whose
checkpoint has no table of this embedder's builds it there, once, with a
progress bar when it is large). A recall then embeds only words that arrived
by a path that does not sync (none today). Above the word index's exact limit
the checkpoint's word graph (``vocab.hnsw``) is loaded with the table; a table
without one (or with rows past it) gets its graph built here, at open, outside
the field's lock, with a progress bar when that takes more than a moment.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from chitta.errors import ChittaError
from chitta.field import read
from chitta.field.core import FieldCore
from chitta.recall import expand
from chitta.recall.expand import EMBED_BATCH, attach

PROGRESS_WORDS = 2 * EMBED_BATCH  # an open embedding more words than this shows a progress bar
PROGRESS_GRAPH_ROWS = 1024  # an open building the word graph over more rows than this shows one


def attach_vocabulary(core: FieldCore) -> None:
    """At open, once the embedder and the recall settings are known: the vocabulary
    (adopting the checkpoint's table when this embedder made it), then every word of
    the log after the checkpoint embedded."""
    saved = core.vocab_saved
    attach(
        core.engine,
        core.index,
        core.encoding.embedder,
        lambda: (m.text for m in read.memories(core)),
        saved,
    )
    if core.engine.vocabulary is not None or not core.read_only:
        core.vocab_saved = None  # kept only by a read-only handle without one: a checkpoint's view
    try:
        sync_words(core, progress=True)
    except ChittaError as exc:  # the model cannot run (missing, checksum): the field still opens
        warnings.warn(
            f"query expansion: the field's words could not be embedded at open ({exc}); "
            "the first recall that expands tries again",
            RuntimeWarning,
            stacklevel=4,
        )


def sync_words(core: FieldCore, *, progress: bool = False) -> int:
    """Index the keyword documents waiting in the recall index (their words join the
    table) and embed the table's new words; returns how many were embedded."""
    vocab = core.engine.vocabulary
    if vocab is None:
        return 0
    if progress and vocab.unindexed > PROGRESS_GRAPH_ROWS and len(vocab) > expand.EXACT_WORDS:
        _build_with_progress(vocab)  # a restored table without (all of) its graph
    with core.lock:
        core.index._flush_text()
    if not progress or vocab.pending <= PROGRESS_WORDS:
        return int(vocab.refresh())
    return _with_progress(vocab)


def _with_progress(vocab: Any) -> int:
    """``vocab.refresh()`` with a rich progress bar on stderr (stdout may carry a protocol)."""
    return _progress(
        "embedding the field's words for query expansion",
        "words embedded",
        vocab.pending,
        vocab.refresh,
    )


def _build_with_progress(vocab: Any) -> int:
    """``vocab.catch_up()`` (the word graph built at open) with a progress bar on stderr."""
    return _progress(
        "building the query expansion word graph",
        "word graph rows indexed",
        len(vocab),
        vocab.catch_up,
    )


def _progress(description: str, done_text: str, total: int, run: Callable[..., int]) -> int:
    """``run(progress)`` under a transient rich progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    t0 = time.perf_counter()
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        update: Callable[[int, int], None] = lambda done, total: bar.update(
            task, completed=done, total=total
        )
        added = int(run(update))
    if console.is_terminal:
        console.print(
            f"[dim]query expansion: {added:,} {done_text} in {time.perf_counter() - t0:.1f} s[/dim]"
        )
    return added
