"""HammingIndex.save/load: round trip, and one test per kind of damage."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from chitta._core import _hamming_read_bytes
from chitta.errors import ChittaIOError, CorruptionError, CrcMismatch, UnsupportedFormat
from chitta.organs.index.hamming import HammingIndex

HEADER = 24


def crc32c(data: bytes) -> int:
    """Bitwise CRC-32C (Castagnoli), independent of the C++ one."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(9)
    index = HammingIndex(192)
    ids = np.arange(100, 140, dtype=np.uint64)
    index.add(ids, rng.integers(0, 2**64, (40, 3), dtype=np.uint64))
    index.remove(ids[5:9])
    path = tmp_path / "codes.bin"
    index.save(path)
    return index, path


def refix(data: bytearray) -> bytes:
    data[-4:] = struct.pack("<I", crc32c(bytes(data[:-4])))
    return bytes(data)


def test_file_layout_matches_spec(saved):
    _index, path = saved
    data = path.read_bytes()
    magic, major, minor, words, count = struct.unpack_from("<8sHHIQ", data)
    assert (magic, major, minor, words, count) == (b"CHITHAM\0", 1, 0, 3, 36)
    assert len(data) == 28 + 36 * (8 + 24)
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == crc32c(data[:-4])
    first_ids = [struct.unpack_from("<Q", data, HEADER + i * 32)[0] for i in range(6)]
    assert first_ids == [100, 101, 102, 103, 104, 109]


def test_round_trip_keeps_ids_order_and_answers(saved):
    index, path = saved
    loaded = HammingIndex.load(str(path))
    assert loaded.bits == 192 and len(loaded) == 36
    assert loaded.ids().tolist() == index.ids().tolist()
    q = np.random.default_rng(1).integers(0, 2**64, (3, 3), dtype=np.uint64)
    for a, b in zip(index.search(q, 36), loaded.search(q, 36)):
        np.testing.assert_array_equal(a, b)


def test_flipped_byte_is_crc_mismatch(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    data[HEADER + 50] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CrcMismatch):
        HammingIndex.load(path)


def test_truncated_file_is_corruption(saved):
    _, path = saved
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(CorruptionError, match="file size"):
        HammingIndex.load(path)


def test_header_only_fragment_is_corruption(saved):
    _, path = saved
    path.write_bytes(path.read_bytes()[:12])
    with pytest.raises(CorruptionError, match="too short"):
        HammingIndex.load(path)


def test_bad_magic_is_corruption(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    data[0:8] = b"NOTCODES"
    path.write_bytes(refix(data))
    with pytest.raises(CorruptionError, match="magic"):
        HammingIndex.load(path)


def test_huge_count_is_corruption(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, 16, 2**62)
    path.write_bytes(refix(data))
    with pytest.raises(CorruptionError, match="count"):
        HammingIndex.load(path)


def test_newer_major_is_unsupported(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 8, 2)
    path.write_bytes(refix(data))
    with pytest.raises(UnsupportedFormat):
        HammingIndex.load(path)


def test_repeated_id_is_corruption(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    data[HEADER + 32 : HEADER + 40] = data[HEADER : HEADER + 8]
    path.write_bytes(refix(data))
    with pytest.raises(CorruptionError, match="twice"):
        HammingIndex.load(path)


def test_missing_file_is_io_error(tmp_path):
    with pytest.raises(ChittaIOError):
        HammingIndex.load(tmp_path / "absent.bin")
    with pytest.raises(OSError):
        HammingIndex.load(tmp_path / "absent.bin")


def test_save_into_missing_directory_is_io_error(saved, tmp_path):
    index, _ = saved
    with pytest.raises(ChittaIOError):
        index.save(tmp_path / "no" / "such" / "dir.bin")


def test_read_bytes_probe_reads_everything():
    a = np.zeros(1000, dtype=np.uint8)
    base = _hamming_read_bytes(a)
    a[999] = 7
    assert _hamming_read_bytes(a) != base
