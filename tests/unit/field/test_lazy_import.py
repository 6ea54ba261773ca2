"""``import chitta`` is cheap: public names load on first use (PEP 562) and stay typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import chitta


def _fresh(code: str, tmp_path: Path) -> str:
    # cwd outside the repo root, so the installed (compiled) package is imported
    return subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    ).stdout


def test_import_chitta_loads_only_the_errors(tmp_path: Path) -> None:
    out = _fresh("import json, sys, chitta; print(json.dumps(sorted(sys.modules)))", tmp_path)
    loaded = set(json.loads(out))
    assert {m for m in loaded if m.startswith("chitta")} == {"chitta", "chitta.errors"}
    assert not {"numpy", "msgspec", "click", "rich", "mcp", "chitta._core"} & loaded


def test_every_public_name_resolves(tmp_path: Path) -> None:
    out = _fresh(
        "import chitta; print(sorted(n for n in chitta.__all__ if getattr(chitta, n) is None))",
        tmp_path,
    )
    assert out.strip() == "[]"
    star = _fresh(
        "from chitta import *; print(Field.__name__, open.__module__, ops.__name__, __version__ != '')",
        tmp_path,
    )
    assert star.split() == ["Field", "chitta.field", "chitta.ops", "True"]
    assert set(chitta.__all__) <= set(dir(chitta))
    assert chitta.Field is chitta.field.Field and chitta.open is chitta.field.open  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        chitta.nope  # type: ignore[attr-defined]  # noqa: B018
