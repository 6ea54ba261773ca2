"""The themes organ: centroid clusters of memories (seed 000, ThemeEvent 20).

Each theme holds a mean embedding ``centroid`` (the mean of its members' unit
vectors, float32), a ``coherence`` score (the mean cosine of its members to the
centroid's direction, which is the centroid's length) and its member set
partitioned by realm (a memory's realm; ``None`` for none). A memory is in at most
one theme: assigning it to another moves it.

The organ only stores what ThemeEvent ops carry (create, update_centroid,
assign_member, remove_member, delete). Who clusters is the maintenance pass
(chitta/policies/themes_pass.py): it assigns new memories to the nearest centroid,
splits oversized themes by k-means (k=2) and merges themes whose centroids are
above 0.9 cosine, logging each change as a ThemeEvent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Maintenance, OrganBase, RestoreContext, SnapshotContext
from chitta.organs.themes_ops import OPERATIONS

__all__ = ["Theme", "ThemesOrgan"]

SIDECAR = "themes.rec"
MAGIC = b"CHITTHEM"
VERSION = 1
MAINTAIN_EVERY_S = 3600.0

F32 = npt.NDArray[np.float32]


class Theme:
    __slots__ = ("centroid", "coherence", "created_ms", "id", "label", "members", "updated_ms")

    def __init__(self, tid: int, centroid: F32, coherence: float, label: str | None, at: int):
        self.id = tid
        self.centroid = centroid
        self.coherence = coherence
        self.label = label
        self.created_ms = self.updated_ms = at
        self.members: dict[str | None, set[int]] = {}

    @property
    def size(self) -> int:
        return sum(len(m) for m in self.members.values())

    def member_ids(self, realm: str | None = None, *, any_realm: bool = True) -> list[int]:
        if any_realm:
            return sorted(m for ms in self.members.values() for m in ms)
        return sorted(self.members.get(realm, ()))


def _vector(raw: bytes | None) -> F32 | None:
    if raw is None or len(raw) == 0 or len(raw) % 4:
        return None
    v = np.frombuffer(raw, "<f4").astype(np.float32)
    return v if bool(np.isfinite(v).all()) else None


def _maintain(organ: ThemesOrgan, ctx: Any) -> int:
    from chitta.policies.themes_pass import run_pass

    return run_pass(organ, ctx)["changes"]


class ThemesOrgan(OrganBase):
    name = "themes"
    handles = frozenset({OpType.ThemeEvent})
    maintenance: tuple[Maintenance, ...] = (
        Maintenance("cluster", _maintain, every_s=MAINTAIN_EVERY_S),
    )
    operations = OPERATIONS

    def __init__(self) -> None:
        self.themes: dict[int, Theme] = {}
        self.deleted: set[int] = set()
        self.member_theme: dict[int, int] = {}  # memory id -> its theme
        self.ignored = 0  # events naming a theme or member this state lacks, or malformed

    # -- applying ----------------------------------------------------------------------

    def apply(self, op: Op) -> None:
        if type(op) is not ops.ThemeEvent:
            return
        event, tid = op.event, op.theme
        theme = self.themes.get(tid)
        if event == "create":
            centroid = _vector(op.centroid)
            if theme is not None or tid in self.deleted or centroid is None:
                self.ignored += 1
                return
            self.themes[tid] = Theme(tid, centroid, float(op.coherence or 0.0), op.label, op.at_ms)
            return
        if theme is None:
            self.ignored += 1
            return
        if event == "update_centroid":
            centroid = _vector(op.centroid)
            if centroid is None and op.centroid is not None:
                self.ignored += 1
                return
            if centroid is not None:
                theme.centroid = centroid
            if op.coherence is not None:
                theme.coherence = float(op.coherence)
            if op.label is not None:
                theme.label = op.label
            theme.updated_ms = op.at_ms
        elif event == "assign_member" and op.member is not None:
            old = self.member_theme.get(op.member)
            if old is not None:
                self._drop(old, op.member)
            theme.members.setdefault(op.realm, set()).add(op.member)
            self.member_theme[op.member] = tid
            theme.updated_ms = op.at_ms
        elif event == "remove_member" and op.member is not None:
            if self.member_theme.get(op.member) != tid:
                self.ignored += 1
                return
            self._drop(tid, op.member)
            theme.updated_ms = op.at_ms
        elif event == "delete":
            for mid in theme.member_ids():
                self.member_theme.pop(mid, None)
            del self.themes[tid]
            self.deleted.add(tid)
        else:
            self.ignored += 1  # an assign/remove without a member

    def _drop(self, tid: int, mid: int) -> None:
        theme = self.themes[tid]
        for realm, ms in list(theme.members.items()):
            if mid in ms:
                ms.discard(mid)
                if not ms:
                    del theme.members[realm]
        self.member_theme.pop(mid, None)

    # -- queries -----------------------------------------------------------------------

    def nearest(
        self, vector: F32, k: int, realm: str | None = None, *, any_realm: bool = True
    ) -> list[tuple[Theme, float]]:
        """The ``k`` themes whose centroids are nearest ``vector`` by cosine (best
        first, then by id); with ``any_realm=False`` only themes with members in ``realm``."""
        q = np.asarray(vector, np.float64)
        qn = float(np.linalg.norm(q))
        scored: list[tuple[float, int, Theme]] = []
        for theme in self.themes.values():
            if theme.centroid.shape != q.shape or not (any_realm or realm in theme.members):
                continue
            c = theme.centroid.astype(np.float64)
            cn = float(np.linalg.norm(c))
            if cn == 0.0 or qn == 0.0:
                continue
            scored.append((float(c @ q) / (cn * qn), theme.id, theme))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [(t, s) for s, _, t in scored[:k]]

    # -- checkpoints -------------------------------------------------------------------

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [
            [
                t.id,
                t.label,
                t.centroid.astype("<f4").tobytes(),
                t.coherence,
                t.created_ms,
                t.updated_ms,
                [
                    [realm, sorted(ms)]
                    for realm, ms in sorted(
                        t.members.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")
                    )
                ],
            ]
            for t in sorted(self.themes.values(), key=lambda t: t.id)
        ]
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"themes": len(rows), "deleted": sorted(self.deleted), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        rows = ctx.read_records(SIDECAR, MAGIC, VERSION) if SIDECAR in ctx.sidecars else []
        for tid, label, centroid, coherence, created, updated, members in rows:
            vec = _vector(centroid)
            if vec is None or int(tid) in self.themes:
                raise ValueError("themes: a sidecar row has a bad centroid or a repeated id")
            theme = Theme(int(tid), vec, float(coherence), label, int(created))
            theme.updated_ms = int(updated)
            for realm, ids in members:
                theme.members[realm] = {int(m) for m in ids}
                for m in ids:
                    if int(m) in self.member_theme:
                        raise ValueError("themes: a memory is in two themes")
                    self.member_theme[int(m)] = theme.id
            self.themes[theme.id] = theme
        if len(self.themes) != int(state["themes"]):
            raise ValueError("themes: the sidecar and the state disagree")
        self.deleted = {int(t) for t in state["deleted"]}
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        return {
            "themes": len(self.themes),
            "members": len(self.member_theme),
            "deleted": len(self.deleted),
            "ignored": self.ignored,
        }
