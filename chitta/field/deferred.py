"""Deferred embedding: a field's texts get their vectors off the caller's thread.

When a field's embedder is a model (``embedder.background`` is true: chitta's
ONNX, sentence-transformers, mpnet and nomic embedders; not the hashing one),
``remember()`` logs the text and returns. The ids wait in the handle's backlog
(``core.backlog``); the process's background embedder (:mod:`chitta.field.embed_worker`)
takes them in batches, embeds their texts outside every lock and logs the vectors:
one Batch of ``UpdateMemoryContent(id, embedding=...)`` plus each memory's
``UpdateSparseCode`` (and, for a field's first vectors, the sparse encoder's
creation). Replay applies those ops as written: it never runs the model.

The backlog of an open (docs/DECISIONS.md D-045): every live memory without a
vector, when the field's recorded embedder is a model of the opened embedder's
family. Texts a crash left without vectors are embedded there, at open, with a
progress bar when there are many. ``close()`` embeds what is left first.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import numpy as np

from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.errors import ChittaError
from chitta.field import sessions
from chitta.field.core import FieldCore
from chitta.ops import Op
from chitta.recall.blas import one_thread

BATCH = 64  # texts per model call: the model's throughput is flat from ~32 on 2 cores
PROGRESS_AT_OPEN = 256  # an open embedding more texts than this shows a progress bar


def wanted(embedder: Any) -> bool:
    """Whether writes with this embedder defer their vectors (a model: ``background`` true)."""
    return embedder is not None and bool(getattr(embedder, "background", False))


class Backlog:
    """One handle's ids waiting for vectors, and who waits for them."""

    def __init__(self) -> None:
        self.ids: deque[int] = deque()
        self.inflight = 0  # ids taken by a step not yet committed
        self.step_lock = threading.Lock()  # one step per handle at a time; close() takes it
        self.done = threading.Condition()
        self.error: ChittaError | None = None  # the last step's failure (the ids stay queued)
        self.embedded = 0  # vectors this handle logged

    def __len__(self) -> int:
        return len(self.ids) + self.inflight


def attach(core: FieldCore, *, background: bool) -> None:
    """At open (the field writable, with an embedder): texts left without vectors
    embedded now; with ``background``, the backlog kept from then on and the handle
    registered with the process's background embedder."""
    from chitta.field import embed_worker

    backlog = core.backlog = Backlog()
    if background and core.engine.vocabulary is not None:
        core.engine.vocabulary.background = True  # its words too: the worker embeds them
    try:
        if background:
            core.fast_put = core.pending_puts.put if recorded_model(core) else None
        leftovers: Any = core.index.ids_without_vector() if recorded_model(core) else []
        backlog.ids.extend(int(x) for x in leftovers)
        if len(backlog.ids) > PROGRESS_AT_OPEN:
            _embed_with_progress(core)
        else:
            while backlog.ids and step(core):
                pass
    except BaseException:
        core.backlog = None  # nothing to finish at close
        raise
    if not background:
        core.backlog = None  # this embedder runs on the caller's thread (field/write.py)
        return
    embed_worker.register(core)


def recorded_model(core: FieldCore) -> bool:
    """The field records a model embedder of the opened one's family."""
    rec = core.settings.get("embedder")
    emb = core.encoding.embedder
    return (
        rec is not None
        and emb is not None
        and not str(rec.get("name", "")).startswith("caller-supplied")
        and rec.get("family") == emb.family
    )


def record_embedder(core: FieldCore) -> None:
    """A fresh field's first deferred write logs which model its vectors will come from
    (so a crash before any vector still reopens to a backlog); then the native put path
    serves plain ``remember(text)`` calls."""
    emb = core.encoding.embedder
    if core.settings.get("embedder") is None:
        value = {"name": emb.name, "family": emb.family, "dim": int(emb.dim)}
        core.commit(ops.ConfigureField(key="embedder", value=value, at_ms=core.now_ms()))
    core.fast_put = core.pending_puts.put


def queue(core: FieldCore, mid: int) -> None:
    """One id written without a vector (the Python put path)."""
    core.backlog.ids.append(mid)
    from chitta.field import embed_worker

    embed_worker.wake()


def pending(core: FieldCore) -> int:
    """Memories of this handle still without their vector (queued puts included)."""
    backlog: Backlog | None = getattr(core, "backlog", None)
    if backlog is None:
        return 0
    return len(backlog) + len(core.pending_puts)


def step(core: FieldCore, limit: int = BATCH) -> int:
    """Embed and log up to ``limit`` of the backlog's texts; returns how many were
    taken (0: nothing to do, or the handle is closing)."""
    backlog: Backlog = core.backlog
    with backlog.step_lock:
        if core.closed:
            return 0
        with core.lock:
            if core.pending_puts:
                core.apply_pending()  # the native path's puts join the backlog (core.py)
            ids: list[int] = []
            while backlog.ids and len(ids) < limit:
                ids.append(backlog.ids.popleft())
            backlog.inflight = len(ids)
            mems = [core.memories.get(mid) for mid in ids]
        keep = [m for m in mems if m is not None]
        try:
            if keep:  # outside every lock; with each one's session context (field/sessions.py)
                vecs = sessions.embed(core, [m.text for m in keep], [m.meta for m in keep])
                _log_vectors(core, [m.id for m in keep], vecs)
            backlog.error = None
        except ChittaError as exc:
            backlog.ids.extendleft(reversed(ids))  # kept for a later try
            backlog.error = exc
            return 0
        else:
            backlog.embedded += len(keep)
            if keep:
                _after(core, len(keep))  # before the waiters hear: their words are in the table
        finally:
            backlog.inflight = 0
            with backlog.done:
                backlog.done.notify_all()
    return len(ids)


def _log_vectors(core: FieldCore, ids: list[int], vecs: Any) -> None:
    """The vectors of ``ids`` as one Batch (setup ops first on a field's first vectors)."""
    vecs = np.ascontiguousarray(vecs, np.float32)
    with core.lock:
        if core.closed:
            return
        live = [
            i
            for i, mid in enumerate(ids)
            if core.memories.is_live(mid) and core.index.vector(mid) is None
        ]
        if not live:
            return
        ids = [ids[i] for i in live]
        vecs = vecs[live]
        now = core.now_ms()
        group: list[Op] = list(
            core.encoding.setup_ops(
                core.settings.get("embedder"),
                core.encoder_organ.encoder,
                int(vecs.shape[1]),
                now,
                from_embedder=True,
            )
        )
        for mid, vec in zip(ids, vecs):
            created = core.memories.get(mid).created_ms  # type: ignore[union-attr]
            # at_ms = the memory's own time: a deferred vector is not an edit (updated_ms stays)
            group.append(
                ops.UpdateMemoryContent(
                    id=mid, at_ms=created, embedding=vec.astype("<f4").tobytes()
                )
            )
        encoder = core.encoder_organ.encoder
        if encoder is None:  # created by a setup op of this group
            from chitta.encode.sparse import SparseEncoder

            encoder = SparseEncoder.from_op(
                next(op for op in group if isinstance(op, ops.UpdateSparseEncoder))
            )
        with one_thread():
            group.extend(code_ops(encoder, ids, vecs))
        core.commit_group(group)


def _after(core: FieldCore, n: int) -> None:
    """What a synchronous embedded write did after its commit: new words into the
    expansion table, the maintenance counters (on this thread, not the caller's)."""
    from chitta.field import maintain, vocab

    try:
        vocab.sync_words(core)
        maintain.after_embedded_writes(core, n)
    except ChittaError as exc:
        core.backlog.error = exc


def wait(core: FieldCore, timeout: float | None) -> bool:
    """``Field.wait_embedded``: True once this handle's backlog is empty, False at the
    timeout; raises the embedder's error when it cannot run."""
    from chitta.field import deferred_codes

    backlog: Backlog | None = getattr(core, "backlog", None)
    if backlog is None:  # the sparse codes of large groups too (chitta/field/deferred_codes.py)
        return deferred_codes.wait(core, timeout)
    from chitta.field import embed_worker

    deadline = None if timeout is None else time.monotonic() + timeout
    while pending(core):
        if backlog.error is not None and not backlog.inflight:
            raise type(backlog.error)(
                f"{backlog.error} ({len(backlog)} memories still wait for vectors; fix the "
                "embedder and reopen the field, or open it with embedder=None)"
            )
        if embed_worker.running():
            embed_worker.wake()
        else:  # no thread (e.g. after a fork): embed on this one
            step(core)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        with backlog.done:
            backlog.done.wait(0.05 if left is None else min(left, 0.05))
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    return deferred_codes.wait(core, left)


def finish(core: FieldCore) -> None:
    """At close: embed what is left (unless the embedder cannot run), then stop."""
    from chitta.field import embed_worker

    backlog: Backlog | None = getattr(core, "backlog", None)
    if backlog is None:
        return
    try:
        wait(core, None)
    except ChittaError:
        pass  # left to the next open
    embed_worker.unregister(core)
    backlog.step_lock.acquire()  # no step runs once close goes on
    backlog.step_lock.release()


def _embed_with_progress(core: FieldCore) -> None:
    """The open's leftovers embedded under a rich progress bar on stderr."""
    import sys

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    total = len(core.backlog.ids)
    console = Console(file=sys.stderr)
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*cols, console=console, transient=True) as bar:
        task = bar.add_task("embedding texts left without vectors", total=total)
        while core.backlog.ids and (n := step(core, 4 * BATCH)):
            bar.advance(task, n)
