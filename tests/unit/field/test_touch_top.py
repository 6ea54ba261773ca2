"""A recall with ``touch=True`` reinforces its top ``TOUCH_TOP`` hits only (access count, the
write gate's promotion), not every hit returned (issue 17 item 2, docs/DECISIONS.md).

Oracle: the hits' own order, and the same field's state before the recall.
"""

from __future__ import annotations

import chitta
from chitta.field.recall import TOUCH_TOP


def test_only_the_top_hits_are_reinforced(tmp_path):
    with chitta.open(tmp_path / "f", embedder=None) as f:
        ids = f.remember_many([f"the garden note number {i} about tomatoes" for i in range(12)])
        assert all(f.get(i).access_count == 0 for i in ids)
        staged = set(f.core.index.staged_ids())
        assert set(ids) <= staged
        hits = f.recall("garden tomatoes", k=10)
        assert len(hits) == 10
        top = {h.id for h in hits[:TOUCH_TOP]}
        for mid in ids:
            assert f.get(mid).access_count == (1 if mid in top else 0)
        assert set(f.core.index.staged_ids()) == staged - top  # promoted by the recall
        before = {mid: f.get(mid).access_count for mid in ids}
        f.recall("garden tomatoes", k=10, touch=False)
        assert {mid: f.get(mid).access_count for mid in ids} == before
