"""``chitta demo``: ingest a bundled team chat, then ask it questions.

The bundled conversation (``chitta/cli/data/tidepool_chat.json``, written for
chitta) is a fictional team of two people and a coding agent building a booking
service over ten dated sessions. Two writer instances store it at the same time
(the people's turns and the agent's turns, as two windows would); a read-only
handle then recalls the top hits for a handful of questions whose answering
turn is known, and shows each hit's score and the lanes that found it.

Offline: the default embedder is the packaged ONNX MiniLM model when installed,
else the model-free hashing embedder; the output says which.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from contextlib import nullcontext
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import chitta
from chitta.encode.field_encoding import resolve_embedder
from chitta.errors import InvalidArgument
from chitta.field.inspect import verify
from chitta.recall.hit import Hit

DATA = "cli/data/tidepool_chat.json"
TOP_K = 5
CHUNK = 16  # turns per remember_many call (one embedding batch, one atomic record)


def load_conversation() -> dict[str, Any]:
    """The bundled conversation: people, sessions, turns, and questions with their answering turn."""
    text = resources.files("chitta").joinpath(DATA).read_text("utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def _parse_at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def turn_items(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``remember`` arguments for every turn, split by writer ("people", "agent")."""
    writer_of = {p["name"]: p["writer"] for p in doc["people"]}
    out: dict[str, list[dict[str, Any]]] = {"people": [], "agent": []}
    for t in doc["turns"]:
        writer = writer_of[t["speaker"]]
        out[writer].append(
            {
                "text": f"{t['speaker']}: {t['text']}",
                "realm": doc["realm"],
                "session": t["session"],
                "source_tool": "claude-code" if writer == "agent" else None,
                "tags": [t["speaker"].lower()],
                "meta": {"turn": t["id"], "speaker": t["speaker"]},
                "at": _parse_at(t["at"]),
            }
        )
    return out


def _describe(embedder: Any) -> str:
    if embedder is None:
        return "none (keyword lanes only; CHITTA_EMBEDDER=none)"
    name = str(embedder.name)
    if name.startswith("hashing"):
        return f"{name} (model-free fallback; pip install 'chitta[embed]' for the MiniLM model)"
    return f"{name} (ONNX model, offline)"


def _ingest(
    root: Path, embedder: Any, items: dict[str, list[dict[str, Any]]], console: Console, quiet: bool
) -> int:
    total = sum(len(v) for v in items.values())
    fields = {name: chitta.open(root, embedder=embedder) for name in items}
    failures: list[BaseException] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=console, transient=True, disable=quiet) as progress:
            task = progress.add_task("two writers ingesting the chat", total=total)

            def write(name: str) -> None:
                try:
                    rows = items[name]
                    for i in range(0, len(rows), CHUNK):
                        fields[name].remember_many(rows[i : i + CHUNK])
                        progress.advance(task, len(rows[i : i + CHUNK]))
                except BaseException as exc:  # noqa: BLE001 (re-raised in the main thread)
                    failures.append(exc)

            threads = [threading.Thread(target=write, args=(name,)) for name in items]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        for f in fields.values():
            f.close()
    if failures:
        raise failures[0]
    return total


def _lanes(hit: Hit) -> str:
    return " ".join(
        f"{lane}:{rank}" for lane, rank in sorted(hit.lanes.items(), key=lambda kv: kv[1])
    )


def _hit_dict(rank: int, hit: Hit) -> dict[str, Any]:
    meta = hit.memory.meta or {}
    return {
        "rank": rank,
        "id": hit.id,
        "turn": meta.get("turn"),
        "score": round(hit.score, 6),
        "lanes": dict(hit.lanes),
        "date": hit.memory.created_at.isoformat(),
        "text": hit.text,
    }


def _question_table(q: dict[str, Any], hits: list[Hit]) -> Table:
    table = Table(title=f"Q: {q['question']}", title_justify="left", title_style="bold")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("lanes")
    table.add_column("date", no_wrap=True)
    table.add_column("text", ratio=1, min_width=32)
    for rank, hit in enumerate(hits, 1):
        answer = (hit.memory.meta or {}).get("turn") == q["answer"]
        table.add_row(
            str(rank),
            f"{hit.score:.4f}",
            _lanes(hit),
            hit.memory.created_at.strftime("%Y-%m-%d"),
            hit.text + ("  [green]<- answer[/green]" if answer else ""),
            style="bold" if answer else None,
        )
    return table


def run_demo(path: str | None, *, as_json: bool, console: Console) -> dict[str, Any]:
    """Build the demo field at ``path`` (default: a new temporary directory), ask
    the bundled questions, print tables (or JSON), and return the summary."""
    t_start = time.perf_counter()
    root = Path(path) if path else Path(tempfile.mkdtemp(prefix="chitta-demo-")) / "field"
    if (root / "segments").exists():
        raise InvalidArgument(f"{root} already holds a field; give the demo a new --path")
    doc = load_conversation()
    embedder = resolve_embedder("auto", None)  # the default model; $CHITTA_EMBEDDER overrides
    if not as_json:
        console.print(f"[bold]embedder[/bold]: {_describe(embedder)}")
    t0 = time.perf_counter()
    if embedder is not None:
        with (
            console.status("loading the embedder", spinner="dots") if not as_json else nullcontext()
        ):
            embedder.embed(["warm up"])
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    n = _ingest(root, embedder, turn_items(doc), console, quiet=as_json)
    ingest_s = time.perf_counter() - t0

    answers: list[dict[str, Any]] = []
    with chitta.open(root, read_only=True, embedder=embedder) as field:
        stats = field.stats()
        if not as_json:
            console.print(
                f"ingested {n} turns from {len(doc['sessions'])} sessions in {ingest_s:.1f} s "
                f"({stats.instances} writer instances, {stats.segments} segments, {stats.bytes} bytes)\n"
            )
        for q in doc["questions"]:
            t0 = time.perf_counter()
            hits = field.recall(q["question"], k=TOP_K)
            ms = (time.perf_counter() - t0) * 1000
            turns = [(h.memory.meta or {}).get("turn") for h in hits]
            answers.append(
                {
                    "question": q["question"],
                    "answer_turn": q["answer"],
                    "answer_rank": turns.index(q["answer"]) + 1 if q["answer"] in turns else None,
                    "recall_ms": round(ms, 2),
                    "hits": [_hit_dict(i, h) for i, h in enumerate(hits, 1)],
                }
            )
            if not as_json:
                console.print(_question_table(q, hits))
    report = verify(root)
    summary = {
        "path": str(root),
        "embedder": None if embedder is None else embedder.name,
        "turns": n,
        "sessions": len(doc["sessions"]),
        "memories": stats.memories,
        "instances": stats.instances,
        "segments": stats.segments,
        "bytes": stats.bytes,
        "model_load_s": round(load_s, 3),
        "ingest_s": round(ingest_s, 3),
        "total_s": round(time.perf_counter() - t_start, 3),
        "verify_damages": len(report["damages"]),
        "answered_in_top_k": sum(1 for a in answers if a["answer_rank"] is not None),
        "questions": answers,
    }
    if as_json:
        from chitta.ops.json_ids import json_safe

        console.print_json(data=json_safe(summary))
        return summary
    found = summary["answered_in_top_k"]
    console.print(
        f"{found} of {len(answers)} answers in the top {TOP_K}; verify: "
        f"{'clean' if not report['damages'] else report['damages']}; total {summary['total_s']:.1f} s"
    )
    console.print(f"field at {root}")
    console.print(f'try: chitta --path {root} recall "who prefers small pull requests" --explain')
    return summary
