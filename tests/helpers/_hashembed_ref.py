"""Pure-Python reimplementation of the hashing-v1 embedder, written from the
spec in csrc/hashembed/hash_embed.h (the oracle for the C++ code)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

import numpy as np

MASK = (1 << 64) - 1
FNV_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
SEED = int.from_bytes(b"chitta1v", "big")


def fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK
    k ^= k >> 33
    return k


def feature_hash(tag: str, text: str) -> int:
    h = FNV_BASIS ^ SEED
    for byte in tag.encode() + text.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return fmix64(h)


def features(text: str) -> Counter[tuple[str, str]]:
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())
    out: Counter[tuple[str, str]] = Counter()
    for i, w in enumerate(words):
        out["w", w] += 1
        if i:
            out["b", words[i - 1] + " " + w] += 1
        padded = "<" + w + ">"
        for n in (3, 4, 5):
            for s in range(len(padded) - n + 1):
                out["c", padded[s : s + n]] += 1
    return out


def embed(text: str, dim: int) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float64)
    for (tag, s), tf in features(text).items():
        h = feature_hash(tag, s)
        w = 1.0 + math.log(tf)
        v[h % dim] += -w if h >> 63 else w
    n = np.linalg.norm(v)
    return v / n if n > 0 else v
