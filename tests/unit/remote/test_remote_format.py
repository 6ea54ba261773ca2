"""Remote URLs, the chunk framing and the record scan, without a server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import chitta
from chitta import _core
from chitta.errors import CorruptionError, InvalidArgument
from chitta.remote import layout
from chitta.remote.local import local_segments, segment_name, whole_records
from chitta.remote.url import parse_url


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("", "s3://bucket/prefix"),
        ("http://bucket/p", "only s3://"),
        ("s3://AB/p", "not a valid bucket"),
        ("s3://key:secret@bucket/p", "no credentials"),
        ("s3://bucket/a/../b", "prefix part"),
        ("s3://bucket/p?color=red", "unknown option"),
        ("s3://bucket/p?endpoint=http://s3.example.com", "plain http"),
        ("s3://bucket/p?endpoint=ftp://x", "not an http(s) URL"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, needle: str) -> None:
    with pytest.raises(InvalidArgument, match=needle.replace("(", r"\(").replace(")", r"\)")):
        parse_url(url)


def test_urls_parse_and_tls_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    u = parse_url("s3://my-bucket/team/field?region=eu-west-1")
    assert (u.bucket, u.prefix, u.endpoint, u.region) == (
        "my-bucket",
        "team/field/",
        None,
        "eu-west-1",
    )
    assert parse_url("s3://my-bucket?endpoint=s3.example.com").endpoint == "https://s3.example.com"
    assert (
        parse_url("s3://my-bucket/p?endpoint=http://127.0.0.1:9000").endpoint
        == "http://127.0.0.1:9000"
    )
    assert (
        parse_url("s3://my-bucket/p?endpoint=http://10.0.0.5&insecure=1").endpoint
        == "http://10.0.0.5"
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:8333")
    assert parse_url("s3://my-bucket").endpoint == "http://localhost:8333"


def test_chunk_framing_round_trips_and_refuses_damage() -> None:
    fid, other = os.urandom(16), os.urandom(16)
    at = layout.ChunkKey(0xABCD0001, 7, 4096)
    payload = os.urandom(1000)
    blob = layout.encode_chunk(fid, at, payload)
    assert layout.decode_chunk(fid, at, blob) == payload
    assert layout.parse_chunk_key(at.key()) == at
    assert layout.parse_chunk_key(at.key() + "x") is None
    flipped = bytearray(blob)
    flipped[layout.CHUNK_HEADER + 500] ^= 1
    with pytest.raises(CorruptionError, match="payload checksum"):
        layout.decode_chunk(fid, at, bytes(flipped))
    with pytest.raises(CorruptionError, match="another field"):
        layout.decode_chunk(other, at, blob)
    with pytest.raises(CorruptionError, match="not its key"):
        layout.decode_chunk(fid, layout.ChunkKey(at.instance, 7, 0), blob)
    with pytest.raises(CorruptionError, match="header checksum"):
        layout.decode_chunk(fid, at, blob[:20] + b"\xff" + blob[21:])
    with pytest.raises(CorruptionError, match="bad magic"):
        layout.decode_chunk(fid, at, b"X" * 100)
    with pytest.raises(CorruptionError, match="length"):
        layout.decode_chunk(fid, at, blob[:-1])


def test_record_scan_matches_the_log_reader(tmp_path: Path) -> None:
    """whole_records finds exactly the records the native reader reads, and stops
    at a torn tail (oracle: _core.SegmentLog.read_new on the same bytes)."""
    with chitta.open(tmp_path / "f", embedder=None) as f:
        for i in range(50):
            f.remember(f"memory number {i} " + "x" * (i * 7))
        inst = f.instance_id
        assert inst is not None
    ((first, size),) = local_segments(tmp_path / "f")[inst]
    data = (tmp_path / "f" / "segments" / segment_name(inst, first)).read_bytes()
    n, last, damaged = whole_records(data, 0, 0)
    assert (n, damaged) == (size, False)
    log = _core.SegmentLog(str(tmp_path / "f"), read_only=True)
    result = log.read_new()
    assert len(result) == 50 and last == max(int(s) for s in result.seqnos)
    log.close()
    cut, _, damaged = whole_records(
        data[: size - 5], 0, 0
    )  # torn tail: the last record is left out
    assert cut == int(result.offsets[-1]) and not damaged
    mid = int(result.offsets[10])
    rest, _, _ = whole_records(data[mid:], mid, 0)
    assert rest == size - mid
    bad = bytearray(data)
    bad[int(result.offsets[20]) + 20] ^= 0xFF
    cut, _, damaged = whole_records(bytes(bad), 0, 0)
    assert cut == int(result.offsets[20]) and damaged
