"""Issue 16, finding 12: every bad argument is chitta's own error (InvalidArgument),
raised before anything changes; each case below raised a built-in error (or none)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

import chitta
from chitta.errors import ChittaIOError, InvalidArgument
from chitta.ops import checks


@pytest.fixture
def field(tmp_path: Path) -> chitta.Field:
    f = chitta.open(tmp_path / "f", embedder=None)
    f.remember("the build uses ninja", kind="decision")
    f.remember("saw the cache miss", kind="observation")
    yield f
    f.close()


@pytest.mark.parametrize("since", [1e308, -1e308, 2.6e11, float(10**400 // 10**100)])
def test_recall_times_out_of_range_are_invalid_arguments(field: chitta.Field, since: float) -> None:
    with pytest.raises(InvalidArgument, match="year 9999"):
        field.recall("ninja", since=since)
    assert math.isfinite(since)


def test_a_single_kind_string_is_one_kind(field: chitta.Field) -> None:
    hits = field.recall("cache miss ninja build", kinds="observation", touch=False)
    assert [h.memory.kind for h in hits] == ["observation"]
    assert {h.memory.kind for h in field.recall("cache miss ninja build", touch=False)} == {
        "decision",
        "observation",
    }


def test_tags_given_as_a_mapping_are_refused(field: chitta.Field) -> None:
    n = len(field)
    with pytest.raises(InvalidArgument, match="tags must be"):
        field.remember("x", tags={"a": 1})  # type: ignore[arg-type]
    assert len(field) == n


@pytest.mark.parametrize(
    "meta", [{"s": {1, 2}}, {"f": frozenset()}, {"n": [1, {"deep": {3}}]}, {"b": b"raw"}]
)
def test_meta_with_sets_or_other_types_is_refused(
    field: chitta.Field, meta: dict[str, object]
) -> None:
    n = len(field)
    with pytest.raises(InvalidArgument, match="meta must hold only"):
        field.remember("x", meta=meta)
    assert len(field) == n


def test_deeply_nested_meta_is_an_invalid_argument_not_a_recursion_error(
    field: chitta.Field,
) -> None:
    deep: object = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidArgument, match="nested deeper"):
        field.remember("x", meta={"d": deep})
    ok: object = "leaf"
    for _ in range(checks.MAX_META_DEPTH - 1):
        ok = {"k": ok}
    mid = field.remember("at the cap", meta={"d": ok})
    assert field.get(mid).meta == {"d": ok}


def test_a_path_with_nul_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="NUL"):
        chitta.open(str(tmp_path / "a\0b"), embedder=None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["bad" + chr(0xD800), "bad" + chr(0xDCFF)])
def test_a_path_that_is_not_utf8_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidArgument, match="path"):
        chitta.open(str(tmp_path / name), embedder=None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("size", [2**70, 2**64, -1, 1023, 1.5e6])
def test_segment_bytes_out_of_range_is_refused(tmp_path: Path, size: object) -> None:
    with pytest.raises(InvalidArgument, match="segment_bytes"):
        chitta.open(tmp_path / "f", embedder=None, segment_bytes=size)  # type: ignore[arg-type]
    assert not (tmp_path / "f").exists()


def test_a_recall_query_over_the_byte_cap_is_refused(field: chitta.Field) -> None:
    with pytest.raises(InvalidArgument, match="limit is"):
        field.recall("é" * (checks.MAX_QUERY_BYTES // 2 + 1))
    assert field.recall("n" * checks.MAX_QUERY_BYTES, touch=False) is not None  # at the cap: served


def test_a_read_only_handle_does_not_write_a_checkpoint(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as w:
        w.remember("x")
    with (
        chitta.open(tmp_path / "f", embedder=None, read_only=True) as r,
        pytest.raises(InvalidArgument, match="read_only"),
    ):
        r.checkpoint()
    assert not (tmp_path / "f" / "checkpoint").exists() or not any(
        (tmp_path / "f" / "checkpoint").iterdir()
    )


def test_a_read_only_file_system_is_a_chitta_io_error(tmp_path: Path) -> None:
    import subprocess

    if os.getuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root")
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    ).returncode:
        pytest.skip("mount is not permitted here")
    try:
        with chitta.open(mnt / "f", embedder=None) as f:
            f.remember("x")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with pytest.raises(ChittaIOError, match="Read-only"):
            chitta.open(mnt / "f", embedder=None)
        with pytest.raises(ChittaIOError, match="Read-only"):
            chitta.open(mnt / "g", embedder=None)
        with chitta.open(mnt / "f", embedder=None, read_only=True) as r:
            assert len(r) == 1
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
