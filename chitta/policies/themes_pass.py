"""The themes maintenance pass: cluster memories into themes, logged as ThemeEvents.

One pass (``run_pass``), in four steps, each committed before the next reads the
organ again:

1. members that were forgotten are removed, and their themes' centroids recomputed;
2. live memories with a vector and no theme (in apply order, at most ``BATCH``) are
   assigned one by one to the theme whose centroid is nearest by cosine when that
   cosine is at least ``assign_min``; otherwise each founds a new theme. Centroids
   follow as the running mean of the members' unit vectors;
3. a theme with more than ``max_members`` members is split in two by k-means (k=2,
   Euclidean on the unit vectors; deterministic start: the member least like the
   centroid and the member least like that one); the larger part keeps the theme,
   and the parts are split again while oversized;
4. the two themes whose centroids are most alike are merged while that cosine is
   above ``merge_above`` (0.9, the seed's) and the merged theme would not be
   oversized (so a split is never undone by the next merge); the larger absorbs the
   smaller (the older on a tie) and the absorbed one is deleted.

A centroid is the mean of its members' unit vectors; its coherence, the mean cosine
of the members to its direction, is its length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.ops import Op

if TYPE_CHECKING:
    from chitta.organs.themes import ThemesOrgan

__all__ = ["ASSIGN_MIN", "MAX_MEMBERS", "MERGE_ABOVE", "kmeans2", "run_pass"]

ASSIGN_MIN = 0.5
MAX_MEMBERS = 64
MERGE_ABOVE = 0.9
BATCH = 5000  # new memories assigned per pass
KMEANS_ITERATIONS = 50
GROUP = 512  # events per committed group
LABEL_WORDS = 8  # a new theme's label: the first words of its first memory
LABEL_CHARS = 80

F64 = npt.NDArray[np.float64]


def _unit(v: Any) -> F64 | None:
    x = np.asarray(v, np.float64)
    n = float(np.linalg.norm(x))
    return None if n == 0.0 or not np.isfinite(n) else x / n


def _centroid_event(tid: int, c: F64, at: int) -> ops.ThemeEvent:
    return ops.ThemeEvent(
        event="update_centroid",
        theme=tid,
        at_ms=at,
        centroid=c.astype("<f4").tobytes(),
        coherence=float(np.linalg.norm(c)),
    )


def kmeans2(x: F64) -> npt.NDArray[np.int64]:
    """Labels 0/1 of the rows of ``x`` (unit vectors) by Lloyd's k-means with k=2
    from the deterministic start described in the module docstring."""
    mean = x.mean(axis=0)
    a = int(np.argmin(x @ mean))
    b = int(np.argmax(((x - x[a]) ** 2).sum(axis=1)))
    centres = np.stack([x[a], x[b]])
    labels = np.zeros(len(x), np.int64)
    for step in range(KMEANS_ITERATIONS):
        d = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        new = np.argmin(d, axis=1).astype(np.int64)
        if step and np.array_equal(new, labels):
            break
        labels = new
        if labels.min() == labels.max():
            break
        centres = np.stack([x[labels == 0].mean(axis=0), x[labels == 1].mean(axis=0)])
    return labels


class _Pass:
    def __init__(self, organ: ThemesOrgan, ctx: Any) -> None:
        self.organ, self.ctx, self.core = organ, ctx, ctx.core
        self.now = ctx.now_ms()
        self.pending: list[Op] = []
        self.changes = 0

    def emit(self, op: Op) -> None:
        self.pending.append(op)
        self.changes += 1
        if len(self.pending) >= GROUP:
            self.flush()

    def flush(self) -> None:
        for i in range(0, len(self.pending), GROUP):
            self.ctx.commit(*self.pending[i : i + GROUP])
        self.pending = []

    def vector(self, mid: int) -> F64 | None:
        m = self.core.memories.get(mid)
        return None if m is None or m.embedding is None else _unit(m.embedding)

    def member_matrix(self, tid: int) -> tuple[list[int], F64]:
        theme = self.organ.themes[tid]
        ids, rows = [], []
        for mid in theme.member_ids():
            v = self.vector(mid)
            if v is not None and v.shape == theme.centroid.shape:
                ids.append(mid)
                rows.append(v)
        return ids, np.stack(rows) if rows else np.zeros((0, len(theme.centroid)))

    def realm_of(self, tid: int, mid: int) -> str | None:
        for realm, ms in self.organ.themes[tid].members.items():
            if mid in ms:
                return realm
        return None

    # 1. forgotten members
    def prune(self) -> None:
        memories = self.core.memories
        for tid in sorted(self.organ.themes):
            theme = self.organ.themes[tid]
            gone = [m for m in theme.member_ids() if not memories.is_live(m)]
            if not gone:
                continue
            for mid in gone:
                self.emit(
                    ops.ThemeEvent(
                        event="remove_member",
                        theme=tid,
                        at_ms=self.now,
                        member=mid,
                        realm=self.realm_of(tid, mid),
                    )
                )
            kept = theme.size - len(gone)
            if kept == 0:
                self.emit(ops.ThemeEvent(event="delete", theme=tid, at_ms=self.now))
                continue
            self.flush()
            _, x = self.member_matrix(tid)
            if len(x):
                self.emit(_centroid_event(tid, x.mean(axis=0), self.now))
        self.flush()

    # 2. new memories
    def assign(self, assign_min: float) -> None:
        organ = self.organ
        tids = sorted(organ.themes)
        cents = {t: organ.themes[t].centroid.astype(np.float64) for t in tids}
        sizes = {t: organ.themes[t].size for t in tids}
        touched: set[int] = set()
        done = 0
        for mid in self.core.memories.live_ids():
            if done >= BATCH:
                break
            if mid in organ.member_theme:
                continue
            m = self.core.memories.get(mid)
            u = None if m is None or m.embedding is None else _unit(m.embedding)
            if m is None or u is None:
                continue
            done += 1
            best, best_cos = None, -2.0
            for t in tids:
                c = cents[t]
                cn = float(np.linalg.norm(c))
                if c.shape != u.shape or cn == 0.0:
                    continue
                cos = float(c @ u) / cn
                if cos > best_cos:
                    best, best_cos = t, cos
            if best is None or best_cos < assign_min:
                tid = self.ctx.new_id()
                label = " ".join(m.text.split()[:LABEL_WORDS])[:LABEL_CHARS]
                self.emit(
                    ops.ThemeEvent(
                        event="create",
                        theme=tid,
                        at_ms=self.now,
                        label=label,
                        centroid=u.astype("<f4").tobytes(),
                        coherence=1.0,
                    )
                )
                tids.append(tid)
                cents[tid], sizes[tid] = u.copy(), 0
                best = tid
            else:
                touched.add(best)
            self.emit(
                ops.ThemeEvent(
                    event="assign_member", theme=best, at_ms=self.now, member=mid, realm=m.realm
                )
            )
            n = sizes[best]
            cents[best] = (cents[best] * n + u) / (n + 1)
            sizes[best] = n + 1
        for t in sorted(touched):
            self.emit(_centroid_event(t, cents[t], self.now))
        self.flush()

    # 3. oversized themes
    def split(self, max_members: int) -> None:
        queue = sorted(t for t, th in self.organ.themes.items() if th.size > max_members)
        while queue:
            tid = queue.pop(0)
            ids, x = self.member_matrix(tid)
            if len(ids) <= max_members:
                continue
            labels = kmeans2(x)
            if labels.min() == labels.max():
                continue  # identical vectors: nothing to split
            keep = 0 if (labels == 0).sum() >= (labels == 1).sum() else 1
            moved = [mid for mid, lab in zip(ids, labels) if lab != keep]
            new_c = x[labels != keep].mean(axis=0)
            new_tid = self.ctx.new_id()
            label = self.organ.themes[tid].label
            self.emit(
                ops.ThemeEvent(
                    event="create",
                    theme=new_tid,
                    at_ms=self.now,
                    label=label,
                    centroid=new_c.astype("<f4").tobytes(),
                    coherence=float(np.linalg.norm(new_c)),
                )
            )
            for mid in moved:
                self.emit(
                    ops.ThemeEvent(
                        event="assign_member",
                        theme=new_tid,
                        at_ms=self.now,
                        member=mid,
                        realm=self.realm_of(tid, mid),
                    )
                )
            self.emit(_centroid_event(tid, x[labels == keep].mean(axis=0), self.now))
            self.flush()
            queue.extend(t for t in (tid, new_tid) if self.organ.themes[t].size > max_members)

    # 4. near-identical centroids
    def merge(self, merge_above: float, max_members: int) -> None:
        while True:
            themes = sorted(self.organ.themes.values(), key=lambda t: t.id)
            best: tuple[float, int, int] | None = None
            units = {t.id: _unit(t.centroid) for t in themes}
            for i, a in enumerate(themes):
                ua = units[a.id]
                for b in themes[i + 1 :]:
                    ub = units[b.id]
                    if ua is None or ub is None or ua.shape != ub.shape:
                        continue
                    if a.size + b.size > max_members:
                        continue
                    cos = float(ua @ ub)
                    if cos > merge_above and (best is None or cos > best[0]):
                        best = (cos, a.id, b.id)
            if best is None:
                return
            _, a_id, b_id = best
            a, b = self.organ.themes[a_id], self.organ.themes[b_id]
            keeper, gone = (a, b) if a.size >= b.size else (b, a)
            na, nb = keeper.size, gone.size
            c = (
                keeper.centroid.astype(np.float64) * na + gone.centroid.astype(np.float64) * nb
            ) / max(na + nb, 1)
            for realm, ms in sorted(
                gone.members.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")
            ):
                for mid in sorted(ms):
                    self.emit(
                        ops.ThemeEvent(
                            event="assign_member",
                            theme=keeper.id,
                            at_ms=self.now,
                            member=mid,
                            realm=realm,
                        )
                    )
            self.emit(_centroid_event(keeper.id, c, self.now))
            self.emit(ops.ThemeEvent(event="delete", theme=gone.id, at_ms=self.now))
            self.flush()


def run_pass(
    organ: ThemesOrgan,
    ctx: Any,
    *,
    assign_min: float = ASSIGN_MIN,
    max_members: int = MAX_MEMBERS,
    merge_above: float = MERGE_ABOVE,
) -> dict[str, int]:
    """Run the four steps; returns the events logged per step and in all."""
    ctx.core.apply_pending()  # puts remember() queued natively reach the memories first
    p = _Pass(organ, ctx)
    counts: dict[str, int] = {}
    for name, step in (
        ("pruned", p.prune),
        ("assigned", lambda: p.assign(assign_min)),
        ("split", lambda: p.split(max_members)),
        ("merged", lambda: p.merge(merge_above, max_members)),
    ):
        before = p.changes
        step()
        counts[name] = p.changes - before
    counts["changes"] = p.changes
    return counts
