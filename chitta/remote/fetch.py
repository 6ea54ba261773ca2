"""Fetching: other machines' chunks into local segment files, byte-identical.

A pass lists the instances under ``log/`` (one request, paged), then for each
instance not written on this machine the keys after the last chunk applied,
and appends each chunk that starts exactly where the local file ends. A chunk
past the local end (a gap: an upload still in flight) waits for the next pass;
one with a bad checksum, another field's id or a header unlike its key is
reported and never applied. The field's ``refresh()`` then replays the new
bytes like any other writer's growing segment, merged by (seqno, instance).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chitta.errors import CorruptionError
from chitta.remote import layout
from chitta.remote.local import append_bytes, live_elsewhere, local_segments
from chitta.remote.ship import Progress
from chitta.remote.store import ObjectStore

FETCH_THREADS = 8  # chunks fetched at once (applied in order)


class Fetcher:
    def __init__(self, root: Path, store: ObjectStore, field_id: bytes, own: int, progress: Progress) -> None:
        self.root, self.store, self.field_id, self.own = root, store, field_id, own
        self.progress = progress
        self._after: dict[int, str] = {}  # instance -> the last key applied or already held
        self.rejected: dict[str, str] = {}  # chunk key -> why it was not applied
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
            if inst == self.own or live_elsewhere(self.root, inst):
                continue  # written here: the local file is the source, not the bucket
            applied += self._pull_instance(inst, dict(local.get(inst, ())))
        return applied

    def _plan(self, inst: int, keys: list[tuple[str, int]], sizes: dict[int, int]) -> list[layout.ChunkKey]:
        """The chunks to fetch, in order: each starts where the local file (or the chunk
        before it) ends; a gap or a rejected chunk stops the instance for this pass, so its
        records arrive in its own order, never a later segment before an earlier one's end."""
        have = dict(sizes)
        plan: list[layout.ChunkKey] = []
        for key, size in keys:
            ck = layout.parse_chunk_key(key)
            if ck is None:
                continue
            end = ck.offset + size - layout.CHUNK_HEADER
            at = have.get(ck.first_seqno, 0)
            if end <= at:  # already here
                self.progress.learn(inst, ck.first_seqno, end)
                if not plan:
                    self._after[inst] = key
                continue
            if ck.offset != at or key in self.rejected:
                break
            plan.append(ck)
            have[ck.first_seqno] = end
        return plan

    def _pull_instance(self, inst: int, sizes: dict[int, int]) -> int:
        listing = self.store.list(layout.instance_prefix(inst), start_after=self._after.get(inst))
        plan = self._plan(inst, listing.keys, sizes)
        if len(plan) > 1:
            with ThreadPoolExecutor(min(FETCH_THREADS, len(plan))) as pool:
                blobs = list(pool.map(lambda ck: self.store.get(ck.key()), plan))
        else:
            blobs = [self.store.get(ck.key()) for ck in plan]
        applied = 0
        for ck, got in zip(plan, blobs):
            if got is None:  # removed meanwhile: look again next pass
                break
            try:
                payload = layout.decode_chunk(self.field_id, ck, got[0])
            except CorruptionError as exc:
                self.rejected[ck.key()] = str(exc)
                break
            try:
                append_bytes(self.root, inst, ck.first_seqno, ck.offset, payload)
            except FileExistsError:  # another local process materialised it first
                break
            self.progress.learn(inst, ck.first_seqno, ck.offset + len(payload))
            self._after[inst] = ck.key()
            applied += 1
            self.chunks += 1
            self.bytes += len(payload)
        return applied
