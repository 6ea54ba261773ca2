"""An independent reading of docs/FORMAT.md in pure Python: CRC-32C by the
bitwise definition and a segment parser, used as the oracle for the native
reader and writer."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"CHITTASG"
HEADER = struct.Struct("<8sHHIQII")  # magic, major, minor, instance, first_seqno, reserved, crc
RECORD = struct.Struct("<IIQB")  # len, crc, seqno, op_type


def crc32c(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@dataclass
class Record:
    offset: int
    seqno: int
    op_type: int
    payload: bytes


def parse_header(data: bytes) -> tuple[int, int, int, int]:
    magic, major, minor, instance, first, reserved, crc = HEADER.unpack_from(data, 0)
    assert magic == MAGIC and reserved == 0
    assert crc == crc32c(data[:28])
    return major, minor, instance, first


def parse_records(data: bytes) -> list[Record]:
    """Every record of an undamaged segment."""
    out = []
    pos = HEADER.size
    while pos < len(data):
        length, crc, seqno, op_type = RECORD.unpack_from(data, pos)
        payload = data[pos + RECORD.size : pos + RECORD.size + length]
        assert len(payload) == length
        assert crc == crc32c(data[pos + 8 : pos + RECORD.size + length])
        out.append(Record(pos, seqno, op_type, payload))
        pos += RECORD.size + length
    return out


def encode_record(seqno: int, op_type: int, payload: bytes) -> bytes:
    body = struct.pack("<QB", seqno, op_type) + payload
    return struct.pack("<II", len(payload), crc32c(body)) + body


RECORD_V2 = struct.Struct("<IQBII")  # len, seqno, op_type, header_crc, payload_crc
SEAL_OP = 255


@dataclass
class Seal:
    offset: int
    seqno: int
    records: int
    size: int


def parse_records_v2(data: bytes) -> tuple[list[Record], Seal | None]:
    """Every record of an undamaged 2.0 segment, and its seal (None if unsealed)."""
    out: list[Record] = []
    pos = HEADER.size
    while pos < len(data):
        length, seqno, op_type, hcrc, pcrc = RECORD_V2.unpack_from(data, pos)
        assert hcrc == crc32c(data[pos : pos + 13])
        payload = data[pos + RECORD_V2.size : pos + RECORD_V2.size + length]
        assert len(payload) == length and pcrc == crc32c(payload)
        if op_type == SEAL_OP:
            records, size = struct.unpack("<QQ", payload)
            assert size == pos + RECORD_V2.size + 16 == len(data)
            return out, Seal(pos, seqno, records, size)
        out.append(Record(pos, seqno, op_type, payload))
        pos += RECORD_V2.size + length
    return out, None


def encode_record_v2(seqno: int, op_type: int, payload: bytes) -> bytes:
    head = struct.pack("<IQB", len(payload), seqno, op_type)
    return head + struct.pack("<II", crc32c(head), crc32c(payload)) + payload


def only_segment(root: Path) -> Path:
    (seg,) = sorted((root / "segments").glob("*.seg"))
    return seg
