"""Checkpoint files against docs/FORMAT.md section 8, read by an independent
parser (struct + the pure-Python CRC-32C), and every golden checkpoint version
loading through its migration to the same field as replaying its log."""

from __future__ import annotations

import itertools
import math
import shutil
import struct
import warnings
from pathlib import Path

import msgspec
import pytest
from segment_oracle import crc32c, only_segment

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt

GOLDENS = Path(__file__).parent / "golden"
V1 = GOLDENS / "checkpoint-v1"
A, B, C = (1 << 32) | 1, (1 << 32) | 2, (1 << 32) | 3


def _live(root: Path) -> Path:
    name = (root / "checkpoint" / "CURRENT").read_bytes()
    assert name.endswith(b"\n") and len(name) <= 64
    return root / "checkpoint" / name.decode("ascii").strip()


def _framed(path: Path, magic: bytes) -> tuple[int, int, int, bytes]:
    data = path.read_bytes()
    got_magic, version, a, b = struct.unpack_from("<8sIIQ", data, 0)
    assert got_magic == magic
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    assert crc == crc32c(data[:-4])
    return version, a, b, data[24:-4]


def test_v1_state_file_matches_the_spec() -> None:
    version, flags, n, body = _framed(_live(V1) / "state", b"CHITSTAT")
    assert (version, flags, n) == (1, 0, len(body))
    state = msgspec.msgpack.decode(body)
    assert set(state) == {
        "chitta",
        "created_ms",
        "watermark",
        "applied",
        "unrouted",
        "organs",
        "sidecars",
    }
    seg = only_segment(V1)
    assert state["watermark"] == {
        "clock": 7,
        "positions": [[seg.name, seg.stat().st_size, 7, True, False]],
        "instances": [[1, 7]],
    }
    assert set(state["organs"]) == {"memories", "graph", "settings", "encoder", "recall_index"}
    assert state["organs"]["graph"] == {"edges": [[B, A, "RelatedTo", 1.0]]}
    assert set(state["sidecars"]) == {"vectors.emb", "codes.bin", "posting.idx"}


def test_v1_sidecars_match_the_spec() -> None:
    live = _live(V1)
    version, dim, count, body = _framed(live / "vectors.emb", b"CHITEMB\x00")
    assert (version, dim, count, len(body)) == (1, 4, 1, 8 + 16)
    assert struct.unpack_from("<Q4f", body) == (B, 0.5, -0.5, 0.25, 1.0)
    version, words, count, body = _framed(live / "codes.bin", b"CHITBIN\x00")
    assert (version, words, count) == (1, 1, 1)
    dim, pad = struct.unpack_from("<II", body)
    mean = struct.unpack_from("<4f", body, 8)
    norm = math.sqrt(0.25 + 0.25 + 0.0625 + 1.0)
    assert (dim, pad) == (4, 0)
    assert mean == pytest.approx([0.5 / norm, -0.5 / norm, 0.25 / norm, 1.0 / norm], rel=1e-6)
    assert struct.unpack_from("<QQ", body, 8 + 16) == (
        B,
        0,
    )  # one vector: it is the mean, no bit set
    state = msgspec.msgpack.decode(_framed(live / "state", b"CHITSTAT")[3])
    for name in ("vectors.emb", "codes.bin"):
        assert (
            state["sidecars"][name]["crc"]
            == struct.unpack("<I", (live / name).read_bytes()[-4:])[0]
        )
    assert state["sidecars"]["posting.idx"]["crc"] == crc32c((live / "posting.idx").read_bytes())


@pytest.mark.parametrize("golden", sorted(GOLDENS.glob("checkpoint-v*")), ids=lambda p: p.name)
def test_every_golden_version_loads_to_the_replayed_field(tmp_path: Path, golden: Path) -> None:
    root = tmp_path / "f"
    shutil.copytree(golden, root)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with chitta.open(root, read_only=True, embedder=None) as f:
            assert f.checkpoint_loaded == _live(golden).name
            loaded = [
                (
                    m.id,
                    m.text,
                    m.strength,
                    m.confidence,
                    m.access_count,
                    m.meta,
                    m.embedding.tolist() if m.embedding is not None else None,
                )
                for m in f.memories()
            ]
            assert f.stats().forgotten == 1 and C not in f
            assert f.core.graph.neighbours(A) == [(B, "RelatedTo", False, 1.0)]
    with chitta.open(root, read_only=True, embedder=None, load_checkpoint=False) as f:
        replayed = [
            (
                m.id,
                m.text,
                m.strength,
                m.confidence,
                m.access_count,
                m.meta,
                m.embedding.tolist() if m.embedding is not None else None,
            )
            for m in f.memories()
        ]
    assert loaded == replayed
    assert loaded[1][1:3] == ("staging listens on port 8081", 2.0)
    # The golden's writer continues after the watermark; the next open replays only that.
    with chitta.open(root, instance_id=1, embedder=None) as f:
        new = f.remember("written after the checkpoint")
    with chitta.open(root, read_only=True, embedder=None) as f:
        assert f.checkpoint_loaded is not None and new in f and len(f) == len(loaded) + 1
        assert f.stats().records_since_checkpoint == 1


def test_state_reader_refuses_what_the_spec_forbids(tmp_path: Path) -> None:
    good = (_live(V1) / "state").read_bytes()
    body = good[24:-4]

    def framed(
        magic: bytes = b"CHITSTAT",
        version: int = 1,
        flags: int = 0,
        n: int | None = None,
        payload: bytes = body,
    ) -> Path:
        head = (
            struct.pack("<8sIIQ", magic, version, flags, len(payload) if n is None else n) + payload
        )
        path = tmp_path / f"state-{len(list(tmp_path.iterdir()))}"
        path.write_bytes(head + struct.pack("<I", crc32c(head)))
        return path

    assert fmt.read_state(framed())[0] == 1
    for bad, err in (
        (framed(magic=b"CHITSTAX"), "magic"),
        (framed(version=fmt.STATE_VERSION + 1), "version"),
        (framed(version=0), "version"),
        (framed(flags=1), "flags"),
        (framed(n=len(body) + 1), "length"),
        (framed(n=2**63), "length"),
        (framed(payload=b"\xc1"), "undecodable"),
        (framed(payload=msgspec.msgpack.encode([1, 2])), "not a map"),
    ):
        with pytest.raises(chitta.errors.CorruptionError, match=err):
            fmt.read_state(bad)


def test_v3_units_sidecar_and_posting_record_match_the_spec() -> None:
    live = _live(GOLDENS / "checkpoint-v3")
    state = msgspec.msgpack.decode(_framed(live / "state", b"CHITSTAT")[3])
    assert _framed(live / "state", b"CHITSTAT")[0] == 3
    _v, dim, count, vec_body = _framed(live / "vectors.emb", b"CHITEMB\x00")
    version, udim, ucount, body = _framed(live / "units.emb", b"CHITEMB\x00")
    assert (version, udim, ucount) == (1, dim, count) and len(body) == 8 * count + 4 * dim * count
    assert body[: 8 * count] == vec_body[: 8 * count]  # the same ids in the same order
    missing = state["organs"]["recall_index"]["units_missing"]
    assert missing == b""
    for i in range(count):  # each row is its vector at unit length
        v = struct.unpack_from(f"<{dim}f", vec_body, 8 * count + 4 * dim * i)
        u = struct.unpack_from(f"<{dim}f", body, 8 * count + 4 * dim * i)
        norm = math.sqrt(sum(x * x for x in v))
        assert u == pytest.approx([x / norm for x in v], rel=1e-6)
    for name in (
        "vectors.emb",
        "units.emb",
        "codes.bin",
        "posting.idx",
    ):  # each by its trailing CRC
        assert (
            state["sidecars"][name]["crc"]
            == struct.unpack("<I", (live / name).read_bytes()[-4:])[0]
        )


def test_v4_memories_columns_match_the_spec() -> None:
    """The version-4 memories map read by hand (numpy on the documented little-endian
    layouts), against the golden segment's ops (tests/format/golden.py)."""
    live = _live(GOLDENS / "checkpoint-v4")
    version, _flags, _n, body = _framed(live / "state", b"CHITSTAT")
    assert version == 4
    mem = msgspec.msgpack.decode(body)["organs"]["memories"]
    assert mem["rows"] == 3
    assert struct.unpack("<3Q", mem["ids"]) == (A, B, C)
    cols = mem["columns"]
    layout = {
        "created": "q",
        "written": "q",
        "updated": "q",
        "last_access": "q",
        "deleted": "q",
        "dead": "?",
        "confidence": "d",
        "strength": "d",
        "decay": "d",
        "tier": "q",
        "access": "q",
        "kind": "I",
        "realm": "I",
        "session": "I",
        "source_tool": "I",
        "harness": "I",
    }
    assert set(cols) == set(layout)
    got = {name: struct.unpack(f"<3{code}", cols[name]) for name, code in layout.items()}
    t0 = 1_764_000_000_000
    assert got["created"] == (t0, t0 + 1, t0 + 2)
    assert got["updated"] == (t0, t0 + 30, t0 + 2)
    assert got["last_access"] == (t0 + 10, 0, 0) and got["access"] == (1, 0, 0)
    assert got["dead"] == (False, False, True) and got["deleted"][2] == t0 + 20
    assert got["confidence"] == (0.9, 1.0, 0.4) and got["strength"] == (1.0, 2.0, 1.0)
    kinds = mem["labels"]["kind"]
    assert [kinds[c] for c in got["kind"]] == ["decision", "observation", "thought"]
    assert [mem["labels"]["realm"][c] for c in got["realm"]] == ["build", None, None]
    offsets = struct.unpack("<4q", mem["text_offsets"])
    texts = [mem["text"][a:b].decode() for a, b in itertools.pairwise(offsets)]
    assert texts == ["the build uses ninja", "staging listens on port 8080", "a passing thought"]
    assert mem["texts"] == [[1, "staging listens on port 8081"]]  # the changed text, by row
    assert mem["tags"] == [[0, ["build"]]] and mem["meta"] == [
        [1, {"host": "staging", "port": 8080}]
    ]
    assert mem["put_meta"] == [] and mem["artifacts"] == [] and mem["odd_vectors"] == []
    assert (mem["live"], mem["embedding_dim"], mem["ignored"]) == (2, 4, 0)
    assert mem["max_local"] == [[1, 3]] and mem["touches"] == [[A, [t0 + 10]]]


def test_v3_memories_migrate_to_the_v4_columns() -> None:
    from chitta.field.checkpoint.snapshot import migrate

    def memories(golden: str) -> dict:
        version, _f, _n, body = _framed(_live(GOLDENS / golden) / "state", b"CHITSTAT")
        return migrate(version, msgspec.msgpack.decode(body))["organs"]["memories"]

    assert memories("checkpoint-v3") == memories("checkpoint-v4")


def test_v5_word_table_matches_the_spec() -> None:
    """vocab.emb read by hand (struct, the pure-Python CRC-32C): header, rows, word lengths, words;
    the state's record of it; each row the 4-d hashing embedder's unit vector of its word."""
    from chitta.encode import HashingEmbedder

    live = _live(GOLDENS / "checkpoint-v5")
    version, _flags, _n, body = _framed(live / "state", b"CHITSTAT")
    state = msgspec.msgpack.decode(body)
    assert version == 5
    data = (live / "vocab.emb").read_bytes()
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    assert crc == crc32c(data[:-4]) == state["sidecars"]["vocab.emb"]["crc"]
    assert state["sidecars"]["vocab.emb"]["bytes"] == len(data)
    magic, ver, dim, rows, pending, word_bytes = struct.unpack_from("<8sIIQQQ", data, 0)
    assert (magic, ver, dim, rows, pending) == (b"CHITVOC\x00", 1, 4, 6, 0)
    assert state["vocabulary"] == {"embedder": "hashing-v1-d4", "dim": 4, "rows": 6, "pending": 0}
    assert len(data) == 40 + 4 * rows * dim + 4 * (rows + pending) + word_bytes + 4
    vecs = [struct.unpack_from(f"<{dim}f", data, 40 + 16 * i) for i in range(rows)]
    at = 40 + 4 * rows * dim
    lengths = struct.unpack_from(f"<{rows + pending}I", data, at)
    blob = data[at + 4 * (rows + pending) : at + 4 * (rows + pending) + word_bytes]
    ends = list(itertools.accumulate(lengths))
    words = [blob[a:b].decode() for a, b in zip([0, *ends[:-1]], ends)]
    assert words == [
        "build",
        "listens",
        "ninja",
        "port",
        "staging",
        "uses",
    ]  # the live texts' words, sorted
    want = HashingEmbedder(4).embed(words)
    for v, w in zip(vecs, want):
        norm = math.sqrt(sum(float(x) * float(x) for x in w))
        assert v == pytest.approx([float(x) / norm for x in w], abs=1e-6)


def test_v5_golden_table_is_adopted_without_embedding() -> None:
    from chitta.encode import HashingEmbedder
    from chitta.recall.engine import RecallSettings

    calls: list[str] = []

    class Counting(HashingEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.extend(texts)
            return super().embed(texts)

    emb = Counting(4)
    settings = RecallSettings(fusion_alpha=0.5, expansion_weight=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with chitta.open(
            GOLDENS / "checkpoint-v5", read_only=True, embedder=emb, recall_settings=settings
        ) as f:
            assert f.checkpoint_loaded == _live(GOLDENS / "checkpoint-v5").name
            assert f.core.engine.vocabulary.table()[0] == [
                "build",
                "listens",
                "ninja",
                "port",
                "staging",
                "uses",
            ]
            assert calls == []


def test_v10_vector_references_match_the_spec() -> None:
    """vectors.ref (state 10): each row names the 4 x dim bytes of the vector in a segment
    of the golden's log, and the memories map's CRC covers them in row order; the golden's
    only vector is B's (0.5, -0.5, 0.25, 1.0)."""
    golden = GOLDENS / "checkpoint-v10"
    live = _live(golden)
    version, _flags, _n, body = _framed(live / "state", b"CHITSTAT")
    state = msgspec.msgpack.decode(body)
    assert version == 10 and "vectors.emb" not in state["sidecars"]
    version, dim, count, body = _framed(live / "vectors.ref", b"CHITVREF")
    assert (version, dim, count, len(body)) == (1, 4, 1, 20)
    mid, seg, at = struct.unpack_from("<QIQ", body)
    record = state["organs"]["memories"]["vector_refs"]
    raw = (golden / "segments" / record["segments"][seg]).read_bytes()[at : at + 16]
    assert mid == B and struct.unpack("<4f", raw) == (0.5, -0.5, 0.25, 1.0)
    assert record["crc"] == crc32c(raw)
    assert (
        state["sidecars"]["vectors.ref"]["crc"]
        == struct.unpack("<I", (live / "vectors.ref").read_bytes()[-4:])[0]
    )
