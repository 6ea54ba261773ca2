"""The expansion lane's word table kept current off the recall path.

A mixin of :class:`chitta.field.Field`. When the field's recall settings expand
queries (``expansion_weight > 0``) and it has an embedder, every distinct word
of its memories is embedded once (chitta.recall.expand). The words enter the
table when they enter the field: ``_vocab_sync`` indexes the keyword documents
waiting in the recall index (their words go to the table) and embeds the new
words, after each write of this handle, after ``refresh()`` and at open (the
checkpoint's table, ``vocab.emb``, plus the log after it; a field whose
checkpoint has no table of this embedder's builds it there, once, with a
progress bar when it is large). A recall then embeds only words that arrived
by a path that does not sync (none today).
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from chitta.errors import ChittaError
from chitta.field_state import FieldState
from chitta.recall.expand import EMBED_BATCH, attach

PROGRESS_WORDS = 2 * EMBED_BATCH  # an open embedding more words than this shows a progress bar


class VocabMixin(FieldState):
    """Keeps ``self._engine.vocabulary`` embedded (the state it uses: chitta/field_state.py)."""

    def _attach_vocabulary(self) -> None:
        """At open, once the embedder and the recall settings are known: the vocabulary
        (adopting the checkpoint's table when this embedder made it), then every word of
        the log after the checkpoint embedded."""
        saved = self._vocab_saved
        attach(self._engine, self._index, self._encoding.embedder, lambda: (m.text for m in self.memories()), saved)
        if self._engine.vocabulary is not None or not self._read_only:
            self._vocab_saved = None  # kept only by a read-only handle without one: a checkpoint's view
        try:
            self._vocab_sync(progress=True)
        except ChittaError as exc:  # the model cannot run (missing, checksum): the field still opens
            warnings.warn(f"query expansion: the field's words could not be embedded at open ({exc}); "
                          "the first recall that expands tries again", RuntimeWarning, stacklevel=4)

    def _vocab_sync(self, *, progress: bool = False) -> int:
        """Index the keyword documents waiting in the recall index (their words join the
        table) and embed the table's new words; returns how many were embedded."""
        vocab = self._engine.vocabulary
        if vocab is None:
            return 0
        with self._lock:
            self._index._flush_text()
        if not progress or vocab.pending <= PROGRESS_WORDS:
            return int(vocab.refresh())
        return _with_progress(vocab)


def _with_progress(vocab: Any) -> int:
    """``vocab.refresh()`` with a rich progress bar on stderr (stdout may carry a protocol)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    t0 = time.perf_counter()
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("embedding the field's words for query expansion", total=vocab.pending)
        update: Callable[[int, int], None] = lambda done, total: bar.update(task, completed=done, total=total)
        added = int(vocab.refresh(update))
    if console.is_terminal:
        console.print(f"[dim]query expansion: {added:,} words embedded in {time.perf_counter() - t0:.1f} s[/dim]")
    return added
