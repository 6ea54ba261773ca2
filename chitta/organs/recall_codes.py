"""Sparse codes waiting for the posting index (the recall-index organ fills the
native index from here in one batch, on the first posting query or checkpoint).

Codes arrive one op at a time (``set``: a tuple of feature ids and the float32
activation bytes, as the op holds them) or as a replayed run (``add_run``: the
arrays of ``CodeColumns``, kept as they are: no per-code Python object). The
newest code of an id wins; ``discard`` (a forgotten memory) voids the codes
it had so far. ``take`` hands everything over as three arrays.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
F32 = npt.NDArray[np.float32]


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
        activations (n, active)), in no particular order; empties the queue."""
        parts: list[tuple[U64, U32, F32]] = []
        if self._chunks:
            parts.append(self._chunk_codes(active))
        one = [
            (mid, f, a)
            for mid, (f, a) in self._one.items()
            if len(f) == active and len(a) == 4 * active
        ]
        if one:
            parts.append(
                (
                    np.array([m for m, _, _ in one], np.uint64),
                    np.array([f for _, f, _ in one], np.uint32).reshape(len(one), active),
                    np.frombuffer(b"".join(a for _, _, a in one), "<f4")
                    .astype(np.float32)
                    .reshape(len(one), active),
                )
            )
        self._one.clear()
        self._chunks.clear()
        self._voided.clear()
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

    def _chunk_codes(self, active: int) -> tuple[U64, U32, F32]:
        chunks = [c for c in self._chunks if c[1].shape[1:] == (active,)]
        if not chunks:
            return (
                np.zeros(0, np.uint64),
                np.zeros((0, active), np.uint32),
                np.zeros((0, active), np.float32),
            )
        ids = np.concatenate([c[0] for c in chunks])
        feats = np.concatenate([c[1] for c in chunks])
        acts = np.concatenate([c[2] for c in chunks])
        keep = np.ones(len(ids), np.bool_)
        if self._voided:  # codes an id had before it was forgotten
            index = np.repeat(np.arange(len(self._chunks)), [len(c[0]) for c in self._chunks])
            index = index[
                np.concatenate(
                    [np.full(len(c[0]), c[1].shape[1:] == (active,)) for c in self._chunks]
                )
            ]
            v_ids = np.fromiter(self._voided.keys(), np.uint64, len(self._voided))
            v_before = np.fromiter(self._voided.values(), np.int64, len(self._voided))
            order = np.argsort(v_ids)
            v_ids, v_before = v_ids[order], v_before[order]
            at = np.minimum(np.searchsorted(v_ids, ids), len(v_ids) - 1)
            keep &= ~((v_ids[at] == ids) & (index < v_before[at]))
        if self._one:  # a single code set later wins
            keep &= ~np.isin(ids, np.fromiter(self._one.keys(), np.uint64, len(self._one)))
        # The newest row of each id: the first occurrence in reverse order.
        rev = np.flatnonzero(keep)[::-1]
        _, first = np.unique(ids[rev], return_index=True)
        if len(first) == len(ids):  # every row kept, each id once: no second copy (D-075)
            return ids, feats, acts
        rows = np.sort(rev[first])
        return ids[rows], feats[rows], acts[rows]
