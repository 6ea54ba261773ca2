"""Session-level variants for locomo_quality.py (issue 17 item 1 / issue 18 multi-hop). Research only.

A session's vector is the normalised mean of its memories' vectors (what a write-time op would
log). Every variant recalls a pool of ``depth`` with the plain engine, then:

- ``sb{b}``: multiplies each hit's score by ``1 + b * rel(S)``, ``rel`` the hit's session cosine
  with the query, min-max scaled over the sessions of the field (1 for the closest session).
- ``sbt{b}``: the same, ``rel`` = max(0, z-score of the session cosine over the field's sessions) / 2.
- ``sx{m}_{n}_{b}``: ``sb{b}`` plus, for the ``m`` sessions closest to the query, their ``n`` turns
  closest to the query that the pool lacks, scored ``cos x (pool top score / pool top cosine)``
  (a hit's cosine in score units), then boosted like the others.
- ``adj{w}``: each of the top 5 hits lends its previous and next turn of the same session
  ``w x its score x cos(turn) / cos(hit)`` when that beats the turn's own score (or the turn is
  new to the pool).
- ``sp{p}``: the speaker prior (``RecallSettings.speaker_prior``, default 0.3) at ``p``.
- ``sb{b}+sp{p}``: both (the session boost over the engine with speaker prior ``p``).
- ``nospk``: ``dense_query_without_speaker`` on.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

import numpy as np
from locomo_quality import variant

from chitta.recall.engine import RecallEngine
from chitta.recall.hit import Hit


def _engine(cls: type) -> Any:
    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.__class__ = cls
        return c

    return fn


class _Sessions:
    """Per field: each memory's session, the session's turns in write order, their vectors."""

    def __init__(self, engine: Any) -> None:
        ids = sorted(engine.memories.all_ids())
        mems = engine.memories.memories(ids)
        by: dict[str, list[int]] = defaultdict(list)
        self.session_of: dict[int, str] = {}
        for mid, m in zip(ids, mems):
            if m is None or m.session is None or engine.index.vector(mid) is None:
                continue
            by[m.session].append(mid)
            self.session_of[mid] = m.session
        self.names = sorted(by)
        self.turns = {s: by[s] for s in self.names}
        self.pos = {mid: (s, i) for s in self.names for i, mid in enumerate(by[s])}
        rows = []
        for s in self.names:
            v = np.mean([engine.index.vector(m) for m in by[s]], axis=0)
            rows.append(v / (np.linalg.norm(v) or 1.0))
        self.mat = np.array(rows, np.float32)


_TABLES: dict[int, _Sessions] = {}


def _table(engine: Any) -> _Sessions:
    key = id(engine.memories)
    if key not in _TABLES:
        _TABLES[key] = _Sessions(engine)
    return _TABLES[key]


def _rel(sc: np.ndarray, mode: str) -> np.ndarray:
    if mode == "minmax":
        lo, hi = float(sc.min()), float(sc.max())
        return (sc - lo) / (hi - lo) if hi > lo else np.zeros_like(sc)
    sd = float(sc.std()) or 1.0
    return np.maximum(0.0, (sc - sc.mean()) / sd) / 2.0


def _session_variant(b: float, mode: str, m: int = 0, n: int = 0, depth: int = 50) -> Any:
    class Sess(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Sess
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            pool = super().recall(text=text, vector=vector, k=max(k, depth), **kw)
            if not pool or vector is None:
                return pool[:k]
            t = _table(self)
            sc = t.mat @ vector
            rel = dict(zip(t.names, _rel(sc, mode).tolist()))
            have = {h.id for h in pool}
            if m and n:
                cos = self.index.cosine_array(vector, [h.id for h in pool])
                unit = pool[0].score / max(float(np.nanmax(cos)), 1e-6)
                for j in np.argsort(-sc)[:m].tolist():
                    turns = [x for x in t.turns[t.names[j]] if x not in have]
                    if not turns:
                        continue
                    tc = self.index.cosine_array(vector, turns)
                    for p in np.argsort(-tc)[:n].tolist():
                        mem = self.memories.get(turns[p])
                        if mem is None:
                            continue
                        pool.append(
                            Hit(turns[p], mem.text, float(tc[p]) * unit, mem, {"session": 1}, 0.0)
                        )
                        have.add(turns[p])
            out = [
                dataclasses.replace(
                    h, score=h.score * (1 + b * rel.get(t.session_of.get(h.id, ""), 0.0))
                )
                for h in pool
            ]
            out.sort(key=lambda h: (-h.score, h.id))
            return out[:k]

    return _engine(Sess)


def _adjacent(w: float, seeds: int = 5, depth: int = 50) -> Any:
    class Adj(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Adj
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            pool = super().recall(text=text, vector=vector, k=max(k, depth), **kw)
            if not pool or vector is None:
                return pool[:k]
            t = _table(self)
            by = {h.id: h for h in pool}
            cos_of = dict(zip(by, self.index.cosine_array(vector, list(by)).tolist()))
            for h in pool[:seeds]:
                if h.id not in t.pos:
                    continue
                s, i = t.pos[h.id]
                for j in (i - 1, i + 1):
                    if not 0 <= j < len(t.turns[s]):
                        continue
                    nb = t.turns[s][j]
                    c = float(self.index.cosine_array(vector, [nb])[0])
                    lent = w * h.score * max(c, 0.0) / max(cos_of.get(h.id, 1.0), 1e-6)
                    old = by.get(nb)
                    if old is not None and old.score >= lent:
                        continue
                    mem = old.memory if old is not None else self.memories.get(nb)
                    if mem is None:
                        continue
                    by[nb] = Hit(nb, mem.text, lent, mem, {"adjacent": 1}, 0.0)
            out = sorted(by.values(), key=lambda h: (-h.score, h.id))
            return out[:k]

    return _engine(Adj)


for _b in (0.1, 0.2, 0.3, 0.5):
    variant(f"sb{_b}")(_session_variant(_b, "minmax"))
    variant(f"sbt{_b}")(_session_variant(_b, "z"))
for _m, _n, _b in ((2, 3, 0.2), (3, 3, 0.2), (3, 5, 0.3), (2, 5, 0.0)):
    variant(f"sx{_m}_{_n}_{_b}")(_session_variant(_b, "minmax", _m, _n))
for _w in (0.6, 0.8, 0.9):
    variant(f"adj{_w}")(_adjacent(_w))

for _b in (0.05, 0.1):
    variant(f"sb{_b}")(_session_variant(_b, "minmax"))


def _speaker(p: float) -> Any:
    return lambda e: e._copy(dataclasses.replace(e.settings, speaker_prior=p))


for _p in (0.0, 0.5, 0.8):
    variant(f"sp{_p}")(_speaker(_p))
variant("nospk")(
    lambda e: e._copy(dataclasses.replace(e.settings, dense_query_without_speaker=True))
)


def _both(b: float, p: float) -> Any:
    """The session boost ``b`` over the engine with speaker prior ``p``."""
    boost, speaker = _session_variant(b, "minmax"), _speaker(p)
    return lambda e: boost(speaker(e))


for _b, _p in (
    (0.05, 0.5),
    (0.1, 0.5),
    (0.2, 0.5),
    (0.05, 0.8),
    (0.1, 0.8),
    (0.2, 0.8),
    (0.1, 0.4),
    (0.15, 0.4),
    (0.15, 0.5),
):
    variant(f"sb{_b}+sp{_p}")(_both(_b, _p))


def asks_for_a_list(text: str) -> bool:
    """A question asking for several things ("What activities ...", "Which books ..."): the
    shipped rule (chitta.recall.list_query; a first form here let "What activities does ..."
    through only when the auxiliary was not the second word)."""
    from chitta.recall.list_query import asks_for_a_list as shipped

    return shipped(text)


def _listing(d: float, p: float, b: float, depth: int = 50) -> Any:
    """List questions: speaker prior ``p`` and session diversity ``d`` (x d per hit already
    picked from the hit's session); other questions: the session boost ``b`` (0: plain)."""
    boost = _session_variant(b, "minmax") if b else (lambda e: e)
    speaker = _speaker(p)

    class Listing(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Listing
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            plain = RecallEngine._copy(self, self.settings)
            if not asks_for_a_list(text or ""):
                return boost(plain).recall(text=text, vector=vector, k=k, **kw)
            pool = speaker(plain).recall(text=text, vector=vector, k=max(k, depth), **kw)
            t = _table(self)
            picked: dict[str, int] = defaultdict(int)
            left, out = list(pool), []
            while left and len(out) < k:
                j = max(
                    range(len(left)),
                    key=lambda i: left[i].score * d ** picked[t.session_of.get(left[i].id, "")],
                )
                h = left.pop(j)
                picked[t.session_of.get(h.id, "")] += 1
                out.append(h)
            return out

    return _engine(Listing)


for _d, _p, _b in (
    (0.8, 0.8, 0.0),
    (0.6, 0.8, 0.0),
    (1.0, 0.8, 0.0),
    (0.8, 0.8, 0.1),
    (0.8, 0.5, 0.1),
):
    variant(f"list{_d}_{_p}_{_b}")(_listing(_d, _p, _b))
variant("nolist")(lambda e: e._copy(dataclasses.replace(e.settings, list_speaker_prior=None)))
