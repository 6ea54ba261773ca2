"""`chitta stats | get | forget` answered by the daemon through the light fast path
(chitta/cli/served.py): the same bytes and exit codes as the full command line talking to
the same daemon, without importing numpy or the field; anything it does not serve goes to
the full CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from clitools import chitta_exe
from daemontools import DaemonProcess, child_env

import chitta
from chitta.cli.served import parse, socket_of
from chitta.server.daemon import default_socket

FULL_CLI = (
    "from chitta.cli.app import main; main(prog_name='chitta')"  # argv[0] is -c: no fast path
)


@pytest.fixture()
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[int]]]:
    runtime = Path(tempfile.mkdtemp(prefix="ccs", dir="/tmp"))  # socket paths <= 108 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    field = tmp_path / "f"
    with chitta.open(field, embedder=None) as f:
        ids = [
            f.remember("the build uses ninja", tags=["build"], meta={"why": ["speed", 2]}),
            f.remember("long " * 400),
            f.remember("to be forgotten"),
        ]
    sock = default_socket(field)
    sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    daemon = DaemonProcess(field, sock)
    try:
        yield field, ids
    finally:
        daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)


def _run(argv: list[str], field: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv, "--path", str(field), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=field.parent,
        env=child_env(**env),
        check=False,
    )


def fast(field: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run([chitta_exe()], field, *args, **env)


def full(field: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The whole command line (argv[0] is not the console script: no fast path), which
    reaches the same daemon through chitta.connect()."""
    return _run([sys.executable, "-c", FULL_CLI], field, *args)


def test_the_socket_rule_is_the_daemons() -> None:
    for p in ("/tmp/x", "rel/field", "~/f"):
        assert socket_of(Path(p)) == default_socket(p)


def test_same_output_and_exit_code_as_the_full_command_line(served: tuple[Path, list[int]]) -> None:
    field, (a, long_id, _c) = served
    cases = [
        ("stats",),
        ("stats", "--json"),
        ("get", str(a)),
        ("get", str(a), "--json"),
        ("get", hex(a)),
        ("get", str(long_id)),
        ("get", str(long_id), "--full"),
        ("get", "12345"),  # NotFound: exit 5, same message
        ("get", "12345", "--json"),
        ("forget", "12345"),
    ]
    for args in cases:
        f, s = fast(field, *args), full(field, *args)
        assert (f.returncode, f.stdout, f.stderr) == (s.returncode, s.stdout, s.stderr), args
    assert fast(field, "get", "12345").returncode == 5
    assert "--full shows all" in fast(field, "get", str(long_id)).stdout


def test_forget_through_the_fast_path_reaches_the_daemon(served: tuple[Path, list[int]]) -> None:
    field, (_a, _b, c) = served
    r = fast(field, "forget", str(c), "--json")
    assert r.returncode == 0 and f'"forgotten": "{c}"' in r.stdout
    assert full(field, "get", str(c)).returncode == 5  # gone in the daemon's field
    again = fast(field, "forget", str(c))
    assert again.returncode == 5 and again.stderr == full(field, "forget", str(c)).stderr


def test_the_fast_path_imports_neither_numpy_nor_the_field(served: tuple[Path, list[int]]) -> None:
    field, (a, *_rest) = served

    def imported(r: subprocess.CompletedProcess[str]) -> set[str]:
        return {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if "|" in line}

    light = fast(field, "get", str(a), PYTHONPROFILEIMPORTTIME="1")
    assert light.returncode == 0 and "ninja" in light.stdout
    mods = imported(light)
    assert "chitta.cli.served" in mods
    assert not {"numpy", "chitta.field", "click", "msgspec"} & mods
    # the same command with the fast path off does import them (the check can fail)
    heavy = fast(field, "get", str(a), PYTHONPROFILEIMPORTTIME="1", CHITTA_NO_DAEMON="1")
    assert heavy.returncode == 0 and {"numpy", "click"} <= imported(heavy)


def test_what_the_fast_path_does_not_serve_goes_to_the_full_cli(
    served: tuple[Path, list[int]],
) -> None:
    field, (a, *_rest) = served
    bad = fast(field, "get", "abc")
    assert bad.returncode == 2 and "not an integer id" in bad.stderr  # click's usage error
    assert fast(field, "get", str(a), "--bogus").returncode == 2
    assert "Show one memory" in fast(field, "get", "--help").stdout


def test_parse_takes_only_the_served_forms(tmp_path: Path) -> None:
    p = str(tmp_path / "f")
    r = parse(["--path", p, "get", "0x10", "--json"])
    assert r is not None and (r.command, r.memory_id, r.flags) == ("get", 16, {"--json"})
    r = parse(["stats", f"--path={p}"])
    assert r is not None and r.field == Path(p) and r.memory_id is None
    for argv in (
        ["get"],
        ["get", "1", "2"],
        ["stats", "1"],
        ["stats", "--full"],
        ["forget", "1", "--full"],
        ["get", "x1"],
        ["recall", "q"],
        ["--path"],
        ["--path", "", "stats"],
        ["get", "1", "--help"],
        [],
    ):
        assert parse(argv) is None, argv
