"""Kinds are inferred on every write path (issue 20 item 1): the native plain entry,
remember_many, the conversation importer, the CLI and the daemon. The oracle is
chitta.policies.kinds.infer_kind on the same text."""

from __future__ import annotations

from pathlib import Path

from clitools import run
from daemontools import DaemonProcess, child_env

import chitta
from chitta.field.importers import Turn, import_conversation
from chitta.policies.kinds import infer_kind

TEXTS = [
    "Decision: we use postgres for billing",
    "I think the cache is cold after deploys",
    "the build takes four minutes",
    "def load(path): reads the config",
]


def _kinds(field: chitta.Field, ids: list[int]) -> list[str]:
    return [field.get(i).kind for i in ids]


def test_the_native_plain_entry_infers(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        assert type(f.__dict__["remember"]).__name__ == "RememberEntry"  # the native entry
        ids = [f.remember(t) for t in TEXTS]
        assert _kinds(f, ids) == [infer_kind(t) for t in TEXTS]
        assert len(set(_kinds(f, ids))) == 4
        explicit = f.remember(TEXTS[0], kind="observation")
        assert f.get(explicit).kind == "observation"  # an explicit kind wins


def test_remember_many_and_the_importer_infer(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        ids = f.remember_many([{"text": t} for t in TEXTS])
        assert _kinds(f, ids) == [infer_kind(t) for t in TEXTS]
        turns = [Turn("Ana", t, "s1", 1_780_000_000.0 + i) for i, t in enumerate(TEXTS)]
        imported = import_conversation(f, turns)
        assert _kinds(f, imported) == [infer_kind(f.get(i).text) for i in imported]
        assert len(set(_kinds(f, imported))) > 1  # not all the default
        fixed = import_conversation(f, turns, kind="observation")
        assert set(_kinds(f, fixed)) == {"observation"}


def test_the_cli_and_the_daemon_infer(tmp_path: Path) -> None:
    field = tmp_path / "f"
    out = run("--path", str(field), "remember", TEXTS[0], "--json")
    assert out.returncode == 0, out.stderr
    thought = run("--path", str(field), "remember", TEXTS[0], "--kind", "thought", "--json")
    assert thought.returncode == 0, thought.stderr
    d = DaemonProcess(field, tmp_path / "d.sock", env=child_env())
    try:
        with chitta.connect(tmp_path / "d.sock", timeout=30) as remote:
            mid = remote.remember(TEXTS[1])
            assert remote.get(mid).kind == "thought"
            kinds = sorted(remote.get(i).kind for i in remote.ids())
    finally:
        d.close()
    assert kinds == ["decision", "thought", "thought"]
