"""The keyword index sidecar (bm25.idx) of the golden checkpoint-v3 against
docs/FORMAT.md section 8, read by an independent parser (struct + the
pure-Python CRC-32C): its documents are the golden field's live memories with
the tokens the tokenizer gives their texts."""

from __future__ import annotations

import shutil
import struct
from collections import Counter
from pathlib import Path

from segment_oracle import crc32c

import chitta
from chitta.organs.index.bm25 import tokenize

GOLDEN = Path(__file__).parent / "golden" / "checkpoint-v3"


def _parse(data: bytes) -> dict[str, object]:
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == crc32c(data[:-4])
    magic, major, minor, header_bytes, flags, reserved = struct.unpack_from("<8sHHIII", data, 0)
    assert (magic, major, minor, header_bytes, reserved) == (b"CHITBM25", 1, 0, 80, 0)
    k1, b, docs, terms, postings, term_bytes, bigs = struct.unpack_from("<ddQQQQQ", data, 24)
    off = header_bytes
    ids = struct.unpack_from(f"<{docs}Q", data, off)
    off += 8 * docs
    lens = struct.unpack_from(f"<{docs}I", data, off)
    off += 4 * docs
    dfs = struct.unpack_from(f"<{terms}I", data, off)
    off += 4 * terms
    tlens = struct.unpack_from(f"<{terms}I", data, off)
    off += 4 * terms
    text = data[off : off + term_bytes]
    off += term_bytes
    ords = struct.unpack_from(f"<{postings}I", data, off)
    off += 4 * postings
    tfs = struct.unpack_from(f"<{postings}H", data, off)
    off += 2 * postings
    off += 12 * bigs
    assert off + 4 == len(data)  # the size is exactly what the header says
    words, pos = [], 0
    for n in tlens:
        words.append(text[pos : pos + n].decode("utf-8"))
        pos += n
    per_doc: dict[int, Counter[str]] = {i: Counter() for i in ids}
    p = 0
    for word, df in zip(words, dfs):
        run = ords[p : p + df]
        assert list(run) == sorted(set(run))  # strictly ascending ordinals
        for o, tf in zip(run, tfs[p : p + df]):
            per_doc[ids[o]][word] = tf
        p += df
    assert p == postings
    for i, length in zip(ids, lens):
        assert sum(per_doc[i].values()) == length
    return {"flags": flags, "k1": k1, "b": b, "docs": per_doc}


def test_golden_v3_bm25_sidecar_matches_the_spec(tmp_path: Path) -> None:
    name = (GOLDEN / "checkpoint" / "CURRENT").read_bytes().decode("ascii").strip()
    parsed = _parse((GOLDEN / "checkpoint" / name / "bm25.idx").read_bytes())
    assert parsed["flags"] == 0b11  # stem, stopwords: the field's keyword index
    assert (parsed["k1"], parsed["b"]) == (1.2, 0.75)
    root = tmp_path / "f"
    shutil.copytree(GOLDEN, root)
    with chitta.open(root, read_only=True, embedder=None, load_checkpoint=False) as f:
        want = {m.id: Counter(tokenize(m.text, stem=True)) for m in f.memories()}
    assert parsed["docs"] == want
