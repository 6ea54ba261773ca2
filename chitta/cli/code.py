"""Code commands: ``chitta index-code``, ``chitta hooks install``, ``chitta note test``,
``chitta note commit`` (what the post-commit hook runs).

The field is opened without an embedder (these commands write no memories).
"""

from __future__ import annotations

import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import chitta
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main
from chitta.errors import InvalidArgument

HOOK_MARK = "# chitta post-commit hook"
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _git(repo: Path, *args: str) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, check=True, timeout=120
        )
    except FileNotFoundError:
        raise InvalidArgument(
            "git is not installed; install it to use chitta's git hooks"
        ) from None
    except subprocess.CalledProcessError as exc:
        msg = exc.stderr.decode("utf-8", "replace").strip()
        raise InvalidArgument(f"git {' '.join(args)} failed in {repo}: {msg}") from None
    return out.stdout.decode("utf-8", "surrogateescape")


def _summary(report: Any) -> Table:
    t = Table(title=f"index-code {report.project} ({report.root})", title_justify="left")
    t.add_column("what", style="bold cyan")
    t.add_column("count", justify="right")
    for label, value in (
        ("files seen", report.files_seen),
        ("files changed (parsed)", report.files_changed),
        ("files unchanged", report.files_unchanged),
        ("files removed", report.files_removed),
        ("files skipped", len(report.files_skipped)),
        ("symbols upserted", report.symbols_upserted),
        ("symbols removed", report.symbols_removed),
        ("call edges added", report.edges_added),
        ("call edges removed", report.edges_removed),
        ("symbols in project", report.symbols_total),
        ("call edges in project", report.edges_total),
        ("seconds", f"{report.seconds:.2f}"),
    ):
        t.add_row(label, str(value))
    return t


@main.command("index-code", epilog=EPILOG)
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--project", help="Project name (default: the directory's name).")
@click.option("--clear", is_flag=True, help="Forget the project's index first (ClearProject).")
@click.option(
    "--embed", is_flag=True, help="Embed each symbol's signature and doc (the field's embedder)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def index_code_cmd(
    ctx: click.Context, path: str, project: str | None, clear: bool, embed: bool, as_json: bool
) -> None:
    """Index the source files under PATH: files, symbols and call edges (tree-sitter;
    Python, JavaScript, TypeScript, Go, Rust, C, C++). Only files whose content
    changed are parsed again.

    \b
    Example:
      chitta index-code . --project myapp
    """
    from chitta.policies.code_index import index_code

    embedder = "auto" if embed else None
    with _errors_to_exit(), chitta.open(_field_path(ctx), embedder=embedder) as field:
        if as_json:
            report = index_code(field._core, path, project, clear=clear)
            _emit_json(report.as_dict())
            return
        with Progress(
            TextColumn("[bold]indexing"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("{task.description}"),
            console=console, transient=True,
        ) as bar:  # fmt: skip
            task = bar.add_task("", total=None)

            def step(name: str, i: int, n: int) -> None:
                bar.update(task, completed=i, total=n, description=name[-50:])

            report = index_code(field._core, path, project, clear=clear, progress=step)
    console.print(_summary(report))
    for rel, why in sorted(report.files_skipped.items())[:20]:
        console.print(f"  skipped {rel}: {why}")


@main.group(epilog=EPILOG)
def hooks() -> None:
    """Git hooks that tell chitta about commits."""


@hooks.command("install", epilog=EPILOG)
@click.argument("repo", type=click.Path(exists=True, file_okay=False), default=".")
@click.option("--project", help="Project name the repository is indexed under.")
@click.option("--force", is_flag=True, help="Replace a post-commit hook chitta did not write.")
@click.pass_context
def hooks_install(ctx: click.Context, repo: str, project: str | None, force: bool) -> None:
    """Write REPO's post-commit hook: after each commit it re-indexes the changed code
    and records a Committed event for each changed file and symbol.

    \b
    Example:
      chitta hooks install . --project myapp
    """
    with _errors_to_exit():
        top = Path(_git(Path(repo), "rev-parse", "--show-toplevel").strip())
        hooks_dir = Path(_git(top, "rev-parse", "--git-path", "hooks").strip())
        hooks_dir = hooks_dir if hooks_dir.is_absolute() else top / hooks_dir
        hook = hooks_dir / "post-commit"
        if hook.exists() and HOOK_MARK not in hook.read_text(errors="replace") and not force:
            raise InvalidArgument(f"{hook} exists and is not chitta's; use --force to replace it")
        field = _field_path(ctx).resolve()
        name = project or top.name
        args = ["--path", str(field), "note", "commit", "--repo", str(top), "--project", name]
        run = " ".join(
            shlex.quote(a)
            for a in [sys.executable, "-c", "from chitta.cli import main; main()", *args]
        )
        hooks_dir.mkdir(parents=True, exist_ok=True)
        log = '"$(git rev-parse --git-dir)/chitta-hook.log"'  # why a run failed, if one does
        hook.write_text(
            f"#!/bin/sh\n{HOOK_MARK} (chitta hooks install); never fails the commit\n"
            f"{run} >/dev/null 2>>{log} || true\n"
        )
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    console.print(f"installed {hook} (field {field}, project {name})")


@main.group(epilog=EPILOG)
def note() -> None:
    """Record code events: test outcomes and commits."""


@note.command("test", epilog=EPILOG)
@click.argument("target")
@click.option("--passed/--failed", required=True, help="The outcome.")
@click.option("--session", help="The agent session.")
@click.option("--harness", help="The agent harness (e.g. claude-code, codex).")
@click.pass_context
def note_test_cmd(
    ctx: click.Context, target: str, passed: bool, session: str | None, harness: str | None
) -> None:
    """Record that the tests of TARGET (a symbol key, a qualified name or a pytest
    node id) passed or failed.

    \b
    Example:
      chitta note test --failed tests/test_ledger.py::test_post
    """
    args: dict[str, Any] = {"target": target, "passed": passed}
    args.update({k: v for k, v in (("session", session), ("harness", harness)) if v})
    with _errors_to_exit(), chitta.open(_field_path(ctx), embedder=None) as field:
        out = field.call("note_test", **args)
    console.print(f"{out['event']} {out['symbol']}")


def commit_changes(diff: str) -> dict[str, list[list[int]]]:
    """File -> the new-side line ranges of ``git show --unified=0`` output (a deleted
    or renamed-away file gets ``[]``)."""
    changes: dict[str, list[list[int]]] = {}
    old = new = None
    for line in diff.splitlines():
        if line.startswith("--- "):
            old = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("+++ "):
            new = line[6:] if line.startswith("+++ b/") else None
            if new is None and old is not None:
                changes.setdefault(old, [])
            elif new is not None:
                changes.setdefault(new, [])
                if old is not None and old != new:
                    changes.setdefault(old, [])
        elif line.startswith("rename from "):
            changes.setdefault(line[12:], [])
        elif line.startswith("rename to "):
            changes.setdefault(line[10:], [])
        elif (m := _HUNK.match(line)) and new is not None:
            start, count = int(m.group(1)), int(m.group(2) or 1)
            span = [max(1, start), start + count - 1] if count else [max(1, start), start + 1]
            changes[new].append(span)
    return changes


@note.command("commit", epilog=EPILOG)
@click.option("--repo", type=click.Path(exists=True, file_okay=False), default=".")
@click.option("--rev", default="HEAD", help="The commit (default HEAD).")
@click.option("--project", help="Project name (default: the repository's directory name).")
@click.pass_context
def note_commit_cmd(ctx: click.Context, repo: str, rev: str, project: str | None) -> None:
    """Re-index the repository and record a Committed event for each file and symbol
    REV changed (what the post-commit hook runs)."""
    from chitta.policies.code_index import index_code

    with _errors_to_exit():
        top = Path(_git(Path(repo), "rev-parse", "--show-toplevel").strip())
        sha = _git(top, "rev-parse", rev).strip()
        diff = _git(top, "show", "--format=", "--unified=0", "--no-color", "-M", sha)
        changes = commit_changes(diff)
        with chitta.open(_field_path(ctx), embedder=None) as field:
            index_code(field._core, top, project or top.name)
            out = (
                field.call("record_commit", commit=sha, changes=changes)
                if changes
                else {"commit": sha, "files": [], "symbols": []}
            )
    console.print(f"commit {sha[:12]}: {len(out['files'])} files, {len(out['symbols'])} symbols")
