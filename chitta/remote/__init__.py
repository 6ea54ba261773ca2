"""One field shared by many machines through an S3-compatible object store.

``chitta.open(path, remote="s3://bucket/prefix")`` keeps the local directory as
a cache and the bucket as the shared truth: each instance ships its own segment
bytes as chunk objects, other machines fetch them into byte-identical local
segment files, and ``refresh()`` merges them by (seqno, instance) as for local
writers. Layout, guarantees and costs: docs/REMOTE.md.
"""

from __future__ import annotations

from chitta.remote.url import RemoteURL, parse_url

__all__ = ["RemoteURL", "parse_url"]
