"""chitta: a local-first memory substrate for AI agents.

>>> import chitta
>>> with chitta.open("/tmp/field") as field:
...     mid = field.remember("the build uses ninja", tags=["build"])
...     field.get(mid).text
'the build uses ninja'

``import chitta`` loads only the error classes: every other public name is
imported on first use (PEP 562 ``__getattr__``), so a process that needs one
surface (``chitta mcp``, a hook) does not pay for the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chitta import errors
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

if TYPE_CHECKING:  # the lazy names, for type checkers
    __version__: str
    from chitta import ops
    from chitta.field import Field, default_path, inspect, open
    from chitta.field.native_paths import get_include, get_lib_dir
    from chitta.model import FieldStats, Memory
    from chitta.server.client import RemoteField, connect

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
    "NotAFieldError",
    "NotFound",
    "RemoteField",
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

# public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "inspect": ("chitta.field.inspect", None),
    "ops": ("chitta.ops", None),
    "get_include": ("chitta.field.native_paths", "get_include"),
    "get_lib_dir": ("chitta.field.native_paths", "get_lib_dir"),
    "RemoteField": ("chitta.server.client", "RemoteField"),
    "connect": ("chitta.server.client", "connect"),
    "Field": ("chitta.field", "Field"),
    "default_path": ("chitta.field", "default_path"),
    "open": ("chitta.field", "open"),
    "FieldStats": ("chitta.model", "FieldStats"),
    "Memory": ("chitta.model", "Memory"),
}


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chitta")
    except PackageNotFoundError:  # running from a source tree without install
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = found = _installed_version()
        return found
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'chitta' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
