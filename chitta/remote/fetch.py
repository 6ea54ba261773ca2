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

from pathlib import Path

from chitta.errors import CorruptionError
from chitta.remote import layout
from chitta.remote.local import append_bytes, live_elsewhere, local_segments
from chitta.remote.ship import Progress
from chitta.remote.store import ObjectStore


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

    def _pull_instance(self, inst: int, sizes: dict[int, int]) -> int:
        listing = self.store.list(layout.instance_prefix(inst), start_after=self._after.get(inst))
        applied = 0
        # A gap or a rejected chunk stops the instance for this pass: its records
        # arrive in its own order, never a later segment before an earlier one's end.
        blocked: set[int] = set()
        for key, size in listing.keys:
            ck = layout.parse_chunk_key(key)
            if ck is None or blocked:
                continue
            have = sizes.get(ck.first_seqno, 0)
            end = ck.offset + size - layout.CHUNK_HEADER
            if end <= have:  # already here
                self.progress.learn(inst, ck.first_seqno, end)
                if not blocked:
                    self._after[inst] = key
                continue
            if ck.offset != have or key in self.rejected:
                blocked.add(ck.first_seqno)
                continue
            got = self.store.get(key)
            if got is None:  # removed meanwhile: look again next pass
                blocked.add(ck.first_seqno)
                continue
            try:
                payload = layout.decode_chunk(self.field_id, ck, got[0])
            except CorruptionError as exc:
                self.rejected[key] = str(exc)
                blocked.add(ck.first_seqno)
                continue
            try:
                append_bytes(self.root, inst, ck.first_seqno, ck.offset, payload)
            except FileExistsError:  # another local process materialised it first
                blocked.add(ck.first_seqno)
                continue
            sizes[ck.first_seqno] = end
            self.progress.learn(inst, ck.first_seqno, end)
            applied += 1
            self.chunks += 1
            self.bytes += len(payload)
            if not blocked:
                self._after[inst] = key
        return applied
