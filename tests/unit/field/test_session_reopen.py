"""A session continued by another handle records the context one handle writing it all
records (chitta/field/sessions.py): reopened, in another process after ``refresh``, and
with event dates out of write order; MEMORY.md sync writes with a session too.

Oracle: the same turns written by one handle, start to end (the rule's reference run).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import chitta
from chitta.encode import HashingEmbedder
from chitta.field.importers.memory_md import sync
from chitta.field.sessions import EMBED_KEY
from chitta.recall.context import CONTEXT_KEY

D = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)
# event dates out of write order: the second note is about the day before the first
TURNS = [
    ("Ana: The deploy failed at noon.", D),
    ("Ana: Yesterday the cert had expired already.", D - timedelta(days=1)),
    ("Ben: I renewed it this morning.", D + timedelta(hours=1)),
    ("Ana: Then the deploy went through.", D + timedelta(hours=2)),
]


def _contexts(f: chitta.Field, mid: int) -> tuple[object, object]:
    meta = f.get(mid).meta or {}
    return meta.get(CONTEXT_KEY), meta.get(EMBED_KEY)


def _one_handle(root: Path) -> tuple[object, object]:
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        ids = [f.remember(t, session="ops", at=at) for t, at in TURNS]
        return _contexts(f, ids[-1])


def test_reopened_handle_continues_the_session_as_one_handle(tmp_path):
    expected = _one_handle(tmp_path / "one")
    assert expected == (
        "Ana: Yesterday the cert had expired already.\nBen: I renewed it this morning.",
        "Ben: I renewed it this morning.",
    )
    root = tmp_path / "two"
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        for t, at in TURNS[:3]:
            f.remember(t, session="ops", at=at)
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        mid = f.remember(TURNS[3][0], session="ops", at=TURNS[3][1])
        assert _contexts(f, mid) == expected
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:  # and it replays the same
        assert _contexts(f, mid) == expected


_WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime
    import chitta
    from chitta.encode import HashingEmbedder
    with chitta.open(sys.argv[1], embedder=HashingEmbedder(64)) as f:
        for text, at in zip(sys.argv[2::2], sys.argv[3::2]):
            f.remember(text, session="ops", at=datetime.fromisoformat(at))
    """
)


def test_another_process_writing_the_session_is_seen_after_refresh(tmp_path):
    expected = _one_handle(tmp_path / "one")
    root = tmp_path / "shared"
    with chitta.open(root, embedder=HashingEmbedder(64)) as f:
        f.remember(TURNS[0][0], session="ops", at=TURNS[0][1])  # this handle meets "ops"
        args = [a for t, at in TURNS[1:3] for a in (t, at.isoformat())]
        subprocess.run(
            [sys.executable, "-c", _WRITER, str(root), *args],
            check=True,
            cwd=tmp_path,  # outside the repo: the source tree would shadow the package
        )
        f.refresh()
        mid = f.remember(TURNS[3][0], session="ops", at=TURNS[3][1])
        assert _contexts(f, mid) == expected


def test_memory_md_sync_writes_with_a_session_per_heading(tmp_path):
    md = tmp_path / "MEMORY.md"
    md.write_text(
        "# Deploys\n\n- The deploy needs the cert renewed.\n- Renewals run on Mondays.\n\n"
        "# People\n\n- Ana owns the deploy pipeline.\n",
        encoding="utf-8",
    )
    with chitta.open(tmp_path / "f", embedder=HashingEmbedder(64)) as f:
        report = sync(f, md)
        first, second, other = (f.get(i) for i in report.imported_ids)
        assert first.session == second.session and other.session not in (None, first.session)
        # the second entry of a heading is encoded with the first, as every session write is
        assert (second.meta or {}).get(CONTEXT_KEY) == first.text
        assert (second.meta or {}).get(EMBED_KEY) == first.text
        assert CONTEXT_KEY not in (first.meta or {}) and CONTEXT_KEY not in (other.meta or {})
        # a second sync adds nothing (idempotent by content hash, whatever the session)
        assert sync(f, md).imported == 0
