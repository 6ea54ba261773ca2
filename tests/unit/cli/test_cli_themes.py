"""`chitta themes ...` and `chitta kg extract | extraction` run the organs' operations
(real `chitta` processes; the same operations through `Field.call` are the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from clitools import run

import chitta
from chitta.ops import json_ids


def test_extraction_commands_agree_with_the_operations(tmp_path: Path) -> None:
    root = str(tmp_path / "f")
    r = run("--path", root, "kg", "extraction", "on")
    assert r.returncode == 0 and "extraction on" in r.stdout, r.stderr
    text = "Jeff moved to Berlin and uses Rust."
    by_cli = json.loads(run("--path", root, "kg", "extract", text, "--json").stdout)
    with chitta.open(root, embedder=None) as f:
        assert by_cli == f.call("kg_extract", text=text)
        f.remember(text)  # the setting the command logged is on for this handle too
        assert f.call("kg_query", subject="Jeff")["total"] == 3
    assert run("--path", root, "kg", "extraction", "maybe").returncode == 2


def test_themes_commands_agree_with_the_operations(tmp_path: Path) -> None:
    root = str(tmp_path / "f")
    rng = np.random.default_rng(0)
    with chitta.open(root, embedder=None) as f:
        for i in range(12):
            v = (np.eye(8)[i % 2] + 0.05 * rng.standard_normal(8)).astype(np.float32)
            f.remember(f"note {i}", embedding=v, realm="r" if i % 3 else None)
    r = run("--path", root, "themes", "cluster", "--max-members", "4", "--json")
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)
    assert counts["assigned"] > 0 and counts["split"] > 0
    with chitta.open(root, embedder=None, read_only=True) as f:
        o = f.core.registry.organ("themes")
        tid = min(o.themes)  # type: ignore[attr-defined]
        want = f.call("theme_members", theme=tid)
    shown = run("--path", root, "themes", "show", str(tid), "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout) == json.loads(json_ids.dumps(want))
    bad = run("--path", root, "themes", "show", "12345")
    assert bad.returncode != 0 and "no theme 12345" in bad.stderr
