"""The shared organ sidecar format: one file of msgpack records with a checked frame.

An organ whose state is too large for the checkpoint's state map writes it as a
sidecar through ``SnapshotContext.write_records``. Layout (docs/FORMAT.md,
"Organ sidecars"; little-endian)::

    magic (8 bytes, the organ's own) | u32 version | u32 flags (0) | u64 count |
    msgpack array of count records | u32 crc32c of everything before it

The reader checks magic, version, flags, the CRC, and that the array holds
exactly ``count`` records before anything is decoded into the organ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from chitta.errors import CorruptionError, InvalidArgument, UnsupportedFormat
from chitta.field.checkpoint.format import _HEAD, _read_checked, _write_atomic_file

__all__ = ["read_records", "write_records"]


def write_records(path: Path, magic: bytes, version: int, records: list[Any]) -> dict[str, int]:
    """Write ``records`` to ``path``; returns the entry the state file keeps (bytes, count)."""
    if len(magic) != 8:
        raise InvalidArgument(f"a sidecar magic is 8 bytes, not {len(magic)}")
    if not 1 <= version <= 0xFFFFFFFF:
        raise InvalidArgument(f"a sidecar version is between 1 and 2**32-1, not {version}")
    payload = msgspec.msgpack.encode(list(records))
    size = _write_atomic_file(path, [_HEAD.pack(magic, version, 0, len(records)), payload])
    return {"bytes": size, "count": len(records)}


def read_records(path: Path, magic: bytes, version: int) -> tuple[int, list[Any]]:
    """(the file's version, its records). CorruptionError for a damaged or foreign
    file, UnsupportedFormat for a newer version than ``version``."""
    body, got_version, flags, count = _read_checked(path, magic, version, "organ sidecar")
    if flags != 0:
        raise UnsupportedFormat(f"organ sidecar {path.name}: unknown flags {flags:#x}")
    try:
        records = msgspec.msgpack.decode(body)
    except msgspec.DecodeError as exc:
        raise CorruptionError(f"organ sidecar {path.name}: undecodable payload ({exc})") from exc
    if not isinstance(records, list) or len(records) != count:
        raise CorruptionError(
            f"organ sidecar {path.name}: the frame says {count} records, the body differs"
        )
    return int(got_version), records
