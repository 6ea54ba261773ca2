"""Which bucket objects make up a segment's bytes: the cover of a listing.

A segment's objects (plain chunks and compacted ones) may arrive out of order
(several uploads in flight), overlap (a chunk cut again after a crash, a
compacted chunk beside the small ones it replaces) or leave gaps (an upload not
yet done). The bytes held contiguously from an offset are found greedily: of
the objects that start at or before it and end after it, take the one reaching
furthest, and repeat. Overlapping objects hold the same bytes (every object is
a range of one append-only file), which readers check before they append.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from chitta.remote import layout


@dataclass(frozen=True)
class Piece:
    ck: layout.ChunkKey
    key: str
    end: int  # file offset just past the object's bytes

    @property
    def segment(self) -> tuple[int, int]:
        return (self.ck.instance, self.ck.first_seqno)


def pieces(keys: Iterable[tuple[str, int]]) -> list[Piece]:
    """The chunk objects of a listing ((key, object size) pairs), in listing order;
    other keys are ignored, as are objects too short to hold a header."""
    out = []
    for key, size in keys:
        ck = layout.parse_chunk_key(key)
        if ck is None or size < layout.CHUNK_HEADER:
            continue
        end = ck.offset + size - layout.CHUNK_HEADER
        if ck.compacted and end != ck.end:
            end = min(end, ck.end)  # the object disagrees with its key: decode_chunk rejects it
        out.append(Piece(ck, key, end))
    return out


def cover(segment: list[Piece], start: int, skip: Container[str] = frozenset()) -> list[Piece]:
    """The objects that extend the bytes held from ``start`` on, in order
    (none when the next byte is in no object: a gap, or the end)."""
    chosen: list[Piece] = []
    at = start
    while True:
        best = None
        for p in segment:
            if (
                p.ck.offset <= at < p.end
                and p.key not in skip
                and (best is None or p.end > best.end)
            ):
                best = p
        if best is None:
            return chosen
        chosen.append(best)
        at = best.end


def by_segment(found: list[Piece]) -> dict[tuple[int, int], list[Piece]]:
    out: dict[tuple[int, int], list[Piece]] = {}
    for p in found:
        out.setdefault(p.segment, []).append(p)
    return dict(sorted(out.items()))


def contiguous_ends(found: list[Piece]) -> dict[tuple[int, int], int]:
    """Per segment, the end of the bytes the objects hold contiguously from 0."""
    ends = {}
    for seg, segment in by_segment(found).items():
        chosen = cover(segment, 0)
        if chosen:
            ends[seg] = chosen[-1].end
    return ends
