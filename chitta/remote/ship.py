"""Shipping: this machine's segment bytes into the bucket as chunk objects.

Each pass takes, per local instance this process may ship (its own, or one
whose writer is gone: nobody else will ship its tail), the bytes of its
segments beyond what was handed out, cut at record boundaries, and starts
create-only puts of them, up to ``max_inflight`` at once (a pipeline: a chunk
is cut while earlier ones are still uploading). The bucket's contiguous end
advances only over landed chunks without a gap, and that is what a sync-mode
write waits for: a record is acknowledged once every chunk up to the one
holding it is in the bucket. Segments of an instance go in order and a segment
is finished (every upload landed) before the next is started, so a chunk of
segment B in the bucket means every earlier segment is complete there. A create that
finds the key taken compares: the same bytes (a retry after a crash) count as
shipped; other bytes mean the instance was written elsewhere or local data was
lost, which is reported and that instance is no longer shipped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from chitta.errors import ChittaError, CorruptionError, RemoteError
from chitta.remote import cover, layout
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


CHUNK_TARGET = 8 << 20  # bytes read per cut: a chunk holds the whole records among them
MAX_INFLIGHT = 4  # uploads of one instance in flight at once (acknowledged in order)


@dataclass
class _Lane:
    """One instance's uploads: the segment being shipped, how far it was cut, the
    chunks in flight and those landed beyond the contiguous end."""

    first: int = -1
    sent: int = 0  # end of the bytes handed to uploads
    last_seqno: int = 0  # seqno of the last record cut (the scan's order check)
    flying: dict[int, tuple[int, bytes, Future[bool]]] = field(
        default_factory=dict
    )  # offset -> end, payload
    landed: dict[int, int] = field(default_factory=dict)  # offset -> end: in the bucket, past a gap
    failed: bool = False  # an upload failed or found its key taken: re-cut from the contiguous end


class Shipper:
    def __init__(
        self,
        root: Path,
        store: ObjectStore,
        field_id: bytes,
        own: int,
        progress: Progress,
        *,
        inflight: int = MAX_INFLIGHT,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.root, self.store, self.field_id, self.own = root, store, field_id, own
        self.progress = progress
        self.max_inflight = inflight
        self.diverged: dict[int, str] = {}  # instance -> why it is no longer shipped
        self._lanes: dict[int, _Lane] = {}
        self._lock = threading.RLock()  # the lanes: the ship thread and the upload threads
        self._wake = wake
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False
        self.chunks = 0
        self.bytes = 0

    def close(self) -> None:
        with self._lock:  # no upload starts once the pool is going away
            self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def list_instance(self, instance: int) -> None:
        """Learn what the bucket holds of an instance (one listing, all pages)."""
        from chitta.remote import diverge

        found = cover.pieces(self.store.list(layout.instance_prefix(instance)).keys)
        verdict = diverge.check(self.root, self.store, self.field_id, instance, found)
        if verdict is not None and (verdict[0] == diverge.DIFFERS or instance == self.own):
            # a shorter copy of a finished instance is completed by the fetcher; anything else stops here
            self.diverged[instance] = (
                f"{verdict[1]}; it is no longer shipped: {diverge.REPAIR_HINT}"
            )
        for (inst, first), end in cover.contiguous_ends(found).items():
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
                total += sum(
                    max(0, size - self.progress.remote_end.get((inst, f), 0)) for f, size in segs
                )
        return total

    def ship_once(self) -> int:
        """One pass over every instance shipped here: take in the uploads that finished,
        start new ones (at most ``max_inflight`` per instance). Returns how many
        uploads finished or started (0: nothing to do until a write or an upload ends)."""
        moved = 0
        error: Exception | None = None
        for inst, segs in self.pending().items():
            if inst not in self.progress.listed:
                self.list_instance(inst)
                if inst in self.diverged:
                    continue
            with self._lock:
                lane = self._lanes.setdefault(inst, _Lane())
                try:
                    moved += self._reap(inst, lane)
                    moved += self._feed(inst, self._lanes[inst], segs)
                except (ChittaError, OSError) as exc:
                    error = error or exc
        if error is not None:
            raise error
        return moved

    def _reap(self, inst: int, lane: _Lane) -> int:
        """Finished uploads: landed ones advance the contiguous end (in order)."""
        done = [(off, v) for off, v in lane.flying.items() if v[2].done()]
        error: Exception | None = None
        for off, (end, payload, fut) in done:
            del lane.flying[off]
            at = layout.ChunkKey(inst, lane.first, off)
            try:
                if fut.result():
                    lane.landed[off] = end
                    self.chunks += 1
                    self.bytes += end - off
                    continue
                theirs = self._taken(at, payload)  # the key was taken: same bytes count as landed
                if theirs is not None:
                    lane.landed[off] = off + theirs
                lane.failed = lane.failed or theirs != end - off
            except Exception as exc:  # noqa: BLE001 - the upload's error, kept for the caller
                lane.failed = True
                error = error or exc
        if done:
            self._advance(inst, lane)
        if error is not None:
            raise error
        return len(done)

    def _advance(self, inst: int, lane: _Lane) -> None:
        with self.progress.lock:
            end = self.progress.remote_end.get((inst, lane.first), 0)
        moved = True
        while moved:
            moved = False
            for off, e in list(lane.landed.items()):
                if e <= end:
                    del lane.landed[off]
                elif off <= end:
                    end, moved = e, True
                    del lane.landed[off]
        self.progress.learn(inst, lane.first, end)

    def _feed(self, inst: int, lane: _Lane, segs: list[tuple[int, int]]) -> int:
        """Start uploads of the bytes not yet handed out, from the first segment the
        bucket does not hold completely (never two segments at once)."""
        with self.progress.lock:
            todo = [
                (i, f, s)
                for i, (f, s) in enumerate(segs)
                if self.progress.remote_end.get((inst, f), 0) < s
            ]
        if not todo:
            return 0
        i, first, size = todo[0]
        if lane.first != first or lane.failed:
            if lane.flying:
                return 0  # wait for the earlier segment's (or the failed lane's) uploads
            with self.progress.lock:
                end = self.progress.remote_end.get((inst, first), 0)
            landed = lane.landed if lane.first == first else {}
            self._lanes[inst] = lane = _Lane(first=first, sent=end, landed=landed)
        return self._fill(inst, lane, size, sealed=i < len(segs) - 1)

    def _fill(self, inst: int, lane: _Lane, size: int, *, sealed: bool) -> int:
        """Cut and start uploads of the lane's segment up to ``size`` (lock held)."""
        started = 0
        while len(lane.flying) < self.max_inflight and lane.sent < size:
            if lane.flying and size - lane.sent < max(
                e - o for o, (e, _p, _f) in lane.flying.items()
            ):
                break  # another upload only for a backlog as large as one in flight: chunks stay full
            while lane.sent in lane.landed:  # already in the bucket (landed past a gap)
                lane.sent = lane.landed[lane.sent]
            limit = min([CHUNK_TARGET] + [o - lane.sent for o in lane.landed if o > lane.sent])
            payload = self._cut(inst, lane, sealed=sealed, limit=limit)
            if not payload:
                break
            off = lane.sent
            at = layout.ChunkKey(inst, lane.first, off)
            fut = self._submit(
                inst, lane, off, at.key(), layout.encode_chunk(self.field_id, at, payload)
            )
            lane.flying[off] = (off + len(payload), payload, fut)
            lane.sent += len(payload)
            started += 1
        return started

    def _submit(self, inst: int, lane: _Lane, off: int, key: str, blob: bytes) -> Future[bool]:
        if self._closed:
            raise RemoteError("the shipper is closed; reopen the field to ship what is left")
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max(4, self.max_inflight), thread_name_prefix="chitta-remote-put"
            )
        fut = self._pool.submit(self._upload, inst, lane, off, key, blob)
        if self._wake is not None:
            wake = self._wake
            fut.add_done_callback(lambda _f: wake())
        return fut

    def _upload(self, inst: int, lane: _Lane, off: int, key: str, blob: bytes) -> bool:
        """One put, on an upload thread. A landed chunk is taken in at once (the
        writers waiting on it are woken from here) and the next one cut; a taken key
        or an error is left to the ship thread (``_reap``)."""
        if not self.store.put_new(key, blob):
            return False
        with self._lock:
            if self._lanes.get(inst) is lane and off in lane.flying:
                end = lane.flying.pop(off)[0]
                lane.landed[off] = end
                self.chunks += 1
                self.bytes += end - off
                self._advance(inst, lane)
                path = self.root / "segments" / segment_name(inst, lane.first)
                try:
                    self._fill(inst, lane, path.stat().st_size, sealed=False)
                except OSError:
                    pass  # the ship thread's next pass tries again
        return True

    def _cut(self, inst: int, lane: _Lane, *, sealed: bool, limit: int) -> bytes:
        """The next chunk's bytes from ``lane.sent``: whole records only."""
        path = self.root / "segments" / segment_name(inst, lane.first)
        end = lane.sent
        data = read_range(path, end, limit)
        major = segment_major(path)
        n, last, damaged = whole_records(data, end, lane.last_seqno, major)
        if (
            n == 0 and len(data) == limit == CHUNK_TARGET
        ):  # one record larger than a chunk: it goes alone
            head = SEGMENT_HEADER if end == 0 else 0
            if len(data) >= head + 4:
                size = head + record_head(major) + int.from_bytes(data[head : head + 4], "little")
                data = read_range(path, end, size)
                n, last, damaged = whole_records(data, end, lane.last_seqno, major)
        if sealed and n == 0 and damaged:  # never written again: ship its bytes as they are
            n = len(data)
        lane.last_seqno = last
        return data[:n]

    def _taken(self, at: layout.ChunkKey, payload: bytes) -> int | None:
        """The chunk key exists: accept it (its length) if it holds bytes of our file,
        else stop shipping the instance (RemoteError)."""
        got = self.store.get(at.key())
        if got is None:
            return None  # deleted meanwhile (compacted): re-cut from the contiguous end
        try:
            theirs = layout.decode_chunk(self.field_id, at, got[0])
        except CorruptionError as exc:
            self.diverged[at.instance] = str(exc)
            raise RemoteError(f"instance {at.instance:08x} not shipped: {exc}") from exc
        local = read_range(
            self.root / "segments" / segment_name(at.instance, at.first_seqno),
            at.offset,
            len(theirs),
        )
        if local == theirs:  # a retry after a crash, or another process shipped it: same bytes
            return len(theirs)
        why = (
            f"the bucket holds other bytes at {at.key()} than this machine's segment: instance "
            f"{at.instance:08x} was written on two machines, or this machine lost data"
        )
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
