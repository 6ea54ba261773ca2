"""Every SIMD level (env CHITTA_SIMD, csrc/util/cpu.h), one subprocess each.

Each child computes a Hamming scan, HNSW brute-force distances, a word scan and
CRC-32Cs; every level's outputs must equal the generic level's exactly, and the
generic level's must equal independent numpy / pure-Python references. The
float kernels get inputs whose every partial sum is exact (small integers and
halves), where summation order cannot change a bit. Which kernel each family
should run at each level comes from /proc/cpuinfo, an oracle independent of
chitta's cpuid reader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chitta import _core

LEVELS = ["generic", "sse42", "avx2", "avx512"]
RANK = {name: i for i, name in enumerate(LEVELS)}
# The flag a CPU needs for a level to mean anything beyond the one below it.
LEVEL_FLAG = {"sse42": "sse4_2", "avx2": "avx2", "avx512": "avx512f"}


def _cpuinfo_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


FLAGS = _cpuinfo_flags()
pytestmark = pytest.mark.skipif(
    not FLAGS or os.uname().machine != "x86_64", reason="needs Linux /proc/cpuinfo on x86-64"
)

KERNEL_LEVEL = {
    "generic": "generic",
    "portable": "generic",
    "sse4.2": "sse42",
    "avx2": "avx2",
    "avx512": "avx512",
    "avx512_vpopcntdq": "avx512",
    "avx512_vnni": "avx512",
}
AVX2_BASE = {"sse4_2", "popcnt", "avx", "avx2"}
AVX512_BASE = AVX2_BASE | {"avx512f"}


def expected_kernels(level: str) -> dict[str, str]:
    """The kernel each family must run with CHITTA_SIMD=level on this CPU."""
    r = RANK[level]
    has = FLAGS.issuperset
    if r >= 3 and has(AVX512_BASE | {"avx512bw", "avx512vl", "avx512_vpopcntdq"}):
        hamming = "avx512_vpopcntdq"
    elif r >= 2 and has(AVX2_BASE):
        hamming = "avx2"
    else:
        hamming = "generic"
    if r >= 3 and has(AVX512_BASE):
        hnsw = "avx512"
    elif r >= 2 and has(AVX2_BASE | {"fma"}):
        hnsw = "avx2"
    else:
        hnsw = "generic"
    if r >= 3 and has(AVX512_BASE | {"avx512bw", "avx512_vnni"}):
        word = "avx512_vnni"
    elif r >= 2 and has(AVX2_BASE):
        word = "avx2"
    else:
        word = "generic"
    crc = "sse4.2" if r >= 1 and has({"sse4_2", "popcnt"}) else "portable"
    return {"hamming": hamming, "hnsw": hnsw, "word_scan": word, "crc32c": crc}


CHILD = r"""
import json, sys
import numpy as np
from chitta import _core
from chitta.organs.index import HammingIndex

rng = np.random.default_rng(5)
out = {"kernels": _core.simd_kernels(), "level": _core.simd_level(), "cap": _core._simd_cap()}
arrays = {}
# Hamming scan: 256-bit codes, many ties.
codes = rng.integers(0, 2**64, (3000, 4), dtype=np.uint64) & rng.integers(
    0, 2**64, (3000, 4), dtype=np.uint64)
ham = HammingIndex(256)
ham.add(np.arange(3000, dtype=np.uint64) * 7, codes)
arrays["ham_ids"], arrays["ham_d"] = ham.search(codes[:6] ^ np.uint64(5), 40)
# HNSW distance (brute force, inner product) on small integers: exact dots.
dim = 75
vecs = rng.integers(-8, 9, (500, dim)).astype(np.float32)
qs = rng.integers(-8, 9, (4, dim)).astype(np.float32)
bf = _core._BruteForceIndex(dim, "ip")
bf.add(np.arange(500, dtype=np.uint64), vecs)
arrays["bf_ids"], arrays["bf_d"] = bf.search(qs, 30, None, 1)
# Word scan: 600 rows (the quantized first pass), unit queries of four halves.
wdim = 64
rows = rng.integers(-3, 4, (600, wdim)).astype(np.float32)
word = _core._WordIndex(wdim, 100000, 64)
word.add(rows)
hits = []
for i in range(4):
    q = np.zeros(wdim, dtype=np.float32)
    q[rng.choice(wdim, 4, replace=False)] = rng.choice([-0.5, 0.5], 4)
    arrays[f"word_q{i}"] = q
    r, c = word.search(q, 25)
    arrays[f"word_rows{i}"], arrays[f"word_cos{i}"] = np.array(r), np.array(c, dtype=np.float32)
arrays["vecs"], arrays["qs"], arrays["rows"], arrays["codes"] = vecs, qs, rows, codes
# CRC-32C over lengths around the SSE4.2 path's block sizes, two alignments.
buf = rng.integers(0, 256, 30000, dtype=np.uint8).tobytes()
out["crc"] = [_core.crc32c(buf[s:s + n]) for n in (0, 1, 7, 8, 767, 768, 769, 24576, 29990)
              for s in (0, 3)]
arrays["buf"] = np.frombuffer(buf, dtype=np.uint8)
np.savez(sys.argv[1] + ".npz", **arrays)
with open(sys.argv[1] + ".json", "w") as f:
    json.dump(out, f)
"""


def run_child(tmp_path: Path, level: str | None) -> tuple[dict, dict[str, np.ndarray], str]:
    env = {k: v for k, v in os.environ.items() if k != "CHITTA_SIMD"}
    if level is not None:
        env["CHITTA_SIMD"] = level
    stem = tmp_path / f"out-{level}"
    # cwd: not the repo root, where `python -c` would import the source tree
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(stem)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=120,
    )
    with np.load(f"{stem}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    # files, not stdout: an editable install may print its rebuild there
    return json.loads(Path(f"{stem}.json").read_text()), arrays, proc.stderr


def bitwise_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.fixture(scope="module")
def generic(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict[str, np.ndarray]]:
    out, arrays, _ = run_child(tmp_path_factory.mktemp("generic"), "generic")
    return out, arrays


def test_generic_level_equals_independent_references(generic) -> None:
    out, a = generic
    assert out["kernels"] == expected_kernels("generic")
    assert out["level"] == "generic"
    # Hamming: popcount of XOR, ties by insertion order (ids ascend with it).
    q = a["codes"][:6] ^ np.uint64(5)
    d = np.bitwise_count(a["codes"][None, :, :] ^ q[:, None, :]).sum(axis=2)
    order = np.argsort(d, axis=1, kind="stable")[:, :40]
    np.testing.assert_array_equal(a["ham_ids"], order.astype(np.uint64) * 7)
    np.testing.assert_array_equal(a["ham_d"], np.take_along_axis(d, order, axis=1))
    # Brute force: distance 1 - dot, exact here; ties by the smaller id.
    dots = a["qs"].astype(np.float64) @ a["vecs"].astype(np.float64).T
    order = np.lexsort((np.broadcast_to(np.arange(500), dots.shape), -dots), axis=1)[:, :30]
    np.testing.assert_array_equal(a["bf_ids"], order)
    np.testing.assert_array_equal(
        a["bf_d"], (1 - np.take_along_axis(dots, order, 1)).astype(np.float32)
    )
    # Word scan: cosine with the unit query, ties by the smaller row.
    for i in range(4):
        cos = a["rows"].astype(np.float64) @ a[f"word_q{i}"].astype(np.float64)
        order = np.lexsort((np.arange(600), -cos))[:25]
        np.testing.assert_array_equal(a[f"word_rows{i}"], order)
        np.testing.assert_array_equal(a[f"word_cos{i}"], cos[order].astype(np.float32))
    buf = a["buf"].tobytes()
    lens = [(n, s) for n in (0, 1, 7, 8, 767, 768, 769, 24576, 29990) for s in (0, 3)]
    short = [bitwise_crc32c(buf[s : s + n]) for n, s in lens if n < 1000]
    assert [c for c, (n, _) in zip(out["crc"], lens) if n < 1000] == short


@pytest.mark.parametrize("level", LEVELS[1:])
def test_level_equals_generic_bit_for_bit(level: str, generic, tmp_path: Path) -> None:
    if LEVEL_FLAG[level] not in FLAGS:
        pytest.skip(f"this CPU has no {LEVEL_FLAG[level]}: level {level} runs nothing new")
    out, a, stderr = run_child(tmp_path, level)
    assert "CHITTA_SIMD" not in stderr
    assert out["cap"] == level
    assert out["kernels"] == expected_kernels(level)
    widest = max((KERNEL_LEVEL[k] for k in out["kernels"].values()), key=RANK.__getitem__)
    assert out["level"] == widest
    gout, g = generic
    assert out["crc"] == gout["crc"]
    for name, want in g.items():
        got = a[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), f"{name} differs at level {level}"


def test_unset_is_the_best_level_and_reported(tmp_path: Path) -> None:
    out, _, stderr = run_child(tmp_path, None)
    assert "CHITTA_SIMD" not in stderr
    assert out["cap"] == "avx512"
    assert out["kernels"] == expected_kernels("avx512")
    assert sorted(_core._cpu_features()) == sorted(
        f
        for f in (
            "sse4_2",
            "popcnt",
            "avx",
            "avx2",
            "fma",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512_vpopcntdq",
            "avx512_vnni",
        )
        if f in FLAGS
    )


@pytest.mark.parametrize("value", ["bogus", "AVX2", "avx512_vpopcntdq"])
def test_unknown_value_is_ignored_with_a_warning(value: str, tmp_path: Path) -> None:
    out, _, stderr = run_child(tmp_path, value)
    assert f"CHITTA_SIMD='{value}'" in stderr
    assert "generic, sse42, avx2, avx512" in stderr
    assert out["cap"] == "avx512"
    assert out["kernels"] == expected_kernels("avx512")
