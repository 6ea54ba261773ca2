"""chitta.organs.index exports what it lists, lazily."""

from __future__ import annotations

from chitta.organs import index


def test_all_matches_exports_and_each_name_resolves() -> None:
    assert sorted(index.__all__) == sorted(index._EXPORTS)
    for name in index.__all__:
        assert getattr(index, name) is not None
