"""chitta: a local-first memory substrate for AI agents.

>>> import chitta
>>> with chitta.open("/tmp/field") as field:
...     mid = field.remember("the build uses ninja", tags=["build"])
...     field.get(mid).text
'the build uses ninja'
"""

from __future__ import annotations

from chitta import errors, inspect, ops
from chitta._native_paths import get_include, get_lib_dir
from chitta._version import __version__
from chitta.errors import (
    ChittaError,
    ClosedError,
    CorruptionError,
    CrcMismatch,
    InvalidArgument,
    LockedError,
    NotAFieldError,
    NotFound,
    UnknownOpType,
)
from chitta.client import RemoteField, connect
from chitta.field import Field, default_path, open
from chitta.model import FieldStats, Memory

__all__ = [
    "ChittaError",
    "ClosedError",
    "CorruptionError",
    "CrcMismatch",
    "Field",
    "FieldStats",
    "InvalidArgument",
    "LockedError",
    "Memory",
    "RemoteField",
    "NotAFieldError",
    "NotFound",
    "UnknownOpType",
    "__version__",
    "connect",
    "default_path",
    "errors",
    "get_include",
    "get_lib_dir",
    "inspect",
    "open",
    "ops",
]
