"""PostingIndex.save/load round trip and damage detection (csrc/posting/FORMAT.md)."""

from __future__ import annotations

import struct
from pathlib import Path

import datagen
import numpy as np
import pytest

from chitta.errors import ChittaIOError, CorruptionError, CrcMismatch, UnsupportedFormat
from chitta.organs.index import PostingIndex

HEADER = 40


@pytest.fixture
def saved(tmp_path: Path) -> tuple[PostingIndex, Path]:
    feats, acts = datagen.sparse_codes(
        300, n_features=1024, active=16, n_clusters=10, pool=40, from_pool=10, seed=5
    )
    index = PostingIndex(n_features=1024, active=16)
    index.add(np.arange(300, dtype=np.uint64) * np.uint64(3), feats, acts)
    index.remove(np.arange(0, 60, 3, dtype=np.uint64))
    path = tmp_path / "codes.post"
    index.save(path)
    return index, path


def test_round_trip_keeps_ids_codes_and_ranks(saved: tuple[PostingIndex, Path]) -> None:
    index, path = saved
    back = PostingIndex.load(path)
    assert (back.n_features, back.active, len(back)) == (1024, 16, 280)
    np.testing.assert_array_equal(back.ids(), index.ids())
    for i in (60, 150, 897):
        for a, b in zip(index.get(i), back.get(i)):
            np.testing.assert_array_equal(a, b)
    queries = np.stack([index.get(i)[0] for i in (63, 300, 600)])
    for a, b in zip(index.search(queries, 25), back.search(queries, 25)):
        np.testing.assert_array_equal(a, b)


def test_round_trip_unit_activations(tmp_path: Path) -> None:
    index = PostingIndex(n_features=32, active=2)
    index.add(np.array([4, 5], np.uint64), np.array([[1, 2], [2, 3]], np.uint32))
    index.save(str(tmp_path / "u.post"))
    back = PostingIndex.load(str(tmp_path / "u.post"))
    assert back.search(np.array([2, 3], np.uint32), 2)[0].tolist() == [5, 4]
    assert (tmp_path / "u.post").stat().st_size == HEADER + 2 * (8 + 2 * 4) + 4


@pytest.mark.parametrize("pos", [0, 9, 13, 17, 21, 25, 33, 41, 500, -5, -1])
def test_flipped_byte_is_corruption(saved: tuple[PostingIndex, Path], pos: int) -> None:
    """Any single flipped byte, header or records or trailer, is detected."""
    _, path = saved
    data = bytearray(path.read_bytes())
    data[pos] ^= 0x04
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptionError):
        PostingIndex.load(path)


@pytest.mark.parametrize("where", ["first-record", "middle", "last-record-byte", "crc"])
def test_flipped_record_byte_is_crc_mismatch(saved: tuple[PostingIndex, Path], where: str) -> None:
    """Damage behind a plausible header is reported as a checksum failure."""
    _, path = saved
    data = bytearray(path.read_bytes())
    pos = {
        "first-record": HEADER + 9,
        "middle": len(data) // 2,
        "last-record-byte": len(data) - 5,
        "crc": len(data) - 2,
    }[where]
    data[pos] ^= 0x04
    path.write_bytes(bytes(data))
    with pytest.raises(CrcMismatch):
        PostingIndex.load(path)


def test_truncated_file_is_corruption(saved: tuple[PostingIndex, Path]) -> None:
    _, path = saved
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(CorruptionError):
        PostingIndex.load(path)


def test_bad_magic_is_corruption(saved: tuple[PostingIndex, Path]) -> None:
    _, path = saved
    data = bytearray(path.read_bytes())
    data[0:8] = b"NOTPOSTX"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptionError):
        PostingIndex.load(path)


def test_newer_major_version_is_unsupported(saved: tuple[PostingIndex, Path]) -> None:
    _, path = saved
    data = bytearray(path.read_bytes())
    data[8:10] = struct.pack("<H", 2)
    path.write_bytes(bytes(data))
    with pytest.raises(UnsupportedFormat):
        PostingIndex.load(path)


def test_missing_file_is_io_error(tmp_path: Path) -> None:
    with pytest.raises(ChittaIOError):
        PostingIndex.load(tmp_path / "absent.post")
    with pytest.raises(OSError):
        PostingIndex.load(tmp_path / "absent.post")


def test_save_into_missing_directory_is_io_error(tmp_path: Path) -> None:
    index = PostingIndex(n_features=32, active=2)
    with pytest.raises(ChittaIOError):
        index.save(tmp_path / "no" / "such" / "dir.post")
