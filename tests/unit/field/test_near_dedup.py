"""The incremental near-duplicate pass in maintain() (chitta/field/near_dedup.py): the
same merges as the all-pairs dedup_pass() (the oracle, a blocked exact scan), progress
through a field in batches, only new memories examined once caught up, late arrivals
within the slack, everything logged and replayed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import chitta
from chitta.field import near_dedup

DIM = 32


def _corpus(seed: int) -> list[tuple[str, str | None, np.ndarray]]:
    """Groups of near copies (cosine ~0.99 within a group, well apart between groups),
    some sharing a vector but not their numbers, some in another realm."""
    rng = np.random.default_rng(seed)
    items: list[tuple[str, str | None, np.ndarray]] = []
    for g in range(12):
        base = rng.normal(size=DIM)
        for j in range(1 + g % 4):
            vec = base + rng.normal(scale=0.04 * (j + 1), size=DIM)
            tail = ("", " again", " once more", " as well")[j]  # no two texts alike
            items.append((f"note about topic {chr(97 + g)} version{tail}", None, vec))
        if g % 3 == 0:
            items.append((f"port {8000 + g} for topic {chr(97 + g)}", None, base))  # other tokens
        if g % 5 == 0:
            items.append((f"note about topic {chr(97 + g)} version", "elsewhere", base))
    for _ in range(20):
        items.append(("a lone thought", None, rng.normal(size=DIM)))
    order = rng.permutation(len(items))
    return [items[i] for i in order]


def _fill(path: Path, items: list[tuple[str, str | None, np.ndarray]], t0: float) -> list[int]:
    clock = iter(t0 + i for i in range(10_000))
    with chitta.open(path, embedder=None, clock=lambda: next(clock)) as f:
        return [
            f.remember(
                f"{text} #{i}" if text == "a lone thought" else text,
                realm=realm,
                embedding=vec.astype(np.float32),
            )
            for i, (text, realm, vec) in enumerate(items)
        ]


def _state(path: Path) -> dict[int, tuple[int, ...]]:
    with chitta.open(path, read_only=True, embedder=None) as f:
        return {m.id: tuple((m.meta or {}).get("merged_from", ())) for m in f.memories()}


def test_same_merges_as_the_all_pairs_scan(tmp_path: Path) -> None:
    items = _corpus(1)
    ids_a = _fill(tmp_path / "a", items, 1_700_000_000.0)
    ids_b = _fill(tmp_path / "b", items, 1_700_000_000.0)
    with chitta.open(tmp_path / "a", embedder=None) as f:
        report = f.dedup_pass()
    with chitta.open(tmp_path / "b", embedder=None) as f:
        merged = near_dedup.near_dedup_pass(f._core)
    assert report.exact == 0 and report.near == merged > 10
    # ids differ between the two fields: compare by position in the corpus
    pos_a = {mid: i for i, mid in enumerate(ids_a)}
    pos_b = {mid: i for i, mid in enumerate(ids_b)}

    def by_position(state: dict[int, tuple[int, ...]], pos: dict[int, int]) -> set[tuple[int, ...]]:
        return {(pos[k], *sorted(pos[x] for x in v)) for k, v in state.items()}

    assert by_position(_state(tmp_path / "a"), pos_a) == by_position(_state(tmp_path / "b"), pos_b)


def test_batches_progress_then_only_new_memories_are_examined(tmp_path: Path) -> None:
    items = _corpus(2)
    _fill(tmp_path / "a", items, 1_700_000_000.0)
    _fill(tmp_path / "b", items, 1_700_000_000.0)
    with chitta.open(tmp_path / "a", embedder=None) as f:
        oracle = f.dedup_pass().near
    with chitta.open(tmp_path / "b", embedder=None, clock=lambda: 1_800_000_000.0) as f:
        last_written = max(m.written_ms for m in f.memories())
        total, marks = 0, []
        for _ in range(len(items) // 10 + 2):
            total += near_dedup.near_dedup_pass(f._core, batch=10)
            marks.append(f._core.settings.get(near_dedup.SETTING))
        assert total == oracle
        assert marks == sorted(marks) and len(set(marks)) > 4
        # as far as the newest memory still live (a newer one may have been merged away)
        assert max(m.written_ms for m in f.memories()) <= marks[-1] <= last_written
        records = f.stats().bytes
        assert near_dedup.near_dedup_pass(f._core, batch=10) == 0  # caught up: nothing to log
        assert f.stats().bytes == records
    before = _state(tmp_path / "b")
    with chitta.open(tmp_path / "b", embedder=None, clock=lambda: 1_800_000_001.0) as f:
        assert near_dedup.near_dedup_pass(f._core) == 0  # the watermark was replayed
        old = next(m for m in f.memories() if m.text.startswith("note about"))
        vec = f._core.index.vector(old.id)
        assert vec is not None
        kept = old.id
        new = f.remember(old.text + " indeed", realm=old.realm, embedding=vec)
        assert near_dedup.near_dedup_pass(f._core) == 1
        assert new not in f
        assert new in (f.get(kept).meta or {})["merged_from"]
    assert len(_state(tmp_path / "b")) == len(before)


def test_a_late_arrival_within_the_slack_is_found(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vec = rng.normal(size=DIM).astype(np.float32)
    t = 1_700_000_000.0
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: t) as f:
        first = f.remember("the deploy key lives in the vault", embedding=vec)
        f.remember("something else entirely", embedding=rng.normal(size=DIM).astype(np.float32))
        assert near_dedup.near_dedup_pass(f._core) == 0
    # another writer whose clock is two hours behind: its memory is older than the watermark
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: t - 7200) as f:
        late = f.remember("the deploy key lives in the vault!", embedding=vec * 1.01)
        stale = near_dedup.SLACK_MS // 1000 + 10
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: t + 60) as f:
        assert near_dedup.near_dedup_pass(f._core) == 1
        assert first not in f and late in f  # the keeper: the one created first (by its clock)
    # a pair that arrives later than the slack is left to dedup_pass()
    other = rng.normal(size=DIM).astype(np.float32)
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: t - stale) as f:
        f.remember("the build cache is on the nas", embedding=other)
        f.remember("the build cache is on the nas!", embedding=other * 1.01)
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: t + 120) as f:
        assert near_dedup.near_dedup_pass(f._core) == 0
        assert f.dedup_pass().near == 1


def test_maintain_runs_it_hourly(tmp_path: Path) -> None:
    now = [1_700_000_000.0]
    items = _corpus(4)
    _fill(tmp_path / "f", items, now[0])
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: now[0] + 10_000) as f:
        first = f.maintain()["near_deduplicated"]
        assert first is not None and first > 10
        assert "near_deduplicated" not in f.maintain()  # within the hour
        now[0] += 3600
        assert f.maintain()["near_deduplicated"] == 0
