"""Organ maintenance passes run from Field.maintain() on their declared cadence
(the toy organ's hourly pass, with the field's clock under the test's control)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from toy_organ import SessionTally

import chitta
from chitta.organs import registry


@pytest.fixture(autouse=True)
def _toy_registered() -> Iterator[None]:
    registry.register(SessionTally)
    yield
    registry.unregister(SessionTally)


def test_a_pass_runs_once_per_cadence_and_logs_what_it_changes(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: now[0]) as f:
        f.call("session_note", session="a", event="register")
        f.call("session_note", session="b", event="register")
        f.call("session_note", session="b", event="deregister")
        assert f.maintain()["session_tally.close_open_sessions"] == 1  # only "a" was left open
        assert f.call("session_tally", session="a")["events"] == {"deregister": 1, "register": 1}
        f.call("session_note", session="c", event="register")
        now[0] += 3599
        assert "session_tally.close_open_sessions" not in f.maintain()  # not due yet
        now[0] += 2
        assert f.maintain()["session_tally.close_open_sessions"] == 1  # "c", an hour later
    with chitta.open(
        tmp_path / "f", embedder=None, read_only=True
    ) as again:  # the pass's ops are in the log
        assert again.call("session_tally", session="c")["events"] == {
            "deregister": 1,
            "register": 1,
        }
