"""Compaction: a sealed segment's many small chunks merged into larger objects.

A maintenance pass (``field.remote.compact()``, any machine: every byte is in
the bucket and checksummed). A segment is sealed once a later segment of its
instance has a chunk in the bucket (shippers finish a segment before starting
the next). Runs of consecutive small plain chunks of its cover are read,
checked, concatenated and written as one compacted chunk
``c{offset:016}-{end:016}`` with a create-only put; the compacted object is
read back and compared, and only then are the small chunks it holds deleted.
Bytes never change: a compacted chunk holds exactly the bytes the small ones
held, and readers take whichever objects cover what they lack (cover.py), so a
reader in the middle of a pass that misses a deleted chunk finds the compacted
one on its next listing (its key sorts after the segment's plain chunks).
"""

from __future__ import annotations

from dataclasses import dataclass

from chitta.errors import CorruptionError, RemoteError
from chitta.remote import cover, layout
from chitta.remote.cover import Piece
from chitta.remote.store import ObjectStore

SMALL = 1 << 20  # plain chunks below this many bytes are merged
TARGET = 32 << 20  # a compacted chunk holds at most this many bytes


@dataclass
class Compacted:
    objects_written: int = 0
    chunks_deleted: int = 0
    bytes_merged: int = 0


def _instances(store: ObjectStore) -> list[int]:
    out = []
    for p in store.list(layout.LOG, delimiter="/").prefixes:
        name = p[len(layout.LOG) :].rstrip("/")
        if len(name) == 8 and all(c in "0123456789abcdef" for c in name):
            out.append(int(name, 16))
    return out


def _runs(chosen: list[Piece], small: int, target: int) -> list[list[Piece]]:
    """Consecutive small plain chunks of a cover, grouped up to ``target`` bytes."""
    runs: list[list[Piece]] = []
    run: list[Piece] = []
    for p in chosen:
        size = p.end - p.ck.offset
        if (
            p.ck.compacted
            or size >= small
            or (run and run[-1].end - run[0].ck.offset + size > target)
        ):
            if len(run) > 1:
                runs.append(run)
            run = [] if (p.ck.compacted or size >= small) else [p]
            continue
        run.append(p)
    if len(run) > 1:
        runs.append(run)
    return runs


def _merge(store: ObjectStore, field_id: bytes, run: list[Piece]) -> bytes:
    out = bytearray()
    start = run[0].ck.offset
    for p in run:
        got = store.get(p.key)
        if got is None:
            raise RemoteError(f"{p.key} vanished during compaction (another pass?); run it again")
        payload = layout.decode_chunk(field_id, p.ck, got[0])
        at = start + len(out)
        cut = at - p.ck.offset
        if cut and bytes(out[-cut:]) != payload[:cut]:
            raise CorruptionError(
                f"{p.key} overlaps the chunk before it with other bytes; not compacted"
            )
        out += payload[cut:]
    return bytes(out)


def compact(
    store: ObjectStore, field_id: bytes, *, small: int = SMALL, target: int = TARGET
) -> Compacted:
    """One pass over every instance of the prefix. Safe to run on several machines
    at once (create-only puts; deleting a chunk already deleted is a no-op)."""
    done = Compacted()
    target = min(target, layout.MAX_CHUNK)
    for inst in _instances(store):
        segments = cover.by_segment(cover.pieces(store.list(layout.instance_prefix(inst)).keys))
        sealed = list(segments.items())[:-1]  # the last segment may still grow
        for (_i, first), segment in sealed:
            chosen = cover.cover(segment, 0)
            for run in _runs(chosen, small, target):
                start, end = run[0].ck.offset, run[-1].end
                data = _merge(store, field_id, run)
                at = layout.ChunkKey(inst, first, start, end)
                blob = layout.encode_chunk(field_id, at, data)
                store.put_new(
                    at.key(), blob
                )  # False: another pass made it; it must read back the same
                got = store.get(at.key())  # readable before anything is deleted
                if got is None or layout.decode_chunk(field_id, at, got[0]) != data:
                    raise RemoteError(
                        f"{at.key()} does not read back as written; the small chunks are kept"
                    )
                done.objects_written += 1
                done.bytes_merged += len(data)
                for p in segment:  # every plain chunk the new object holds, duplicates too
                    if not p.ck.compacted and start <= p.ck.offset and p.end <= end:
                        store.delete(p.key)
                        done.chunks_deleted += 1
    return done
