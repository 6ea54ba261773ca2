"""Directed coupling between memories, and settling over it (seed 000).

Co-recall couples memories one way more than the other: when ``a`` ranks above
``b`` in one recall, ``a -> b`` gains ``COUPLING`` and ``b -> a`` gains
``COUPLING x REVERSE_COUPLING`` (CoRetrieved edges, logged as AddAssocEdge ops,
so replay adds the same weights and never re-derives them).

:func:`settle` spreads activation over those directed couplings:

- the seeds are clamped at 1;
- every other node that has been discovered (reached by a directed edge from a
  discovered node: the set grows by one hop per step) takes
  ``sigmoid(gain x (h - threshold))``, with ``h`` the sum over discovered ``i`` of
  ``a_i x w(i -> j)`` (synchronous update);
- it stops after ``steps`` updates or when no activation moves by more than
  ``tol``; the completed pattern is the non-seed nodes at or above ``min_activation``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

__all__ = ["COUPLING", "REVERSE_COUPLING", "co_recall_pairs", "pattern", "settle"]

COUPLING = 0.1  # a co-recall's forward coupling (the weight CoRetrieved edges had both ways)
REVERSE_COUPLING = 0.3  # seed 000: "the reverse (B->A) is attenuated to 0.3x"
GAIN = 10.0  # the sigmoid's slope (docs/DECISIONS.md D-054)
THRESHOLD = 0.1  # input at which a node is half on: one forward co-recall from a clamped seed
MIN_ACTIVATION = 0.5
MAX_STEPS = 100
TOL = 1e-12

# node -> [(successor, weight)] of its outgoing couplings
Couplings = Callable[[int], Iterable[tuple[int, float]]]


def co_recall_pairs(ranked: Sequence[int]) -> list[tuple[int, int, float]]:
    """(src, dst, weight) added by one recall returning ``ranked`` (best first)."""
    out: list[tuple[int, int, float]] = []
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            out.append((a, b, COUPLING))
            out.append((b, a, COUPLING * REVERSE_COUPLING))
    return out


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def settle(
    couplings: Couplings,
    seeds: Sequence[int],
    steps: int,
    *,
    gain: float = GAIN,
    threshold: float = THRESHOLD,
    tol: float = TOL,
) -> tuple[dict[int, float], int]:
    """(node -> activation of every discovered node, updates run); see the module docstring.
    The caller checks its arguments (chitta/organs/graph_ops.py)."""
    seed_set = set(seeds)
    act: dict[int, float] = dict.fromkeys(seeds, 1.0)
    out: dict[int, list[tuple[int, float]]] = {}

    def succ(u: int) -> list[tuple[int, float]]:
        got = out.get(u)
        if got is None:
            merged: dict[int, float] = {}
            for v, w in couplings(u):
                if v != u:
                    merged[v] = merged.get(v, 0.0) + w
            got = out[u] = sorted(merged.items())
        return got

    ran = 0
    for _ in range(steps):
        # dynamic neighbour discovery: one hop further out of every node discovered so far
        for u in list(act):
            for v, _w in succ(u):
                act.setdefault(v, 0.0)
        h = dict.fromkeys(act, 0.0)
        for u, a in act.items():
            if a:  # a node discovered this step has not switched on yet
                for v, w in succ(u):
                    h[v] += a * w
        new = {
            j: 1.0 if j in seed_set else _sigmoid(gain * (h[j] - threshold)) for j in sorted(act)
        }
        moved = max((abs(new[j] - act[j]) for j in new), default=0.0)
        act = new
        ran += 1
        if moved < tol:
            break
    return act, ran


def pattern(
    act: dict[int, float], seeds: Sequence[int], min_activation: float = MIN_ACTIVATION
) -> list[tuple[int, float]]:
    """The completed pattern: non-seed nodes at or above ``min_activation``, strongest first."""
    seed_set = set(seeds)
    got = [(j, a) for j, a in act.items() if j not in seed_set and a >= min_activation]
    got.sort(key=lambda t: (-t[1], t[0]))
    return got
