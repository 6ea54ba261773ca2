"""Field maintenance: the write gate, sparse-encoder learning, re-encoding of
stale codes, re-embedding with a new embedder, and ``maintain()`` running the
periodic passes at once.

A mixin of :class:`chitta.field.Field`. Every pass builds its ops from the
organs' state and commits them through the log (``_commit``/``_commit_group``),
so a reopened field replays to the same state.
"""

from __future__ import annotations

import numpy as np

from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.errors import InvalidArgument
from chitta.field.state import FieldState
from chitta.ops import Op
from chitta.recall.blas import one_thread

STAGED_PRUNE_DAYS = 7.0  # staged memories never recalled for this long are pruned
WRITE_GATE_EVERY = 50  # embedded writes between write-gate passes
# Embedded writes between sparse-encoder learning steps: LEARN_EVERY while the
# field is small, then a fixed fraction of the field's vectors (1/16), so a
# growing field takes ~16 steps per doubling rather than one per 1,024 writes
# (a million-memory import: ~110 steps, not ~980). One step logs at most
# max_rows (256) atoms: 256 x 384 x 4 B = 384 KiB at dim 384.
LEARN_EVERY = 1024
LEARN_FRACTION = 16
MS_PER_DAY = 86_400_000


class MaintainMixin(FieldState):
    """Maintenance passes of Field (the state they use: chitta/field/state.py)."""

    # ---- maintenance ----------------------------------------------------------------
    def _after_embedded_writes(self, n: int) -> None:
        if n <= 0:
            return
        before = self._embedded_writes
        self._embedded_writes += n
        if before // WRITE_GATE_EVERY != self._embedded_writes // WRITE_GATE_EVERY:
            self.write_gate_pass()
        self._since_learning += n
        if self._since_learning >= max(LEARN_EVERY, self._index.vector_count // LEARN_FRACTION):
            self._since_learning = 0
            self.learn_encoder()

    def write_gate_pass(self) -> int:
        """Prune staged memories (never recalled) older than 7 days; returns how many.
        Runs by itself every 50 embedded writes."""
        self._check_writable()
        now = self._now_ms()
        cutoff = now - int(STAGED_PRUNE_DAYS * MS_PER_DAY)
        old = []
        # Oldest arrivals first, stopping at the first one still young: a pass costs
        # what it prunes, not the size of the field. (Arrivals from writers with
        # skewed clocks may wait behind a younger one for that skew.)
        for mid in self._index.staged_oldest_first():
            memory = self._memories.get(mid)
            # Age counts from when the memory was written, not from its event
            # time: imported history is not stale on arrival.
            if memory is None or memory.written_ms >= cutoff:
                break
            if memory.access_count == 0:
                old.append(mid)
        self._commit_group([ops.DeleteMemory(id=mid, at_ms=now) for mid in sorted(old)])
        return len(old)

    def learn_encoder(self, *, max_vectors: int = 1024) -> int | None:
        """One learning step of the sparse encoder on the most recent vectors;
        logs the result (UpdateSparseEncoder) and returns the new version."""
        self._check_writable()
        encoder = self._encoder_organ.encoder
        if encoder is None:
            return None
        vectors = self._index.recent_vectors(max_vectors)
        if len(vectors) == 0:
            return encoder.version
        with one_thread():  # many small products: threads only wait for each other here
            step = encoder.learn(vectors, at_ms=self._now_ms())
        self._commit(step)
        return encoder.version

    def reencode(self, *, batch: int = 512) -> int:
        """Re-encode the sparse codes older than the encoder's version. A new code
        is logged (UpdateSparseCode, atomic groups of ``batch``) only where the
        active features changed: a learning step moves a few hundred atoms, and
        most codes keep their features. Returns how many codes were rewritten."""
        self._check_writable()
        encoder = self._encoder_organ.encoder
        if encoder is None:
            return 0
        stale = [mid for mid in self._index.coded_ids() if (self._index.code_version(mid) or 0) < encoder.version]
        done = 0
        for lo in range(0, len(stale), batch):
            ids = [mid for mid in stale[lo : lo + batch] if self._index.vector(mid) is not None]
            if not ids:
                continue
            vectors = np.stack([self._index.vector(mid) for mid in ids])  # type: ignore[misc]
            changed = [
                op for op in code_ops(encoder, ids, vectors)
                if tuple(self._index.code_features(op.id)) != tuple(op.features)
            ]
            self._commit_group(changed)
            done += len(changed)
        return done

    def maintain(self) -> dict[str, int | None]:
        """The periodic passes at once: write gate, one encoder learning step,
        re-encoding of stale codes, surprise decay rates and demotion tiers."""
        return {
            "pruned_staged": self.write_gate_pass(),
            "encoder_version": self.learn_encoder(),
            "reencoded": self.reencode(),
            **self._lifecycle_maintain(),  # surprise -> decay rates, then demotion tiers
        }

    def _reembed(self) -> None:
        """Re-embed every live memory with this handle's embedder (progress shown),
        logging the new vectors, codes and the embedder record."""
        from rich.progress import Progress

        if not self._encoding.enabled:
            raise InvalidArgument("reembed=True needs an embedder")
        ids = [mid for mid in self._memories.live_ids()]
        embedder = self._encoding.embedder
        assert embedder is not None
        now = self._now_ms()
        from chitta.encode.sparse import SparseEncoder

        setup: list[Op] = [
            ops.ConfigureField(key="embedder", value={"name": embedder.name, "family": embedder.family, "dim": embedder.dim}, at_ms=now)
        ]
        encoder = self._encoder_organ.encoder
        if encoder is None or encoder.dim != embedder.dim:
            setup.append(SparseEncoder(embedder.dim).init_op(at_ms=now))
        self._commit_group(setup)
        encoder = self._encoder_organ.encoder
        assert encoder is not None

        with Progress(transient=True) as progress:
            task = progress.add_task("re-embedding", total=len(ids))
            for lo in range(0, len(ids), 256):
                chunk = ids[lo : lo + 256]
                texts = [self._memories.get(mid).text for mid in chunk]  # type: ignore[union-attr]
                vecs = self._encoding.embed(texts)
                group: list[Op] = [
                    ops.UpdateMemoryContent(id=mid, at_ms=now, embedding=vecs[j].astype("<f4").tobytes())
                    for j, mid in enumerate(chunk)
                ]
                group.extend(code_ops(encoder, chunk, vecs))
                self._commit_group(group)
                progress.advance(task, len(chunk))
