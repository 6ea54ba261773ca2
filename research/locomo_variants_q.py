"""Variants of the recall engine for locomo_quality.py (issue 17 items 1-3). Research only."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, ClassVar

from locomo_quality import settings, variant

from chitta.recall.engine import RecallSettings
from chitta.recall.scorer import Scorer


def scorer(**kw: Any) -> Any:
    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.scorer = Scorer(dataclasses.replace(e.scorer.settings, **kw))
        return c

    return fn


@variant("no-neighbour")
@settings
def _no_neighbour(s: RecallSettings) -> RecallSettings:
    return dataclasses.replace(s, lane_weights={**s.lane_weights, "neighbour": 0.0})


variant("staged1")(scorer(staged_multiplier=1.0))
variant("noact")(scorer(w_activation=0.0))
variant("staged1-noact")(scorer(staged_multiplier=1.0, w_activation=0.0))


@variant("no-floor")
@settings
def _no_floor(s: RecallSettings) -> RecallSettings:
    return dataclasses.replace(s, dense_floor=False)


def _floor_lanes(lanes: tuple[str, ...]) -> Any:
    import chitta.recall.lane_floor as lf

    def fn(e: Any) -> Any:
        lf.FLOOR_LANES = lanes  # research only: the variants run one after another
        return e

    return fn


variant("floor-dense-only")(_floor_lanes(("dense",)))
variant("floor-both")(_floor_lanes(("dense", "expansion")))


def _prf(beta: float, m: int) -> Any:
    """Pseudo-relevance feedback (Rocchio): the dense query moves toward the top ``m`` hits'
    vectors (q' = q + beta * mean), the recall runs again with it."""
    import numpy as np

    from chitta.recall.engine import RecallEngine

    class PRF(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = PRF
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            first = super().recall(text=text, vector=vector, k=k, **kw)
            if vector is None or not first:
                return first
            mems = self.memories.memories([h.id for h in first[:m]])
            vecs = [
                np.asarray(x.embedding, np.float32)
                for x in mems
                if x is not None and x.embedding is not None
            ]
            if not vecs:
                return first
            q = np.asarray(vector, np.float32) + beta * np.mean(vecs, axis=0)
            q = (q / np.linalg.norm(q)).astype(np.float32)
            return super().recall(text=text, vector=q, k=k, **kw)

    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.__class__ = PRF
        return c

    return fn


for _b in (0.3, 0.7):
    for _m in (3, 5):
        variant(f"prf{_b}x{_m}")(_prf(_b, _m))


def _diverse(gamma: float, depth: int = 3) -> Any:
    """Session diversity: from the top ``depth * k`` hits, pick greedily by score times
    ``gamma`` per hit already picked from the same session."""
    from chitta.recall.engine import RecallEngine

    class Diverse(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Diverse
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            pool = super().recall(text=text, vector=vector, k=depth * k, **kw)
            picked: list[Any] = []
            count: dict[Any, int] = {}
            left = list(pool)
            while left and len(picked) < k:
                best = max(
                    range(len(left)),
                    key=lambda i: left[i].score * gamma ** count.get(left[i].memory.session, 0),
                )
                h = left.pop(best)
                picked.append(h)
                count[h.memory.session] = count.get(h.memory.session, 0) + 1
            return picked

    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.__class__ = Diverse
        return c

    return fn


for _g in (0.9, 0.8, 0.6):
    variant(f"diverse{_g}")(_diverse(_g))


def _window(delta: float, m: int = 3, both: bool = False) -> Any:
    """Session window: the turn written after each of the top ``m`` hits in its session joins
    the candidates at ``delta`` x that hit's score (evidence spans a question and its reply)."""
    from chitta.recall.engine import RecallEngine
    from chitta.recall.hit import Hit

    class Window(RecallEngine):
        nxt: ClassVar[dict[int, int]] = {}
        prv: ClassVar[dict[int, int]] = {}

        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Window
            return c

        def _order(self) -> None:
            if Window.nxt:
                return
            all_ids = sorted(int(x) for x in self.memories.live_id_array())
            mems = [x for x in self.memories.memories(all_ids) if x is not None]
            by: dict[Any, list[Any]] = {}
            for x in mems:
                by.setdefault(x.session, []).append(x)
            for xs in by.values():
                xs.sort(key=lambda x: (x.written_ms, x.id))
                for a, b in itertools.pairwise(xs):
                    Window.nxt[a.id] = b.id
                    Window.prv[b.id] = a.id

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            pool = super().recall(text=text, vector=vector, k=2 * k, **kw)
            self._order()
            score = {h.id: h.score for h in pool}
            for h in pool[:m]:
                for link in (Window.nxt, Window.prv) if both else (Window.nxt,):
                    s = link.get(h.id)
                    if s is not None:
                        score[s] = max(score.get(s, 0.0), delta * h.score)
            order = sorted(score, key=lambda i: (-score[i], i))[:k]
            got = {h.id: h for h in pool}
            mems = self.memories.memories([i for i in order if i not in got])
            extra = {x.id: x for x in mems if x is not None}
            out = []
            for i in order:
                if i in got:
                    out.append(got[i])
                elif i in extra:
                    out.append(
                        Hit(
                            id=i,
                            text=extra[i].text,
                            score=score[i],
                            memory=extra[i],
                            lanes={},
                            fused=0.0,
                        )
                    )
            return out

    def fn(e: Any) -> Any:
        Window.nxt, Window.prv = {}, {}
        c = e._copy(e.settings)
        c.__class__ = Window
        return c

    return fn


for _d in (0.95, 0.8):
    variant(f"window{_d}")(_window(_d))
    variant(f"window{_d}both")(_window(_d, both=True))


def _fusion(alpha: float, beta: float) -> Any:
    return settings(lambda s: dataclasses.replace(s, fusion_alpha=alpha, expansion_weight=beta))


for _a in (0.45, 0.55, 0.65):
    for _e in (0.1, 0.2, 0.3):
        variant(f"a{_a}e{_e}")(_fusion(_a, _e))
