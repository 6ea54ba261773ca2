"""Shipping: this machine's segment bytes into the bucket as chunk objects.

Each pass takes, per local instance this process may ship (its own, or one
whose writer is gone: nobody else will ship its tail), the bytes of its
segments beyond what the bucket holds, cut at a record boundary, and writes
them as one chunk with a create-only put. Segments of an instance go in order
and a segment is finished before the next is started, so a chunk of segment B
in the bucket means every earlier segment is complete there. A create that
finds the key taken compares: the same bytes (a retry after a crash) count as
shipped; other bytes mean the instance was written elsewhere or local data was
lost, which is reported and that instance is no longer shipped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chitta.errors import CorruptionError, RemoteError
from chitta.remote import layout
from chitta.remote.local import (
    SEGMENT_HEADER,
    live_elsewhere,
    local_segments,
    read_range,
    record_head,
    segment_major,
    segment_name,
    whole_records,
)
from chitta.remote.store import ObjectStore


@dataclass
class Progress:
    """What the bucket is known to hold: contiguous bytes from 0 of each segment,
    shared by the shipper and the fetcher (guarded by ``lock``)."""

    remote_end: dict[tuple[int, int], int] = field(default_factory=dict)
    listed: set[int] = field(default_factory=set)  # instances whose bucket keys were listed
    lock: threading.Lock = field(default_factory=threading.Lock)
    cond: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.cond = threading.Condition(self.lock)

    def learn(self, instance: int, first_seqno: int, end: int) -> None:
        with self.cond:
            key = (instance, first_seqno)
            if end > self.remote_end.get(key, 0):
                self.remote_end[key] = end
                self.cond.notify_all()


def contiguous_ends(keys: list[tuple[layout.ChunkKey, int]]) -> dict[tuple[int, int], int]:
    """Per segment, the end of the chunks that follow each other from offset 0
    (sizes are object sizes: header included)."""
    ends: dict[tuple[int, int], int] = {}
    for ck, size in sorted(keys):
        seg = (ck.instance, ck.first_seqno)
        end = ends.get(seg, 0)
        if ck.offset == end:
            ends[seg] = end + size - layout.CHUNK_HEADER
    return ends


CHUNK_TARGET = 8 << 20  # bytes read per pass and segment: a chunk holds the whole records among them


class Shipper:
    def __init__(self, root: Path, store: ObjectStore, field_id: bytes, own: int, progress: Progress) -> None:
        self.root, self.store, self.field_id, self.own = root, store, field_id, own
        self.progress = progress
        self.diverged: dict[int, str] = {}  # instance -> why it is no longer shipped
        self._last_seqno: dict[tuple[int, int], int] = {}
        self.chunks = 0
        self.bytes = 0

    def list_instance(self, instance: int) -> None:
        """Learn what the bucket holds of an instance (one listing, all pages)."""
        listing = self.store.list(layout.instance_prefix(instance))
        keys = [(ck, size) for k, size in listing.keys if (ck := layout.parse_chunk_key(k)) is not None]
        for (inst, first), end in contiguous_ends(keys).items():
            self.progress.learn(inst, first, end)
        with self.progress.lock:
            self.progress.listed.add(instance)

    def pending(self) -> dict[int, list[tuple[int, int]]]:
        """The local instances this process ships, with their segments."""
        out = {}
        for inst, segs in local_segments(self.root).items():
            if inst in self.diverged or (inst != self.own and live_elsewhere(self.root, inst)):
                continue
            out[inst] = segs
        return out

    def lag_bytes(self) -> int:
        total = 0
        for inst, segs in self.pending().items():
            with self.progress.lock:
                total += sum(max(0, size - self.progress.remote_end.get((inst, f), 0)) for f, size in segs)
        return total

    def ship_once(self) -> int:
        """One pass: at most one chunk per instance. Returns chunks written."""
        written = 0
        for inst, segs in self.pending().items():
            if inst not in self.progress.listed:
                self.list_instance(inst)
            for i, (first, size) in enumerate(segs):
                with self.progress.lock:
                    end = self.progress.remote_end.get((inst, first), 0)
                if end >= size:
                    continue
                if self._ship_segment(inst, first, end, sealed=i < len(segs) - 1):
                    written += 1
                break  # finish this segment before the next one starts
        return written

    def _ship_segment(self, inst: int, first: int, end: int, *, sealed: bool) -> bool:
        path = self.root / "segments" / segment_name(inst, first)
        data = read_range(path, end, CHUNK_TARGET)
        last = self._last_seqno.get((inst, first), 0)
        if sealed:  # never written again: ship it as it is
            n = len(data)
        else:
            major = segment_major(path)
            n, last, _damaged = whole_records(data, end, self._last_seqno.get((inst, first), 0), major)
            if n == 0 and len(data) == CHUNK_TARGET:  # one record larger than a chunk: it goes alone
                head = SEGMENT_HEADER if end == 0 else 0
                if len(data) >= head + 4:
                    size = head + record_head(major) + int.from_bytes(data[head:head + 4], "little")
                    data = read_range(path, end, size)
                    n, last, _damaged = whole_records(data, end, self._last_seqno.get((inst, first), 0), major)
        if n == 0:
            return False
        payload = data[:n]
        at = layout.ChunkKey(inst, first, end)
        if not self.store.put_new(at.key(), layout.encode_chunk(self.field_id, at, payload)):
            self._taken(at, payload)
            return False
        self._last_seqno[(inst, first)] = last  # only once the bucket has it: a failed put is redone
        self.progress.learn(inst, first, end + n)
        self.chunks += 1
        self.bytes += n
        return True

    def _taken(self, at: layout.ChunkKey, payload: bytes) -> None:
        """The chunk key exists: accept it if it holds bytes of our file, else stop."""
        got = self.store.get(at.key())
        if got is None:
            return  # deleted meanwhile: the next pass writes it again
        try:
            theirs = layout.decode_chunk(self.field_id, at, got[0])
        except CorruptionError as exc:
            self.diverged[at.instance] = str(exc)
            raise RemoteError(f"instance {at.instance:08x} not shipped: {exc}") from exc
        local = read_range(self.root / "segments" / segment_name(at.instance, at.first_seqno), at.offset,
                           len(theirs))
        if local == theirs:  # a retry after a crash, or another process shipped it: same bytes
            self.progress.learn(at.instance, at.first_seqno, at.offset + len(theirs))
            return
        why = (f"the bucket holds other bytes at {at.key()} than this machine's segment: instance "
               f"{at.instance:08x} was written on two machines, or this machine lost data")
        self.diverged[at.instance] = why
        raise RemoteError(why + "; it is no longer shipped, see docs/REMOTE.md (divergence)")

    def caught_up(self, target: tuple[int, int]) -> bool:
        """Whether the bucket holds this instance's log up to (first_seqno, size)
        (call with ``progress.lock`` held)."""
        first, size = target
        return self.progress.remote_end.get((self.own, first), 0) >= size

    def own_end(self) -> tuple[int, int] | None:
        segs = local_segments(self.root).get(self.own)
        return segs[-1] if segs else None


def wait_until(progress: Progress, done: Callable[[], bool], deadline: float) -> bool:
    """Wait until ``done()`` (called with the progress lock held) or the deadline."""
    with progress.cond:
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            progress.cond.wait(min(left, 0.05))
    return True
