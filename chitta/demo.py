"""``chitta demo``: build a field from the bundled sample notes and show it.

Two writer instances (as two agent windows would) store the notes at the same
time; a third, read-only handle replays the log and shows what the field holds,
and the log is verified. Runs offline in a second or two.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import chitta
from chitta.inspect import verify


def sample_notes() -> list[dict[str, Any]]:
    text = resources.files("chitta").joinpath("data/sample_notes.json").read_text("utf-8")
    notes: list[dict[str, Any]] = json.loads(text)
    return notes


def run_demo(path: str | None, *, as_json: bool, console: Console) -> dict[str, Any]:
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="chitta-demo-")) / "field"
    notes = sample_notes()
    agents = {"claude-code": [n for n in notes if n["source_tool"] != "codex"],
              "codex": [n for n in notes if n["source_tool"] == "codex"]}
    ids: dict[str, list[int]] = {}
    with Progress(console=console, transient=True, disable=as_json) as progress:
        task = progress.add_task("two agents writing", total=len(notes))
        fields = {name: chitta.open(root) for name in agents}

        def write(name: str) -> None:
            ids[name] = []
            for note in agents[name]:
                ids[name].append(fields[name].remember(**note, tags=[note["realm"]]))
                progress.advance(task)

        threads = [threading.Thread(target=write, args=(name,)) for name in agents]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # One agent forgets a note and corrects another; the other agent sees it on refresh.
        fields["codex"].forget(ids["codex"][-1])
        fields["claude-code"].update(ids["claude-code"][0], confidence=0.9)
        seen = fields["claude-code"].refresh()
        for f in fields.values():
            f.close()

    t0 = time.perf_counter()
    with chitta.open(root, read_only=True) as field:
        replay_ms = (time.perf_counter() - t0) * 1000
        stats = field.stats()
        shown = [field.get(i) for i in ids["claude-code"][:3] + ids["codex"][:3]]
    report = verify(root)
    summary = {
        "path": str(root),
        "memories": stats.memories,
        "forgotten": stats.forgotten,
        "instances": stats.instances,
        "segments": stats.segments,
        "bytes": stats.bytes,
        "replay_ms": round(replay_ms, 2),
        "records_seen_by_refresh": seen,
        "verify_damages": len(report["damages"]),
    }
    if as_json:
        console.print_json(data=summary)
        return summary
    table = Table(title="a few memories (replayed)", title_justify="left")
    table.add_column("id", no_wrap=True)
    for name in ("harness", "kind", "realm"):
        table.add_column(name, no_wrap=True)
    table.add_column("text", ratio=1)
    for m in shown:
        table.add_row(str(m.id), m.harness or "", m.kind, m.realm or "", m.text)
    console.print(table)
    console.print(
        f"{stats.memories} memories ({stats.forgotten} forgotten) from {stats.instances} writer instances "
        f"in {stats.segments} segments, {stats.bytes} bytes; replayed in {replay_ms:.1f} ms; "
        f"verify: {'clean' if not report['damages'] else report['damages']}"
    )
    console.print(f"field at {root}  (try: chitta --path {root} dump | head)")
    return summary
