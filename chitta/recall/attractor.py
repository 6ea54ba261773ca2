"""attractor_settle: a noisy or partial sparse code settles toward stored memories (seed 000).

Each step (3-5 of them):

1. the cue is the ``width`` strongest features of the current state ``x``
   (``width``: the query code's size);
2. its prototypes are the ``prototypes`` stored memories whose codes share most
   features with the cue (the posting index); their centroid gives each of their
   features ``1 / prototypes``;
3. directed transitions: each prototype's outgoing couplings (CoRetrieved and
   other non-suppressing edges, chitta.recall.settle) spread the same mass over
   its successors' codes in proportion to the coupling weight;
4. ``x = BLEND x query + (1 - BLEND) x (centroid + transitions) / 2`` (centroid
   alone when no prototype has a successor).

The settled memories are the posting index's nearest codes to the final cue.
Opt-in: on the synthetic corrupted-code benchmark (benchmarks/bench_attractor.py,
docs/DECISIONS.md D-054) it is reported against the plain posting lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["BLEND", "MAX_STEPS", "MIN_STEPS", "PROTOTYPES", "attractor_settle"]

MIN_STEPS, MAX_STEPS = 3, 5  # seed 000: "follows directed transitions (3-5 steps)"
BLEND = 0.5  # weight of the query's own code in every step's state
PROTOTYPES = 5

U64 = npt.NDArray[np.uint64]


def _top(x: dict[int, float], width: int) -> npt.NDArray[np.uint32]:
    best = sorted(x.items(), key=lambda t: (-t[1], t[0]))[:width]
    return np.array(sorted(f for f, w in best if w > 0), np.uint32)


def attractor_settle(
    query_code: Sequence[int],
    *,
    nearest: Callable[[npt.NDArray[np.uint32], int], U64],
    code_of: Callable[[int], Sequence[int]],
    successors: Callable[[int], Iterable[tuple[int, float]]],
    steps: int = MIN_STEPS,
    k: int = 10,
    blend: float = BLEND,
    prototypes: int = PROTOTYPES,
) -> tuple[U64, npt.NDArray[np.uint32], int]:
    """(settled memory ids best first, the settled cue, steps run). ``nearest(cue, n)``:
    the ``n`` stored codes nearest ``cue``; ``code_of(id)``: a memory's features;
    ``successors(id)``: its outgoing (id, coupling weight). Arguments checked by the caller."""
    query = dict.fromkeys((int(f) for f in query_code), 1.0)
    width = len(query)
    x = dict(query)
    ran = 0
    for _ in range(steps):
        protos = nearest(_top(x, width), prototypes).tolist()
        if not protos:
            break
        share = 1.0 / len(protos)
        centroid: dict[int, float] = {}
        moved: dict[int, float] = {}
        for p in protos:
            for f in code_of(p):
                centroid[f] = centroid.get(f, 0.0) + share
            outs = [(s, w) for s, w in successors(p) if w > 0 and s != p]
            total = sum(w for _, w in outs)
            for s, w in outs:
                for f in code_of(s):
                    moved[f] = moved.get(f, 0.0) + share * w / total
        keys = set(query) | set(centroid) | set(moved)
        if moved:
            x = {
                f: blend * query.get(f, 0.0)
                + (1 - blend) * (centroid.get(f, 0.0) + moved.get(f, 0.0)) / 2
                for f in keys
            }
        else:
            x = {f: blend * query.get(f, 0.0) + (1 - blend) * centroid.get(f, 0.0) for f in keys}
        ran += 1
    cue = _top(x, width)
    return nearest(cue, k), cue, ran
