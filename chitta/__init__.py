"""chitta: a local-first memory substrate for AI agents."""

from __future__ import annotations

from chitta import errors
from chitta._version import __version__

__all__ = ["__version__", "errors"]
