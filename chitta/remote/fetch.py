"""Fetching: other machines' chunks into local segment files, byte-identical.

A pass lists the instances under ``log/`` (one request, paged), then for each
instance not written on this machine the keys after the last chunk applied,
and appends the objects that cover the bytes from the local file's end on
(chitta/remote/cover.py: plain or compacted chunks, overlapping or not). A
chunk past the local end (a gap: an upload still in flight) waits for the next pass;
one with a bad checksum, another field's id or a header unlike its key is
reported and never applied. The field's ``refresh()`` then replays the new
bytes like any other writer's growing segment, merged by (seqno, instance).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chitta.errors import CorruptionError
from chitta.remote import cover, diverge, layout
from chitta.remote.cover import Piece
from chitta.remote.local import (
    append_bytes,
    live_elsewhere,
    local_segments,
    read_range,
    segment_name,
)
from chitta.remote.ship import Progress
from chitta.remote.store import ObjectStore

FETCH_THREADS = 8  # chunks fetched at once (applied in order)


class Fetcher:
    def __init__(
        self, root: Path, store: ObjectStore, field_id: bytes, own: int, progress: Progress
    ) -> None:
        self.root, self.store, self.field_id, self.own = root, store, field_id, own
        self.progress = progress
        self._after: dict[int, str] = {}  # instance -> the last key applied or already held
        self.rejected: dict[str, str] = {}  # chunk key -> why it was not applied
        self.diverged: dict[int, str] = {}  # instance -> why the bucket and the local copy disagree
        self._checked: set[tuple[int, int]] = (
            set()
        )  # segments whose local bytes were compared or fetched here
        self.chunks = 0
        self.bytes = 0

    def instances(self) -> list[int]:
        listing = self.store.list(layout.LOG, delimiter="/")
        out = []
        for p in listing.prefixes:
            name = p[len(layout.LOG) :].rstrip("/")
            if len(name) == 8:
                try:
                    out.append(int(name, 16))
                except ValueError:
                    continue
        return out

    def pull_once(self) -> int:
        """One pass over every foreign instance. Returns chunks applied."""
        applied = 0
        local = local_segments(self.root)
        for inst in self.instances():
            if inst == self.own or inst in self.diverged or live_elsewhere(self.root, inst):
                continue  # written here (the local file is the source), or disagreeing: reported
            applied += self._pull_instance(inst, dict(local.get(inst, ())))
        return applied

    def _learn(self, inst: int, first: int, end: int) -> None:
        with self.progress.lock:
            if inst in self.progress.listed:
                return  # an instance this machine ships: its shipper's own listing says what is there
        self.progress.learn(inst, first, end)

    def _plan(
        self, inst: int, found: list[Piece], sizes: dict[int, int]
    ) -> list[tuple[Piece, int]]:
        """The objects to fetch, in order, each with the file offset it extends from:
        the cover of each segment from the local file's end; a gap or a rejected object
        stops the instance for this pass, so its records arrive in its own order, never
        a later segment before an earlier one's end."""
        plan: list[tuple[Piece, int]] = []
        for (_i, first), segment in cover.by_segment(found).items():
            at = sizes.get(first, 0)
            for p in segment:
                if p.end <= at:  # already here
                    self._learn(inst, first, p.end)
            chosen = cover.cover(segment, at, skip=self.rejected.keys())
            if chosen and 0 < at == chosen[0].ck.offset and (inst, first) not in self._checked:
                # the first extension here of bytes this process did not fetch (a power loss may
                # have changed them): the object ending at the local end is compared first
                before = [
                    p for p in segment if p.ck.offset < at <= p.end and p.key not in self.rejected
                ]
                if before:
                    plan.append((max(before, key=lambda p: p.ck.offset), at))
            for p in chosen:
                plan.append((p, at))
                at = p.end
            if any(p.end > at for p in segment):
                break
        return plan

    def _pull_instance(self, inst: int, sizes: dict[int, int]) -> int:
        listing = self.store.list(layout.instance_prefix(inst), start_after=self._after.get(inst))
        found = cover.pieces(listing.keys)
        plan = self._plan(inst, found, sizes)
        if len(plan) > 1:
            with ThreadPoolExecutor(min(FETCH_THREADS, len(plan))) as pool:
                blobs = list(pool.map(lambda pa: self.store.get(pa[0].key), plan))
        else:
            blobs = [self.store.get(p.key) for p, _at in plan]
        applied = 0
        held = dict(sizes)
        for (p, at), got in zip(plan, blobs):
            if got is None:  # removed meanwhile (compacted): look again next pass
                break
            try:
                payload = self._payload(p, at, got[0])
            except CorruptionError as exc:
                self.rejected[p.key] = str(exc)
                break
            self._checked.add(p.segment)
            if p.end <= at:  # the comparison only: nothing to append
                continue
            try:
                append_bytes(self.root, inst, p.ck.first_seqno, at, payload)
            except FileExistsError:  # another local process materialised it first
                break
            held[p.ck.first_seqno] = p.end
            self._learn(inst, p.ck.first_seqno, p.end)
            applied += 1
            self.chunks += 1
            self.bytes += len(payload)
        for p in found:  # list after the last key whose bytes are all here
            if p.end > held.get(p.ck.first_seqno, 0):
                break
            self._after[inst] = p.key
        return applied

    def _payload(self, p: Piece, at: int, blob: bytes) -> bytes:
        """The bytes of object ``p`` from file offset ``at`` on; the part before ``at``
        (an overlap) must equal what the local file holds there."""
        payload = layout.decode_chunk(self.field_id, p.ck, blob)
        if at == p.ck.offset:
            return payload
        cut = min(at, p.end) - p.ck.offset
        seg = self.root / "segments" / segment_name(p.ck.instance, p.ck.first_seqno)
        if read_range(seg, p.ck.offset, cut) != payload[:cut]:
            why = (
                f"the bucket's bytes of {seg.name} differ from this machine's before offset {at}: "
                f"the local copy was damaged or lost data (a power loss?); {diverge.REPAIR_HINT}"
            )
            self.diverged[p.ck.instance] = why
            raise CorruptionError(why)
        return payload[cut:] if at < p.end else b""
