"""ULIDs: 48 bits of epoch milliseconds, 80 random bits, 26 Crockford base32 chars.

They sort by time as text. Within one millisecond a generator increments the
random part, so one process's ids are strictly increasing.
"""

from __future__ import annotations

import os
import re
import threading

from chitta.errors import InvalidArgument

__all__ = ["ULID_PATTERN", "check", "new", "timestamp_ms"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_PATTERN = "[0-7][0-9A-HJKMNP-TV-Z]{25}"
_RE = re.compile(ULID_PATTERN)
_lock = threading.Lock()
_last = (-1, 0)


def _encode(value: int) -> str:
    out = []
    for _ in range(26):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new(ms: int) -> str:
    """A fresh ULID for time ``ms`` (epoch milliseconds), above any this process made."""
    global _last
    if not 0 <= ms < 2**48:
        raise InvalidArgument(f"a ULID time is 0 <= ms < 2**48, got {ms}")
    with _lock:
        last_ms, last_rand = _last
        if ms <= last_ms:
            ms, rand = last_ms, last_rand + 1
            if rand >= 2**80:
                ms, rand = ms + 1, int.from_bytes(os.urandom(10), "big") >> 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom to increment
        _last = (ms, rand)
    return _encode((ms << 80) | rand)


def check(value: object, what: str = "id") -> str:
    """``value`` when it is a ULID (26 Crockford base32 characters, upper case)."""
    if not isinstance(value, str) or not _RE.fullmatch(value):
        raise InvalidArgument(
            f"{what} must be a ULID (26 characters of 0-9 A-Z without I L O U), got {value!r:.40}"
        )
    return value


def timestamp_ms(value: str) -> int:
    """The milliseconds a ULID carries."""
    n = 0
    for c in check(value)[:10]:
        n = n * 32 + _ALPHABET.index(c)
    return n
