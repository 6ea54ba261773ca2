"""The dense floor: a paraphrase the dense lane ranks first is not buried by keyword matches.

A memory that says what the query asks in other words ("why did auth go down" / "the login
outage came from an expired certificate") shares no term with it: the keyword lane misses
it, and the memories that merely repeat the query's words ("the auth service is owned by
...") collect the keyword share of the fusion on top of their own cosine, enough for several
of them to pass it. The rule: the first candidate of each lane the query's vector drives
(``dense``; ``expansion``, the BM25 of the field words nearest the query's vector,
chitta.recall.expand), when the keyword lane's list does not hold it, gets at least the
fused score halfway between the best and the second best other candidate, so it ranks no lower than second or third
before the scorer's factors. Whatever the keyword lane found first keeps first place, and at
most two candidates a recall move. Applied to RRF's and convex
fusion's scores alike (``RecallSettings.dense_floor``; LoCoMo dev: docs/DECISIONS.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


FLOOR_LANES = ("dense", "expansion")  # the lanes the query's vector drives


def dense_floor(
    fused: npt.NDArray[np.floating], ranks: npt.NDArray[np.integer], names: Sequence[str]
) -> F64 | None:
    """``fused`` with the floor applied (module docstring), or None when it changes nothing.
    ``ranks``: each candidate's 1-based rank per lane (0: not in that lane's list), its rows
    aligned with ``fused``, its columns with ``names``."""
    if "bm25" not in names or len(fused) < 3:
        return None
    keyword = np.asarray(ranks[:, list(names).index("bm25")])
    base = np.asarray(fused, np.float64)
    out: F64 | None = None
    for lane in FLOOR_LANES:
        if lane not in names:
            continue
        first = np.flatnonzero(
            (np.asarray(ranks[:, list(names).index(lane)]) == 1) & (keyword == 0)
        )
        if not len(first):
            continue
        j = int(first[0])
        others = np.delete(base, j)
        top2 = np.partition(others, len(others) - 2)[len(others) - 2 :]
        second, best = float(top2[0]), float(top2[1])
        if float(base[j]) <= second:  # strictly between the best and the second best
            if out is None:
                out = base.copy()
            out[j] = (second + best) / 2 if best > second else second
    return out
