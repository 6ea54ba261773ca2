"""The bucket layout (normative: docs/REMOTE.md) and the chunk framing.

```
{prefix}FIELD                                        the field id object (JSON)
{prefix}log/{instance:08x}/{first_seqno:020}/{offset:016}  one chunk of a segment
{prefix}log/{instance:08x}/{first_seqno:020}/c{offset:016}-{end:016}  a compacted chunk
{prefix}checkpoint/CURRENT                           the live checkpoint (JSON, replaced by CAS)
{prefix}checkpoint/{name}/{file}                     a published checkpoint's files
```

A chunk object is a 64-byte header then ``length`` bytes of the segment file
``{instance:08x}_{first_seqno:012}.seg`` from byte ``offset``: whole records
(the chunk at offset 0 starts with the segment header), byte-identical. A
compacted chunk holds the bytes ``[offset, end)`` of a sealed segment that
smaller chunks held before; its key sorts after every plain chunk of its
segment. Objects of one segment may overlap: they hold the same bytes there.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass

from chitta import _core
from chitta.errors import CorruptionError, RemoteError

CHUNK_MAGIC = b"CHITCHNK"
CHUNK_MAJOR, CHUNK_MINOR = 1, 0
CHUNK_HEADER = 64
_HEAD = struct.Struct("<8sHHIQQII16sI")  # 60 bytes, then the u32 header CRC
MAX_CHUNK = (
    64 << 20
) + 64  # payload bytes of a chunk object at most: one largest record and a segment header
FIELD_KEY = "FIELD"
FIELD_FORMAT = "chitta-remote 1"
LOG = "log/"
CHECKPOINT_CURRENT = "checkpoint/CURRENT"
_CHUNK_KEY = re.compile(r"^log/([0-9a-f]{8})/([0-9]{20})/(?:([0-9]{16})|c([0-9]{16})-([0-9]{16}))$")
_FIELD_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True, order=True)
class ChunkKey:
    instance: int
    first_seqno: int
    offset: int
    end: int = -1  # a compacted chunk's end (its key names it); -1 for a plain chunk

    @property
    def compacted(self) -> bool:
        return self.end >= 0

    def key(self) -> str:
        if self.compacted:
            return compacted_key(self.instance, self.first_seqno, self.offset, self.end)
        return chunk_key(self.instance, self.first_seqno, self.offset)


def instance_prefix(instance: int) -> str:
    return f"{LOG}{instance:08x}/"


def chunk_key(instance: int, first_seqno: int, offset: int) -> str:
    return f"{LOG}{instance:08x}/{first_seqno:020}/{offset:016}"


def segment_prefix(instance: int, first_seqno: int) -> str:
    return f"{LOG}{instance:08x}/{first_seqno:020}/"


def compacted_key(instance: int, first_seqno: int, offset: int, end: int) -> str:
    return f"{LOG}{instance:08x}/{first_seqno:020}/c{offset:016}-{end:016}"


def parse_chunk_key(key: str) -> ChunkKey | None:
    """The chunk a key names; None for any other spelling (ignored, like stray files)."""
    m = _CHUNK_KEY.match(key)
    if m is None:
        return None
    inst, first = int(m.group(1), 16), int(m.group(2))
    if m.group(3) is not None:
        return ChunkKey(inst, first, int(m.group(3)))
    offset, end = int(m.group(4)), int(m.group(5))
    return ChunkKey(inst, first, offset, end) if end > offset else None


def encode_chunk(field_id: bytes, at: ChunkKey, payload: bytes) -> bytes:
    head = _HEAD.pack(
        CHUNK_MAGIC,
        CHUNK_MAJOR,
        CHUNK_MINOR,
        at.instance,
        at.first_seqno,
        at.offset,
        len(payload),
        _core.crc32c(payload),
        field_id,
        0,
    )
    return head + struct.pack("<I", _core.crc32c(head)) + payload


def decode_chunk(field_id: bytes, at: ChunkKey, data: bytes) -> bytes:
    """The payload of a chunk object read from key ``at``; CorruptionError naming the
    key when the framing, a checksum, the key or the field id do not agree."""
    where = f"remote chunk {at.key()}"
    if len(data) < CHUNK_HEADER:
        raise CorruptionError(f"{where}: {len(data)} bytes, shorter than its header")
    magic, major, _minor, inst, first, offset, length, crc, fid, _r = _HEAD.unpack_from(data)
    if magic != CHUNK_MAGIC:
        raise CorruptionError(f"{where}: not a chitta chunk (bad magic)")
    if major != CHUNK_MAJOR:
        raise CorruptionError(
            f"{where}: chunk format {major}, this chitta reads {CHUNK_MAJOR}; upgrade chitta"
        )
    (head_crc,) = struct.unpack_from("<I", data, 60)
    if head_crc != _core.crc32c(data[:60]):
        raise CorruptionError(f"{where}: header checksum mismatch")
    if fid != field_id:
        raise CorruptionError(f"{where}: belongs to another field ({fid.hex()}), not applied")
    if (inst, first, offset) != (at.instance, at.first_seqno, at.offset):
        raise CorruptionError(f"{where}: header names {inst:08x}/{first}/{offset}, not its key")
    if length != len(data) - CHUNK_HEADER or length > MAX_CHUNK:
        raise CorruptionError(
            f"{where}: length {length} disagrees with the object's {len(data) - 64} bytes"
        )
    if at.compacted and offset + length != at.end:
        raise CorruptionError(
            f"{where}: holds bytes up to {offset + length}, its key says {at.end}"
        )
    payload = data[CHUNK_HEADER:]
    if _core.crc32c(payload) != crc:
        raise CorruptionError(f"{where}: payload checksum mismatch, not applied")
    return payload


def encode_field(field_id: str) -> bytes:
    return json.dumps({"format": FIELD_FORMAT, "field_id": field_id}).encode() + b"\n"


def decode_field(data: bytes) -> str:
    try:
        obj = json.loads(data[:4096])
        fid = obj["field_id"]
        fmt = obj["format"]
    except (ValueError, KeyError, TypeError) as exc:
        raise RemoteError(
            "the prefix's FIELD object is not a chitta field id; use another prefix"
        ) from exc
    if fmt != FIELD_FORMAT or not isinstance(fid, str) or not _FIELD_ID.match(fid):
        raise RemoteError(
            f"the prefix's FIELD object is of format {fmt!r}; this chitta knows {FIELD_FORMAT!r}"
        )
    return fid
