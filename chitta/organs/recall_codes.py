"""Sparse codes waiting for the posting index (the recall-index organ fills the
native index from here in one batch, on the first posting query or checkpoint).

Codes arrive one op at a time (``set``: a tuple of feature ids and the float32
activation bytes, as the op holds them) or as a replayed run (``add_run``: the
arrays of ``CodeColumns``, kept as they are: no per-code Python object). The
newest code of an id wins; ``discard`` (a forgotten memory) voids the codes
it had so far. ``drain`` hands everything over chunk by chunk (``take``: as three arrays).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
F32 = npt.NDArray[np.float32]
_GONE: tuple[U64, U32, F32] = (
    np.zeros(0, np.uint64),
    np.zeros((0, 0), np.uint32),
    np.zeros((0, 0), np.float32),
)  # a drained chunk's place


class PendingCodes:
    def __init__(self) -> None:
        self._one: dict[
            int, tuple[tuple[int, ...], bytes]
        ] = {}  # per op: newer than every chunk entry
        self._chunks: list[tuple[U64, U32, F32]] = []
        self._voided: dict[int, int] = {}  # id -> chunks before this index hold void codes of it

    def __bool__(self) -> bool:
        return bool(self._one) or bool(self._chunks)

    def set(self, mid: int, features: tuple[int, ...], activations: bytes) -> None:
        self._one[mid] = (features, activations)

    def add_run(self, ids: U64, features: U32, activations: F32) -> None:
        """A run of codes, in order (an id may repeat: its last row wins)."""
        if not len(ids):
            return
        if self._one:  # the run is newer than the single codes of its ids
            for mid in ids.tolist():
                self._one.pop(mid, None)
        self._chunks.append((ids, features, activations))

    def discard(self, mid: int) -> None:
        self._one.pop(mid, None)
        if self._chunks:
            self._voided[mid] = len(self._chunks)

    def features(self, mid: int) -> tuple[int, ...] | None:
        """The feature ids of the newest pending code of ``mid``, as given."""
        one = self._one.get(mid)
        if one is not None:
            return one[0]
        void_before = self._voided.get(mid, 0)
        for c in range(len(self._chunks) - 1, void_before - 1, -1):
            ids, feats, _ = self._chunks[c]
            hit = np.flatnonzero(ids == np.uint64(mid))
            if len(hit):
                return tuple(feats[int(hit[-1])].tolist())
        return None

    def take(self, active: int) -> tuple[U64, U32, F32]:
        """Every id's newest code with ``active`` features, as (ids, features (n, active),
        activations (n, active)): the chunks' codes in log order, then the single ones;
        empties the queue. (``drain`` gives the same codes without the copy of them all.)"""
        parts = list(self.drain(active))
        if not parts:
            return (
                np.zeros(0, np.uint64),
                np.zeros((0, active), np.uint32),
                np.zeros((0, active), np.float32),
            )
        if len(parts) == 1:
            return parts[0]
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )

    def feature_counts(self, active: int, n_features: int) -> tuple[int, npt.NDArray[np.uint32]]:
        """(rows, how often each feature occurs) over the pending codes of ``active``
        features: an upper bound of what ``drain`` hands out (a code an id had before a
        newer one counts too), to size an index before the move."""
        counts = np.zeros(n_features, np.int64)
        rows = 0
        for _ids, feats, _acts in self._chunks:
            if feats.shape[1:] == (active,) and len(feats):
                counts += np.bincount(feats.reshape(-1), minlength=n_features)[:n_features]
                rows += len(feats)
        for f, _a in self._one.values():
            if len(f) == active:
                np.add.at(counts, np.minimum(np.array(f, np.int64), n_features - 1), 1)
                rows += 1
        return rows, np.minimum(counts, 2**32 - 1).astype(np.uint32)

    def drain(self, active: int) -> Iterator[tuple[U64, U32, F32]]:
        """``take``'s codes in the same order, one chunk at a time, each chunk let go once
        handed out: moving them into the posting index never holds a second copy of them
        all (D-089). Empties the queue (also if the caller stops early)."""
        chunks, voided, one = self._chunks, self._voided, self._one
        self._chunks, self._voided, self._one = [], {}, {}
        try:
            keep = self._kept_rows(chunks, voided, one, active)
            start = 0
            for c in range(len(chunks)):
                ids, feats, acts = chunks[c]
                chunks[c] = _GONE
                if feats.shape[1:] != (active,):
                    continue
                mine = keep[start : start + len(ids)]
                start += len(ids)
                if mine.all():
                    yield ids, feats, acts
                elif mine.any():
                    yield ids[mine], feats[mine], acts[mine]
                del ids, feats, acts
            part = self._single_codes(one, active)
            if part is not None:
                yield part
        finally:
            chunks.clear()

    @staticmethod
    def _kept_rows(
        chunks: list[tuple[U64, U32, F32]],
        voided: dict[int, int],
        one: dict[int, tuple[tuple[int, ...], bytes]],
        active: int,
    ) -> npt.NDArray[np.bool_]:
        """Over the chunks of ``active`` features, in order: whether each row is its id's
        newest code (not voided by a later forget, not overridden by a single code)."""
        same = [c for c in chunks if c[1].shape[1:] == (active,)]
        if not same:
            return np.zeros(0, np.bool_)
        ids = np.concatenate([c[0] for c in same])
        keep = np.ones(len(ids), np.bool_)
        if voided:
            index = np.repeat(np.arange(len(chunks)), [len(c[0]) for c in chunks])
            index = index[
                np.concatenate([np.full(len(c[0]), c[1].shape[1:] == (active,)) for c in chunks])
            ]
            v_ids = np.fromiter(voided.keys(), np.uint64, len(voided))
            v_before = np.fromiter(voided.values(), np.int64, len(voided))
            order = np.argsort(v_ids)
            v_ids, v_before = v_ids[order], v_before[order]
            at = np.minimum(np.searchsorted(v_ids, ids), len(v_ids) - 1)
            keep &= ~((v_ids[at] == ids) & (index < v_before[at]))
        if one:
            keep &= ~np.isin(ids, np.fromiter(one.keys(), np.uint64, len(one)))
        rev = np.flatnonzero(keep)[::-1]
        _, first = np.unique(ids[rev], return_index=True)
        newest = np.zeros(len(ids), np.bool_)
        newest[rev[first]] = True
        return newest

    @staticmethod
    def _single_codes(
        one: dict[int, tuple[tuple[int, ...], bytes]], active: int
    ) -> tuple[U64, U32, F32] | None:
        rows = [
            (mid, f, a) for mid, (f, a) in one.items() if len(f) == active and len(a) == 4 * active
        ]
        if not rows:
            return None
        return (
            np.array([m for m, _, _ in rows], np.uint64),
            np.array([f for _, f, _ in rows], np.uint32).reshape(len(rows), active),
            np.frombuffer(b"".join(a for _, _, a in rows), "<f4")
            .astype(np.float32)
            .reshape(len(rows), active),
        )
