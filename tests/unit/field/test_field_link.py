"""Field.link: a typed AddAssocEdge op between two live memories."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import chitta
from chitta import inspect as cinspect


def test_link_logs_one_edge_that_survives_reopen(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f") as field:
        a, b = field.remember("a"), field.remember("b")
        field.link(a, b, "Supports", 0.5)
        assert field.core.graph.has_edge(a, b, "Supports")
    records = [r for r in cinspect.iter_records(tmp_path / "f") if r["op"] == "AddAssocEdge"]
    assert len(records) == 1
    with chitta.open(tmp_path / "f", read_only=True) as again:
        assert again.core.graph.has_edge(a, b, "Supports")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("A", "B", "Loves"), chitta.InvalidArgument),
        (("A", "A"), chitta.InvalidArgument),
        (("A", 12345), chitta.NotFound),
        (("A", "B", "RelatedTo", math.nan), chitta.InvalidArgument),
        (("A", "B", "RelatedTo", 0.0), chitta.InvalidArgument),
        (("A", "B", "RelatedTo", "1"), chitta.InvalidArgument),
        (("A", -1), chitta.InvalidArgument),
    ],
)
def test_bad_link_raises_and_changes_nothing(
    tmp_path: Path, args: tuple[object, ...], error: type
) -> None:
    with chitta.open(tmp_path / "f") as field:
        ids = {"A": field.remember("a"), "B": field.remember("b")}
        before = field.stats().max_seqno
        with pytest.raises(error):
            field.link(*(ids.get(x, x) if isinstance(x, str) else x for x in args))
        assert field.stats().max_seqno == before


def test_link_on_a_forgotten_memory_is_not_found(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f") as field:
        a, b = field.remember("a"), field.remember("b")
        field.forget(b)
        with pytest.raises(chitta.NotFound):
            field.link(a, b)
