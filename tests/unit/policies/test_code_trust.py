"""Staleness, invalidation, the recall factor and the introspection operations
(chitta/policies/code_trust.py, code_introspect.py) on real git repositories."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from code_repo import commit, git, make_repo, write

import chitta
from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.policies.code_index import index_code
from chitta.policies.code_trust import INVALIDATED_MULTIPLIER, STALE_MULTIPLIER

LEDGER = """class Ledger:
    def post(self, amount):
        return self.check(amount)

    def check(self, amount):
        return amount > 0


def fetch_page(url):
    for _ in range(3):
        try:
            return get(url)
        except TimeoutError:
            pass


def get(url):
    return url
"""


class Clock:
    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t


def _age(repo: Path, rel: str, at: float) -> None:
    os.utime(repo / rel, (at, at))


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Clock, chitta.Field]:
    repo = make_repo(tmp_path / "repo", {"ledger.py": LEDGER, "docs.py": "X = 1\n"})
    clock = Clock()
    for rel in ("ledger.py", "docs.py"):
        _age(repo, rel, clock.t - 100)  # the code is older than the memories
    f = chitta.open(tmp_path / "f", embedder=None, clock=clock)
    index_code(f._core, repo, "demo")
    return repo, clock, f


def _edit(repo: Path, clock: Clock, old: str, new: str) -> None:
    write(repo, {"ledger.py": (repo / "ledger.py").read_text().replace(old, new)})
    _age(repo, "ledger.py", clock.t + 10)


def _verdict(f: chitta.Field, mid: int) -> tuple[str, str | None]:
    v = f.call("staleness", id=mid)
    return v["verdict"], v["reason"]


def test_verdicts_follow_the_code(setup: tuple[Path, Clock, chitta.Field]) -> None:
    repo, clock, f = setup
    with f:
        on_fetch = f.remember("fetch_page swallows timeouts", artifacts=["ledger.py#fetch_page"])
        on_post = f.remember("post checks the amount", artifacts=["ledger.py#Ledger.post"])
        on_file = f.remember("ledger.py has the ledger", artifacts=["ledger.py"])
        on_line = f.remember("line 6 compares to zero", artifacts=["ledger.py:6"])
        on_docs = f.remember("docs.py holds X", artifacts=[str(repo / "docs.py")])  # absolute
        unknown = f.remember("elsewhere", artifacts=["other/thing.py#f"])
        assert {
            _verdict(f, m)[0] for m in (on_fetch, on_post, on_file, on_line, on_docs, unknown)
        } == {"fresh"}
        _edit(repo, clock, "            pass\n", "            raise\n")
        index_code(f._core, repo, "demo")
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(clock.t + 10)))
        assert _verdict(f, on_fetch) == ("stale", f"edited at {iso}")
        assert _verdict(f, on_post) == ("fresh", None)  # another symbol of the same file
        assert _verdict(f, on_file) == ("stale", f"file changed at {iso}")
        assert _verdict(f, on_line) == ("stale", f"line 6: file changed at {iso}")
        assert _verdict(f, on_docs) == ("fresh", None) and _verdict(f, unknown) == ("fresh", None)
        sha = commit(repo, "raise")
        clock.t += 20  # the commit comes after the memories
        f.call("record_commit", commit=sha, changes={"ledger.py": [[14, 14]]})
        assert _verdict(f, on_fetch) == ("stale", f"edited in {sha}")
        assert _verdict(f, on_file) == ("stale", f"file changed in {sha}")
        older = f.remember("get is trivial", artifacts=["ledger.py#get"])
        _edit(repo, clock, "def get(url):\n    return url\n", "")  # get deleted (mtime +10 s)
        index_code(f._core, repo, "demo")
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(clock.t + 10)))
        assert _verdict(f, older) == ("stale", f"deleted at {iso}")
        clock.t += 15
        later = f.remember("get is gone", artifacts=["ledger.py#get"])  # after the deletion
        assert _verdict(f, later) == ("fresh", None)


def test_mark_invalidated_and_its_bad_input(setup: tuple[Path, Clock, chitta.Field]) -> None:
    _repo, _clock, f = setup
    with f:
        mid = f.remember("post never fails", artifacts=["ledger.py#Ledger.post"], meta={"k": 1})
        applied = f._core.applied
        with pytest.raises(InvalidArgument, match="by must name"):
            f.call("mark_invalidated", id=mid, by="  ")
        with pytest.raises(NotFound):
            f.call("mark_invalidated", id=12345, by="abc")
        assert f._core.applied == applied
        f.call("mark_invalidated", id=mid, by="deadbeef")
        assert _verdict(f, mid) == ("invalidated", "invalidated by deadbeef")
        assert f.get(mid).meta == {"k": 1, "invalidated_by": "deadbeef"}  # the meta kept
        claim = f.call("what_do_i_know_about", topic="post never fails")["claims"][0]
        assert (claim["invalidated_by"], claim["staleness"]) == ("deadbeef", "invalidated")


def _ranked(f: chitta.Field, query: str) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in f.recall(query, k=5, touch=False)]


def test_stale_memory_ranks_below_a_fresh_one(setup: tuple[Path, Clock, chitta.Field]) -> None:
    repo, clock, f = setup
    with f:
        stale = f.remember(
            "fetch_page retry loop swallows timeouts", artifacts=["ledger.py#fetch_page"]
        )
        fresh = f.remember("fetch_page retry loop swallows timeouts", artifacts=["ledger.py#get"])
        invalid = f.remember("fetch_page retry loop swallows timeouts")
        assert [m for m, _ in _ranked(f, "fetch_page retry loop")] == [
            stale,
            fresh,
            invalid,
        ]  # ties: by id
        _edit(repo, clock, "            pass\n", "            raise\n")
        index_code(f._core, repo, "demo")
        f.call("mark_invalidated", id=invalid, by="c0ffee")
        ranked = _ranked(f, "fetch_page retry loop")
        hook, f._core.engine.staleness = f._core.engine.staleness, None
        plain = dict(_ranked(f, "fetch_page retry loop"))  # the reference: no staleness factor
        f._core.engine.staleness = hook
        assert [m for m, _ in ranked] == [fresh, stale, invalid]
        got = dict(ranked)
        assert got[fresh] == plain[fresh]
        assert got[stale] == pytest.approx(plain[stale] * STALE_MULTIPLIER, rel=1e-12)
        assert got[invalid] == pytest.approx(plain[invalid] * INVALIDATED_MULTIPLIER, rel=1e-12)
        hit = next(
            h for h in f.recall("fetch_page retry loop", explain=True, touch=False) if h.id == stale
        )
        factor = next(x for x in hit.factors if x.name == "staleness")
        assert factor.value == STALE_MULTIPLIER and factor.kind == "multiplier"
        assert hit.score == pytest.approx(got[stale], rel=1e-12)


def test_no_code_state_leaves_recall_untouched(tmp_path: Path) -> None:
    clock = Clock()
    with chitta.open(
        tmp_path / "f", embedder=chitta.encode.HashingEmbedder(dim=32), clock=clock
    ) as f:
        for i in range(40):
            f.remember(f"note {i} about topic {i % 7}", session=f"s{i % 3}")
        assert f._core.engine.staleness is not None and dict(f._core.engine.staleness()) == {}
        assert dict(f._core.engine.code_lane("topic_3 Ledger.post")) == {}
        with_hook = [(h.id, h.score) for h in f.recall("topic 3", k=10, touch=False)]
        f._core.engine.staleness = f._core.engine.code_lane = None
        assert [(h.id, h.score) for h in f.recall("topic 3", k=10, touch=False)] == with_hook


def _vec(*xs: float) -> list[float]:
    v = np.zeros(8, np.float32)
    v[: len(xs)] = xs
    return [float(x) for x in v]


def test_cross_harness_conflicts_against_brute_force(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        mems = []
        for i in range(24):
            v = rng.normal(size=8).astype(np.float32)
            tool = "codex-cli" if i % 2 else "claude"
            mid = f.remember(f"claim {i}", embedding=[float(x) for x in v], source_tool=tool)
            mems.append((mid, v / np.linalg.norm(v), "codex" if i % 2 else "claude-code"))
        now = f._core.now_ms()  # each accessed once: out of the write gate (what a recall logs)
        f._core.commit_group([ops.UpdateState(id=m, at_ms=now, touch=True) for m, _v, _h in mems])
        assert not any(f._core.index.is_staged(m) for m, _v, _h in mems)
        staged = f.remember("claim late", embedding=_vec(1.0), source_tool="codex")
        out = f.call("cross_harness_conflicts", min_similarity=0.3, neighbours=30, limit=1000)
        want = sorted(
            (
                (1.0 - float(a[1] @ b[1]), (min(a[0], b[0]), max(a[0], b[0])))
                for i, a in enumerate(mems) for b in mems[i + 1:]
                if a[2] != b[2] and float(a[1] @ b[1]) >= 0.3
            ),
            key=lambda t: (-t[0], t[1]),
        )  # fmt: skip
        got = [(c["disagreement"], (c["a"]["id"], c["b"]["id"])) for c in out["conflicts"]]
        assert [p for _, p in got] == [p for _, p in want] and len(want) > 5
        assert [d for d, _ in got] == pytest.approx([d for d, _ in want], abs=1e-5)
        assert all(staged not in p for _, p in got)


def test_what_do_i_know_about_after_a_real_commit_hook(tmp_path: Path) -> None:
    """``chitta hooks install``; an edit and ``git commit`` run the hook (a real process);
    the memory about the edited function reads "stale: edited in <commit>" and ranks
    below the fresh one."""
    repo = make_repo(tmp_path / "repo", {"app/ledger.py": LEDGER})
    field = tmp_path / "field"
    env = {**os.environ, "CHITTA_EMBEDDER": "none"}
    _cli(["--path", str(field), "index-code", str(repo), "--project", "demo"], env, tmp_path)
    _cli(["--path", str(field), "hooks", "install", str(repo), "--project", "demo"], env, tmp_path)
    with chitta.open(field, embedder=None) as f:
        old = f.remember("Ledger.check rejects zero amounts", artifacts=["app/ledger.py#Ledger.check"],
                         source_tool="codex", session="s1")  # fmt: skip
        ok = f.remember("Ledger.post delegates to Ledger.check amounts", artifacts=["app/ledger.py#Ledger.post"],
                        source_tool="claude", session="s2")  # fmt: skip
    time.sleep(0.05)
    write(repo, {"app/ledger.py": LEDGER.replace("amount > 0", "amount >= 0")})
    sha = commit(repo, "accept zero")  # runs .git/hooks/post-commit
    with chitta.open(field, embedder=None) as f:
        events = f._core.registry.by_name["symbol_events"]
        committed = {e.symbol for e in events.events if e.kind == "Committed"}
        assert committed == {"app/ledger.py#Ledger", "app/ledger.py#Ledger.check", None}
        assert all(e.ref == sha for e in events.events if e.kind == "Committed")
        out = f.call("what_do_i_know_about", topic="Ledger.check amounts")
        by = {c["id"]: c for c in out["claims"]}
        assert (by[old]["staleness"], by[old]["staleness_reason"]) == ("stale", f"edited in {sha}")
        assert by[ok]["staleness"] == "fresh" and [c["id"] for c in out["claims"]][:2] == [ok, old]
        assert (by[old]["harness"], by[old]["source_session"], by[old]["source_tool"]) == (
            "codex",
            "s1",
            "codex",
        )
        assert 0 <= by[old]["age_days"] < 1 and by[old]["staged"] is True and out["total"] == 2
        f.contradict(ok, old)
        assert f.call("get_conflicts", id=old)["conflicts"][0]["id"] == ok
        assert f.call("what_do_i_know_about", topic="Ledger.check")["claims"][-1]["contradictions"]


def _exe() -> str:
    """The chitta console script of this interpreter's environment, else the one on PATH."""
    import shutil
    import sys

    beside = Path(sys.executable).parent / "chitta"
    found = str(beside) if beside.exists() else shutil.which("chitta")
    assert found, "the chitta console script is not installed"
    return found


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> Any:
    import subprocess

    exe = _exe()
    r = subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r


def test_note_test_cli_and_unknown_symbol(
    setup: tuple[Path, Clock, chitta.Field], tmp_path: Path
) -> None:
    _repo, _clock, f = setup
    f.close()
    env = {**os.environ, "CHITTA_EMBEDDER": "none"}
    base = ["--path", str(tmp_path / "f"), "note", "test"]
    r = _cli([*base, "--failed", "ledger.py::Ledger::check"], env, tmp_path)
    assert "TestFailed ledger.py#Ledger.check" in r.stdout
    import subprocess

    exe = _exe()
    bad = subprocess.run([exe, *base, "--passed", "Ledger.nosuch"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120, check=False)  # fmt: skip
    assert bad.returncode == 5 and "no symbol 'Ledger.nosuch'" in bad.stderr
    with chitta.open(tmp_path / "f", embedder=None) as g:
        kinds = [
            e.kind
            for e in g._core.registry.by_name["symbol_events"].of_symbol("ledger.py#Ledger.check")
        ]
        assert kinds == ["Created", "TestFailed"]
        assert (
            g.call("note_test", target="check", passed=True)["symbol"] == "ledger.py#Ledger.check"
        )


@pytest.mark.parametrize(
    ("refs", "message"),
    [
        ("a.py", "must be a list"),
        (["a.py#"], "malformed"),
        (["a.py:0"], "malformed"),
        ([3], "is a str"),
        (["x"] * 65, "at most 64"),
        (["a\x00b"], "printable"),
    ],
)
def test_bad_artifact_refs_write_nothing(tmp_path: Path, refs: Any, message: str) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        with pytest.raises(InvalidArgument, match=message):
            f.remember("x", artifacts=refs)
        with pytest.raises(InvalidArgument, match=message):
            f.remember_many([{"text": "x", "artifacts": refs}])
        assert len(f) == 0


def test_commit_changes_parses_real_git_diffs(tmp_path: Path) -> None:
    from chitta.cli.code import commit_changes

    repo = make_repo(tmp_path / "r", {"a.py": "1\n2\n3\n4\n5\n", "b.py": "x\n", "c.py": "c\n" * 5})
    write(repo, {"a.py": "1\nTWO\n3\n4\n5\n6\n", "new.py": "n\n"})
    (repo / "b.py").unlink()
    git(repo, "mv", "c.py", "d.py")
    sha = commit(repo, "many")
    diff = git(repo, "show", "--format=", "--unified=0", "--no-color", "-M", sha)
    assert commit_changes(diff) == {
        "a.py": [[2, 2], [6, 6]], "b.py": [], "c.py": [], "d.py": [], "new.py": [[1, 1]]
    }  # fmt: skip


def test_operations_reach_the_method_table() -> None:
    from chitta.server.methods import table

    names = set(table())
    assert {"what_do_i_know_about", "cross_harness_conflicts", "get_conflicts", "staleness",
            "mark_invalidated", "note_test", "record_commit", "find_symbol", "symbol_events", "index_code"} <= names  # fmt: skip


def test_code_operations_through_a_real_daemon(tmp_path: Path) -> None:
    """index_code, find_symbol, note_test and what_do_i_know_about through ``chitta serve``
    and its ``connect()`` handle (the method table's daemon door)."""
    from daemontools import DaemonProcess, child_env

    repo = make_repo(tmp_path / "repo", {"ledger.py": LEDGER})
    field, sock = tmp_path / "field", tmp_path / "d.sock"
    daemon = DaemonProcess(field, sock, env=child_env())
    try:
        with chitta.connect(sock, timeout=30) as remote:
            report = remote.call("index_code", root=str(repo), project="demo")
            assert (report["files_changed"], report["symbols_total"]) == (1, 5)
            assert remote.call("find_symbol", name="Ledger.post")["symbols"][0]["callees"] == [
                "ledger.py#Ledger.check"
            ]
            mid = remote.remember("post double-counts", artifacts=["ledger.py#Ledger.post"])
            assert (
                remote.call("note_test", target="Ledger.post", passed=False)["event"]
                == "TestFailed"
            )
            with pytest.raises(chitta.NotFound, match="no symbol"):
                remote.call("note_test", target="Ledger.nothing", passed=True)
            claims = remote.call("what_do_i_know_about", topic="post double-counts")["claims"]
            assert [(c["id"], c["staleness"]) for c in claims] == [(mid, "fresh")]
    finally:
        daemon.close()
