"""The directory a chitta Unix socket lives in (daemon and MCP host): owned by
this user and not writable by others, created 0700 if missing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from chitta.errors import ChittaIOError


def private_dir(directory: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = directory.stat()
    if st.st_uid != os.getuid():
        raise ChittaIOError(f"{directory} belongs to uid {st.st_uid}, not to this user")
    if stat.S_IMODE(st.st_mode) & 0o022:
        raise ChittaIOError(f"{directory} is writable by others; refusing to put a socket there")
