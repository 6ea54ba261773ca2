"""The themes organ and its clustering pass against numpy oracles.

The oracles are written apart from chitta/policies/themes_pass.py: the assignment
is re-run as a plain loop over numpy arrays; the k=2 split is checked against the
best of all 2-partitions found by brute force (well-separated data) and against the
fixed-point property of Lloyd's algorithm (random data); merging is re-run as a
naive "merge the closest pair above 0.9" loop; coherence is the mean cosine of the
members to the centroid's direction, computed from the member vectors.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta import ops
from chitta.errors import InvalidArgument
from chitta.organs.themes import ThemesOrgan
from chitta.policies.themes_pass import kmeans2

DIM = 12
T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def unit(x: Any) -> Any:
    x = np.asarray(x, np.float64)
    return x / np.linalg.norm(x)


def organ(f: chitta.Field) -> ThemesOrgan:
    o = f.core.registry.organ("themes")
    assert isinstance(o, ThemesOrgan)
    return o


def partition(f: chitta.Field) -> set[frozenset[int]]:
    return {frozenset(t.member_ids()) for t in organ(f).themes.values()}


def put(f: chitta.Field, vectors: Any, realm: Any = None) -> list[int]:
    # Distinct texts: the curated layer's maintenance folds memories of equal text.
    n = len(f.core.memories)
    return [
        f.remember(f"memory {n + i}", embedding=np.asarray(v, np.float32), realm=realm)
        for i, v in enumerate(vectors)
    ]


def stored(f: chitta.Field, mid: int) -> Any:
    m = f.get(mid)
    assert m is not None and m.embedding is not None
    return unit(m.embedding)


@pytest.fixture
def field(tmp_path: Path) -> Any:
    clock = Clock()
    with chitta.open(tmp_path / "f", embedder=None, clock=clock) as f:
        yield f, clock


def blobs(rng: Any, centres: int, each: int, spread: float) -> Any:
    c = rng.standard_normal((centres, DIM))
    return np.concatenate(
        [c[i] + spread * rng.standard_normal((each, DIM)) for i in range(centres)]
    )


# -- the oracles ------------------------------------------------------------------------


def oracle_assign(vectors: list[Any], assign_min: float) -> list[list[int]]:
    """Sequential nearest-centroid assignment with a running mean (indexes into vectors)."""
    groups: list[list[int]] = []
    sums: list[Any] = []
    for i, v in enumerate(vectors):
        u = unit(v)
        cos = [float(unit(s) @ u) for s in sums]
        j = int(np.argmax(cos)) if cos else -1
        if j < 0 or cos[j] < assign_min:
            groups.append([i])
            sums.append(u.copy())
        else:
            groups[j].append(i)
            sums[j] = sums[j] + u
    return groups


def best_two_partition(x: Any) -> frozenset[frozenset[int]]:
    n = len(x)
    best, best_sse = None, np.inf
    for mask in range(1, 2 ** (n - 1)):
        a = [i for i in range(n) if mask >> i & 1]
        b = [i for i in range(n) if not mask >> i & 1]
        sse = sum(((x[p] - x[p].mean(axis=0)) ** 2).sum() for p in (a, b))
        if sse < best_sse:
            best, best_sse = (a, b), sse
    assert best is not None
    return frozenset(frozenset(p) for p in best)


def oracle_merge(groups: list[list[Any]], above: float, cap: int) -> list[list[int]]:
    """Merge the closest pair of group centroids above ``above`` until none is left."""
    members = [list(range(len(g))) for g in groups]
    ids = [[(gi, k) for k in range(len(g))] for gi, g in enumerate(groups)]
    vecs = [[unit(v) for v in g] for g in groups]
    del members
    while True:
        cents = [np.mean(v, axis=0) for v in vecs]
        best = None
        for i, j in itertools.combinations(range(len(vecs)), 2):
            if len(vecs[i]) + len(vecs[j]) > cap:
                continue
            cos = float(unit(cents[i]) @ unit(cents[j]))
            if cos > above and (best is None or cos > best[0]):
                best = (cos, i, j)
        if best is None:
            return [[gi * 1000 + k for gi, k in g] for g in ids]
        _, i, j = best
        vecs[i] += vecs[j]
        ids[i] += ids[j]
        del vecs[j], ids[j]


# -- the tests --------------------------------------------------------------------------


def test_assignment_and_centroids_match_the_oracle(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(1)
    x = blobs(rng, 4, 10, 0.35)[rng.permutation(40)]
    ids = put(f, x)
    out = f.call("themes_cluster", max_members=1000, merge_above=1.0)
    assert out["split"] == 0 and out["merged"] == 0
    vectors = [stored(f, mid) for mid in ids]
    want = {frozenset(ids[i] for i in g) for g in oracle_assign(vectors, 0.5)}
    assert partition(f) == want
    for theme in organ(f).themes.values():
        members = np.stack([stored(f, m) for m in theme.member_ids()])
        mean = members.mean(axis=0)
        np.testing.assert_allclose(theme.centroid, mean, atol=1e-5)
        coherence = float(np.mean(members @ unit(mean)))  # mean cosine to the direction
        assert theme.coherence == pytest.approx(coherence, abs=1e-5)


def test_split_finds_the_best_two_partition(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(2)
    x = blobs(rng, 2, 6, 0.3)
    ids = put(f, x)
    f.call("themes_cluster", assign_min=-1.0, max_members=100)  # one theme of 12
    assert partition(f) == {frozenset(ids)}
    f.call("themes_cluster", max_members=11, merge_above=1.0)
    vectors = np.stack([stored(f, m) for m in ids])
    want = {frozenset(ids[i] for i in part) for part in best_two_partition(vectors)}
    assert partition(f) == want


@pytest.mark.parametrize("seed", range(5))
def test_kmeans2_ends_at_a_lloyd_fixed_point(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.stack([unit(v) for v in rng.standard_normal((30, DIM))])
    labels = kmeans2(x)
    assert set(labels.tolist()) == {0, 1}
    means = [x[labels == k].mean(axis=0) for k in (0, 1)]
    d = np.stack([((x - m) ** 2).sum(axis=1) for m in means], axis=1)
    assert (d[np.arange(30), labels] <= d.min(axis=1) + 1e-12).all()


def test_oversized_themes_are_split_until_none_is(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(3)
    put(f, blobs(rng, 4, 8, 0.2))
    f.call("themes_cluster", assign_min=-1.0, max_members=1000)
    assert len(organ(f).themes) == 1
    f.call("themes_cluster", max_members=8, merge_above=1.0)
    sizes = sorted(t.size for t in organ(f).themes.values())
    assert sum(sizes) == 32 and max(sizes) <= 8


def test_merge_matches_the_oracle_and_leaves_no_pair_above(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(4)
    x = blobs(rng, 3, 5, 0.05)
    ids = put(f, x)
    f.call("themes_cluster", assign_min=1.0, merge_above=1.0)  # every memory its own theme
    assert len(organ(f).themes) == 15
    f.call("themes_cluster", merge_above=0.9, max_members=4)
    vectors = [stored(f, m) for m in ids]
    want = oracle_merge([[v] for v in vectors], 0.9, 4)
    assert partition(f) == {frozenset(ids[i // 1000] for i in g) for g in want}
    themes = list(organ(f).themes.values())
    for a, b in itertools.combinations(themes, 2):
        if a.size + b.size <= 4:
            assert float(unit(a.centroid) @ unit(b.centroid)) <= 0.9


def test_a_split_is_not_undone_by_the_merge(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(5)
    put(f, 1.0 + 0.01 * rng.standard_normal((10, DIM)))  # one tight theme of 10
    out = f.call("themes_cluster", max_members=6)
    assert out["split"] > 0
    a, b = organ(f).themes.values()
    assert a.size + b.size == 10 and max(a.size, b.size) <= 6
    assert float(unit(a.centroid) @ unit(b.centroid)) > 0.9  # only the size cap kept them apart


def test_the_clock_decides_when_maintenance_clusters(field: Any) -> None:
    f, clock = field
    rng = np.random.default_rng(6)
    first = put(f, blobs(rng, 2, 5, 0.1))
    assert "themes.cluster" in f.maintain()
    assert set(organ(f).member_theme) == set(first)
    clock.now += 60
    later = put(f, blobs(rng, 1, 3, 0.1))
    assert "themes.cluster" not in f.maintain()  # the hourly pass ran a minute ago
    assert not set(later) & set(organ(f).member_theme)
    clock.now += 3600
    assert f.maintain()["themes.cluster"] > 0
    assert set(organ(f).member_theme) == set(first) | set(later)


def test_maintenance_splits_and_merges_on_its_clock(field: Any) -> None:
    f, clock = field
    rng = np.random.default_rng(11)
    e = np.eye(DIM)
    big = put(f, e[0] + 0.05 * rng.standard_normal((70, DIM)))
    f.maintain()  # assigns all 70 to one theme, then splits it: 70 > 64
    sizes = sorted(t.size for t in organ(f).themes.values())
    assert sum(sizes) == 70 and len(sizes) == 2 and max(sizes) <= 64
    small = put(f, e[1] + 0.01 * rng.standard_normal((6, DIM)))
    f.call("themes_cluster", assign_min=1.0, merge_above=1.0)  # six one-member themes
    assert {frozenset([m]) for m in small} <= partition(f)
    clock.now += 60
    assert "themes.cluster" not in f.maintain()  # not due: nothing merges yet
    assert {frozenset([m]) for m in small} <= partition(f)
    clock.now += 3600
    f.maintain()
    assert frozenset(small) in partition(f)  # merged above 0.9 into one theme
    assert sum(len(p) for p in partition(f)) == len(big) + len(small)


def test_themes_query_ranks_by_cosine(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(7)
    put(f, blobs(rng, 6, 4, 0.1))
    f.call("themes_cluster")
    q = rng.standard_normal(DIM)
    got = f.call("themes", vector=q.tolist(), k=3)["themes"]
    themes = organ(f).themes.values()
    ranked = sorted(themes, key=lambda t: (-float(unit(t.centroid) @ unit(q)), t.id))[:3]
    assert [r["theme"] for r in got] == [t.id for t in ranked]
    for r, t in zip(got, ranked):
        assert r["score"] == pytest.approx(float(unit(t.centroid) @ unit(q)), abs=1e-6)
        assert r["members"] == t.member_ids() and r["size"] == t.size


def test_members_are_partitioned_by_realm(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(8)
    x = blobs(rng, 2, 6, 0.05)
    a = put(f, x[:3], realm="work") + put(f, x[6:9], realm="work")
    b = put(f, x[3:6], realm="home")
    f.call("themes_cluster")
    theme = organ(f).themes[organ(f).member_theme[a[0]]]
    assert theme.members == {"work": set(a[:3]), "home": set(b)}
    got = f.call("themes", vector=x[0].tolist(), k=5, realm="home")["themes"]
    assert [r["theme"] for r in got] == [theme.id]  # the other theme has no "home" member
    assert got[0]["members"] == sorted(b) and got[0]["realms"] == {"home": 3, "work": 3}


def test_forgotten_members_leave_and_the_centroid_follows(field: Any) -> None:
    f, _ = field
    rng = np.random.default_rng(9)
    ids = put(f, blobs(rng, 1, 6, 0.2))
    f.call("themes_cluster")
    f.forget(ids[0])
    f.forget(ids[1])
    out = f.call("themes_cluster")
    assert out["pruned"] == 3  # two removals and one new centroid
    (theme,) = organ(f).themes.values()
    assert theme.member_ids() == sorted(ids[2:])
    mean = np.mean([stored(f, m) for m in ids[2:]], axis=0)
    np.testing.assert_allclose(theme.centroid, mean, atol=1e-5)


def test_reopen_and_checkpoint_give_the_same_themes(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    root = tmp_path / "f"

    def state(f: chitta.Field) -> Any:
        return sorted(
            (t.id, t.label, t.centroid.tobytes(), t.coherence, sorted(t.members.items(), key=str))
            for t in organ(f).themes.values()
        )

    with chitta.open(root, embedder=None) as f:
        put(f, blobs(rng, 3, 8, 0.3), realm="r")
        f.call("themes_cluster", max_members=6)
        before = state(f)
        f.checkpoint()
    with chitta.open(root, embedder=None) as f:
        assert state(f) == before
    with chitta.open(root, embedder=None, load_checkpoint=False) as f:
        assert state(f) == before


def test_events_naming_nothing_are_counted_not_raised() -> None:
    o = ThemesOrgan()
    c = np.ones(4, "<f4").tobytes()
    o.apply(ops.ThemeEvent(event="assign_member", theme=9, at_ms=1, member=1))
    o.apply(ops.ThemeEvent(event="create", theme=1, at_ms=1, centroid=b"\x00\x01"))  # not f32s
    o.apply(ops.ThemeEvent(event="create", theme=2, at_ms=1, centroid=c))
    o.apply(ops.ThemeEvent(event="create", theme=2, at_ms=2, centroid=c))  # twice
    o.apply(ops.ThemeEvent(event="remove_member", theme=2, at_ms=2, member=5))
    o.apply(ops.ThemeEvent(event="delete", theme=2, at_ms=3))
    o.apply(ops.ThemeEvent(event="create", theme=2, at_ms=4, centroid=c))  # deleted for good
    assert o.stats() == {"themes": 0, "members": 0, "deleted": 1, "ignored": 5}


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("themes", {}),
        ("themes", {"query": "x", "vector": [1.0]}),
        ("themes", {"query": "build cache"}),  # no embedder to embed it
        ("themes", {"vector": []}),
        ("themes", {"vector": [1.0, "a"]}),
        ("themes", {"vector": [1.0], "k": 0}),
        ("themes", {"vector": [1.0], "realm": ""}),
        ("theme_members", {"theme": 12345}),
        ("theme_members", {"theme": -1}),
        ("themes_cluster", {"max_members": 1}),
        ("themes_cluster", {"assign_min": 2}),
        ("themes_cluster", {"merge_above": "high"}),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    field: Any, name: str, arguments: dict[str, Any]
) -> None:
    f, _ = field
    put(f, np.eye(DIM)[:3])
    f.call("themes_cluster")
    before = (f.stats().records_applied, organ(f).stats())
    with pytest.raises(InvalidArgument):
        f.call(name, **arguments)
    assert (f.stats().records_applied, organ(f).stats()) == before
