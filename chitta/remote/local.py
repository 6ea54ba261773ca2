"""The local side of replication: the field's segment files and instance locks.

Only whole, valid records are ever shipped (``whole_records``), so what the
bucket holds of a segment is always a prefix of what its owner keeps: a torn
tail the owner later truncates was never sent.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from pathlib import Path

from chitta import _core

SEGMENT_HEADER = 32
RECORD_HEAD_V1 = 17  # docs/FORMAT.md section 3, layout 1.0: len, crc, seqno, op_type
RECORD_HEAD = 21  # layout 2.0: len, seqno, op_type, header_crc, payload_crc
SEAL_OP = 255  # layout 2.0: the seal that ends a rotated segment
_LEN_CRC = struct.Struct("<II")
_SEQNO = struct.Struct("<Q")
_HEAD_V2 = struct.Struct("<IQBII")  # len, seqno, op_type, header_crc, payload_crc
_NAME = re.compile(r"^([0-9a-f]{8})_([0-9]{12,})\.seg$")


def segment_name(instance: int, first_seqno: int) -> str:
    return str(_core.segment_name(instance, first_seqno))


def local_segments(root: Path) -> dict[int, list[tuple[int, int]]]:
    """instance -> [(first_seqno, size)] ascending, for every canonical segment file."""
    out: dict[int, list[tuple[int, int]]] = {}
    try:
        entries = list(os.scandir(root / "segments"))
    except FileNotFoundError:
        return out
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None:
            continue
        inst, first = int(m.group(1), 16), int(m.group(2))
        if entry.name != segment_name(inst, first):
            continue
        try:
            size = entry.stat().st_size
        except FileNotFoundError:
            continue
        out.setdefault(inst, []).append((first, size))
    for segs in out.values():
        segs.sort()
    return out


def segment_major(path: Path) -> int:
    """The layout major version in a segment's header (bytes 8..9), 2 when unreadable yet."""
    try:
        with open(path, "rb") as f:
            head = f.read(10)
    except FileNotFoundError:
        return 2
    return int.from_bytes(head[8:10], "little") if len(head) == 10 else 2


def record_head(major: int) -> int:
    """Bytes before a record's payload in layout ``major``."""
    return RECORD_HEAD_V1 if major == 1 else RECORD_HEAD


def whole_records(
    data: bytes, start: int, last_seqno: int, major: int = 2
) -> tuple[int, int, bool]:
    """Scan ``data`` (a segment's bytes from file offset ``start``, layout ``major``)
    record by record. Returns (bytes of whole valid records from the start, the last
    seqno, damaged): stops at a record not yet complete (a torn tail: more may come)
    or at damage. A 2.0 seal counts as a whole record (it ends the segment)."""
    pos = 0
    if start == 0:
        if len(data) < SEGMENT_HEADER:
            return 0, last_seqno, False
        pos = SEGMENT_HEADER
    n = len(data)
    view = memoryview(data)
    head = record_head(major)
    while pos + head <= n:
        if major == 1:
            length, crc = _LEN_CRC.unpack_from(data, pos)
            (seqno,) = _SEQNO.unpack_from(data, pos + 8)
            op_type = data[pos + 16]
        else:
            length, seqno, op_type, header_crc, crc = _HEAD_V2.unpack_from(data, pos)
            if _core.crc32c(view[pos : pos + 13]) != header_crc:
                return pos, last_seqno, True
        if length > _core.MAX_PAYLOAD:
            return pos, last_seqno, True
        end = pos + head + length
        if end > n:
            break
        body = view[pos + 8 : end] if major == 1 else view[pos + head : end]
        if _core.crc32c(body) != crc:
            return pos, last_seqno, True
        if major != 1 and op_type == SEAL_OP:
            if seqno != last_seqno and last_seqno != 0:
                return pos, last_seqno, True
            return end, last_seqno, False  # nothing follows a seal
        if seqno <= last_seqno:
            return pos, last_seqno, True
        last_seqno = seqno
        pos = end
    return pos, last_seqno, False


def read_range(path: Path, offset: int, limit: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(limit)


def live_elsewhere(root: Path, instance: int) -> bool:
    """True when another live process on this machine (or a process of another host
    sharing this directory) holds the instance's lock (docs/FORMAT.md section 7)."""
    try:
        raw = (root / "locks" / f"{instance:08x}.lock").read_text(errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return False
    lines = raw.split("\n")
    if len(lines) < 2:
        return True  # being written: treat as held
    host, pid = lines[0], lines[1]
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return int(pid) != os.getpid()


def append_bytes(root: Path, instance: int, first_seqno: int, offset: int, payload: bytes) -> None:
    """Materialise a fetched chunk: a new segment file (written aside, then renamed:
    readers never see a file without its header) or bytes appended at ``offset``."""
    seg = root / "segments" / segment_name(instance, first_seqno)
    if offset == 0:
        tmp = seg.with_name(f".remote-{os.getpid()}-{seg.name}.tmp")
        with open(tmp, "wb") as f:
            f.write(payload)
        try:
            os.link(tmp, seg)  # never replaces a file that appeared meanwhile
        finally:
            os.unlink(tmp)
        return
    with open(seg, "r+b") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() != offset:
            raise FileExistsError(f"{seg.name} has {f.tell()} bytes, not {offset}")
        f.write(payload)
