"""Deduplication: exact (canonical content hash) and near (F_merge < 0).

**Exact.** ``canonical_text`` is the text after Unicode NFKC, case folding,
and collapsing every run of whitespace to one space (trimmed);
``canonical_hash`` is its SHA-256 (hex). Two memories are exact duplicates
when they share realm, kind and canonical hash.

**Near.** Following the seed, two memories merge when the complexity saved by
keeping one memory instead of two outweighs the accuracy lost by letting one
stand for both::

    F_merge = loss + LAMBDA * complexity,   merge iff F_merge < 0

- ``loss = 1 - cos(a, b)``: the merged memory keeps the survivor's vector, so
  the dropped memory is now predicted by a vector at cosine distance
  ``1 - cos`` from its own (0 for identical vectors, up to 2 for opposite
  ones);
- ``complexity = -1``: the change in the number of memories the field holds
  (one fewer; complexity is a saving, hence negative);
- ``LAMBDA = 0.05``: the price of one memory in units of cosine distance. So a
  pair merges iff ``cos(a, b) > 0.95``.

Candidate pairs come from an exact blocked scan of all vectors
(``near_pairs``: every pair with ``cos > 1 - LAMBDA``, O(n^2 d) time, a few
seconds at 10^4 memories); pairs are merged greedily, lowest F_merge first.

**Significant tokens.** Numbers and identifiers carry the facts a vector
blurs: "port 8080" and "port 8081" embed almost identically. Before F_merge
is considered, both texts' ``significant_tokens`` must be equal as sets;
otherwise F_merge is +inf (never merge). Significant: every number
(``\\d+`` with ``.``/``,``/``:`` groups: 8080, 3.11, 10:30) and every
identifier-like token (case-sensitive): one containing a digit or ``_``, a
dotted/slashed/colon-joined name (``os.path``, ``src/a.py``, ``a::b``),
camelCase or ALL-CAPS words of two or more letters, and anything in backticks.

**Keeper.** Of duplicates, the survivor is the most verified
(``meta["verified"] is True``), then the most confident, then the oldest
(created first, then lowest id). It records the others in
``meta["merged_from"]`` (sorted ids, including what they had absorbed) and
takes the union of the tags; the others are forgotten, in the same atomic
group. Their full history stays in the log (``Field.history(id)``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.model import Memory

LAMBDA = 0.05
COMPLEXITY_OF_MERGE = -1.0

_WS = re.compile(r"\s+")
_NUMBER = re.compile(r"(?<![\w.\-])\d+(?:[.,:]\d+)*")
_BACKTICK = re.compile(r"`([^`]+)`")
_TOKEN = re.compile(r"[\w./:\-]+")
_JOINED = re.compile(r"\w[./:\-]+\w")
_CAMEL = re.compile(r"[a-z][A-Z]")
_ALLCAPS = re.compile(r"^[A-Z]{2,}$")


def canonical_text(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def canonical_hash(text: str) -> str:
    """SHA-256 (hex) of :func:`canonical_text`."""
    return hashlib.sha256(canonical_text(text).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=4096)
def significant_tokens(text: str) -> frozenset[str]:
    """Numbers and identifiers of ``text`` (see the module docstring)."""
    out: set[str] = {m.group(0) for m in _NUMBER.finditer(text)}
    out.update(m.group(1).strip() for m in _BACKTICK.finditer(text))
    for m in _TOKEN.finditer(text):
        tok = m.group(0).strip(".:-/")
        if not tok:
            continue
        if (
            any(c.isdigit() for c in tok)
            or "_" in tok
            or _JOINED.search(tok)
            or _CAMEL.search(tok)
            or _ALLCAPS.match(tok)
        ):
            out.add(tok)
    return frozenset(out)


def f_merge(cosine: float, text_a: str, text_b: str, lam: float = LAMBDA) -> float:
    """F_merge of two memories (negative: merge). +inf when it would be negative
    but their significant tokens differ (tokens are only compared then)."""
    f = (1.0 - float(cosine)) + lam * COMPLEXITY_OF_MERGE
    if f < 0 and significant_tokens(text_a) != significant_tokens(text_b):
        return math.inf
    return f


def near_pairs(
    vectors: npt.NDArray[np.float32], lam: float = LAMBDA, block: int = 512
) -> list[tuple[int, int, float]]:
    """Row pairs ``(i, j, cos)``, ``i < j``, whose cosine can give F_merge < 0
    (``cos > 1 - lam``): all of them, by a blocked exact scan (O(n^2 d) time,
    O(block n) memory). Rows need not be unit length."""
    n = len(vectors)
    if n < 2:
        return []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    threshold = 1.0 - lam
    out: list[tuple[int, int, float]] = []
    for lo in range(0, n, block):
        sims = unit[lo : lo + block] @ unit[lo:].T  # only j >= lo
        ii, jj = np.nonzero(sims > threshold)
        for i, j in zip(ii.tolist(), jj.tolist()):
            a, b = lo + i, lo + j
            if a < b:
                out.append((a, b, float(sims[i, j])))
    return out


def is_verified(memory: Memory) -> bool:
    return bool(memory.meta) and memory.meta.get("verified") is True  # type: ignore[union-attr]


def keeper_order(memory: Memory) -> tuple[bool, float, int, int]:
    """Sort key: the first of a sorted group is the one to keep."""
    return (not is_verified(memory), -memory.confidence, memory.created_ms, memory.id)


def merge_ops(keeper: Memory, dropped: Sequence[Memory], now_ms: int) -> list[ops.Op]:
    """The atomic group that folds ``dropped`` into ``keeper`` (provenance kept)."""
    merged: set[int] = set(_merged_from(keeper))
    tags = list(keeper.tags)
    for d in dropped:
        merged.add(d.id)
        merged.update(_merged_from(d))
        tags.extend(t for t in d.tags if t not in tags)
    meta: dict[str, Any] = dict(keeper.meta or {})
    meta["merged_from"] = sorted(merged)
    group: list[ops.Op] = [
        ops.UpdateMemoryContent(
            id=keeper.id,
            at_ms=now_ms,
            meta=meta,
            tags=tuple(tags) if tuple(tags) != keeper.tags else None,
        )
    ]
    group.extend(ops.DeleteMemory(id=d.id, at_ms=now_ms) for d in dropped)
    return group


def _merged_from(memory: Memory) -> list[int]:
    value = (memory.meta or {}).get("merged_from")
    if isinstance(value, list):
        return [x for x in value if isinstance(x, int) and not isinstance(x, bool)]
    return []


def exact_groups(memories: Iterable[Memory]) -> list[list[Memory]]:
    """Groups (2+) of exact duplicates, each sorted keeper first; groups in order of first member."""
    groups: dict[tuple[str | None, str, str], list[Memory]] = {}
    for m in memories:
        groups.setdefault((m.realm, m.kind, canonical_hash(m.text)), []).append(m)
    return [sorted(g, key=keeper_order) for g in groups.values() if len(g) > 1]


class Clusters:
    """Greedy merging of accepted pairs: each pair joins two survivors at most once."""

    def __init__(self) -> None:
        self.absorbed: dict[int, list[Memory]] = {}
        self.members: dict[int, Memory] = {}
        self.dropped: set[int] = set()

    def join(self, a: Memory, b: Memory) -> bool:
        if a.id in self.dropped or b.id in self.dropped or a.id == b.id:
            return False
        keep, drop = sorted((a, b), key=keeper_order)
        self.members[keep.id] = keep
        self.absorbed.setdefault(keep.id, []).append(drop)
        self.absorbed[keep.id].extend(self.absorbed.pop(drop.id, []))
        self.members.pop(drop.id, None)
        self.dropped.add(drop.id)
        return True

    def groups(self) -> list[tuple[Memory, list[Memory]]]:
        return [(self.members[k], v) for k, v in sorted(self.absorbed.items())]


@dataclasses.dataclass(frozen=True, slots=True)
class DedupReport:
    """What a dedup pass did. ``merges``: (survivor id, dropped id) per merged memory."""

    examined: int
    exact: int
    near: int
    merges: tuple[tuple[int, int], ...]

    @property
    def merged(self) -> int:
        return self.exact + self.near

    def as_dict(self) -> dict[str, Any]:
        return {
            "examined": self.examined,
            "exact": self.exact,
            "near": self.near,
            "merges": [list(p) for p in self.merges],
        }
