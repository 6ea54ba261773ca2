"""Provenance through the daemon (``chitta serve`` as a real process): remember and
recall take provenance, witness_memory and reconcile_all reach RemoteField.call, and
the documented errors cross the socket by class."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from daemontools import DaemonProcess

import chitta
from chitta.errors import CandidateLaundering, InvalidArgument, NotFound, ProvenanceRefused


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path / "field", tmp_path / "run" / "d.sock")
    try:
        yield proc
    finally:
        proc.close()


def test_provenance_through_the_daemon(daemon: DaemonProcess) -> None:
    with chitta.connect(daemon.sock) as remote:
        cand = remote.remember("the disk fills on Fridays", provenance="open_weight_generated")
        est = remote.remember("the disk is 2 TB", source_tool="codex")
        assert remote.call("provenance_of", id=est)["provenance"] == "codex"
        assert remote.call("provenance_of", id=cand)["candidate"] is True
        with pytest.raises(CandidateLaundering):
            remote.link(cand, est, "DerivedFrom")
        with pytest.raises(ProvenanceRefused):
            remote.remember("we use zfs", kind="decision", provenance="open_weight_generated")
        with pytest.raises(InvalidArgument):
            remote.remember("x", provenance="robot")
        hits = remote.recall("disk", provenance=["codex"], touch=False)
        assert [h.id for h in hits] == [est]
        assert remote.call("reconcile_all")["unresolved"] == 0
        with pytest.raises(NotFound):
            remote.call("witness_memory", id=12345, signal="tool_outcome")
        remote.call("witness_memory", id=cand, signal="tool_outcome")
        remote.link(cand, est, "DerivedFrom")
        assert len(remote) == 2
    daemon.close()
    with chitta.open(daemon.field, read_only=True) as f:
        assert f.call("provenance_of", id=cand)["candidate"] is False
        assert f.core.graph.has_edge(cand, est, "DerivedFrom")
