"""The stubs and annotations a type checker sees: ``reveal_type`` through mypy on
snippets that use the public API (the lazy names, the facade's methods, the core
accessor, organ operations, ``_core``'s stub)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def _revealed(tmp_path: Path, code: str) -> list[str]:
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "use.py"
    snippet.write_text(code)
    out, err, _ = api.run(
        [
            "--follow-imports=silent",
            "--cache-dir=/dev/null",
            "--no-incremental",
            "--python-executable",
            sys.executable,
            str(snippet),
        ]
    )
    notes = [
        line.split("Revealed type is ", 1)[1].strip('"')
        for line in out.splitlines()
        if "Revealed type" in line
    ]
    assert notes, out + err
    return notes


@pytest.mark.slow
def test_lazy_names_keep_their_types(tmp_path: Path) -> None:
    notes = _revealed(
        tmp_path,
        "import chitta\nreveal_type(chitta.open)\nreveal_type(chitta.Memory)\n"
        "reveal_type(chitta.connect)\nreveal_type(chitta.__version__)\n",
    )
    assert len(notes) == 4
    assert (
        "chitta.field.facade.Field" in notes[0] and "chitta.model.Memory" in notes[1]
    )  # defined in the facade
    assert "RemoteField" in notes[2] and notes[3] == "str"


@pytest.mark.slow
def test_field_methods_core_and_operations_are_typed(tmp_path: Path) -> None:
    notes = _revealed(
        tmp_path,
        "import chitta\nfrom chitta import _core\nf = chitta.open('/tmp/x')\nreveal_type(f.remember('a'))\nreveal_type(f.recall('a'))\nreveal_type(f.core)\nreveal_type(f.core.index)\nreveal_type(f.organ('graph'))\nreveal_type(f.call('session_tally', session='s'))\nreveal_type(_core.simd_level())\n",
    )
    assert notes[0] == "int"
    assert notes[1] == "list[chitta.recall.hit.Hit]"
    assert notes[2] == "chitta.field.core.FieldCore"
    assert notes[3] == "chitta.organs.recall_index.RecallIndexOrgan"
    assert notes[4] == "chitta.organs.contract.Organ"
    assert notes[5] == "Any"
    assert notes[6] == "str"
