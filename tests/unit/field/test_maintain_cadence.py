"""maintain() curates on its cadence, and recall never returns an expired memory."""

from __future__ import annotations

from pathlib import Path

import chitta

T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


def test_recall_hides_expired_before_curation(tmp_path: Path) -> None:
    clock = Clock()
    with chitta.open(tmp_path / "f", embedder=None, clock=clock) as f:
        gone = [f.remember(f"the promo code {i} is SPRING", meta={"expires_at": T0 + 60})
                for i in range(12)]  # fmt: skip
        keep = f.remember("the promo code list moved to the wiki")
        assert len(f.recall("promo code", k=5, touch=False)) == 5
        clock.t += 120
        hits = f.recall("promo code", k=5, touch=False)
        assert [h.id for h in hits] == [keep]  # all 12 expired ones skipped, the live one found
        assert all(g in f for g in gone)  # not yet forgotten: only hidden


def test_maintain_curates_hourly(tmp_path: Path) -> None:
    clock = Clock()
    with chitta.open(tmp_path / "f", embedder=None, clock=clock) as f:
        a = f.remember("expires soon", meta={"expires_at": T0 + 10})
        f.recall("expires soon")  # recalled: the write gate keeps it
        clock.t += 20
        out = f.maintain()
        assert out["curated_expired"] == 1 and a not in f
        b = f.remember("expires later", meta={"expires_at": T0 + 100})
        f.recall("expires later")
        clock.t += 200
        assert "curated_expired" not in f.maintain()  # not an hour yet
        assert b in f
        clock.t += 3600
        assert f.maintain()["curated_expired"] == 1 and b not in f
        f.call("set_maintenance_every", name="field.curate", every_s=0)
        assert "curated_expired" in f.maintain()  # the setting: every call
