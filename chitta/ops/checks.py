"""Argument checks shared by the public entry points.

Each function returns the normalised value or raises
:class:`chitta.errors.InvalidArgument`; none has side effects, so a call that
fails here has changed nothing.
"""

from __future__ import annotations

import math
import operator
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
import numpy as np

from chitta.errors import InvalidArgument

MAX_TEXT_BYTES = 1 << 20  # 1 MiB of UTF-8 per memory
MAX_NAME_CHARS = 256  # realm, session, source_tool
MAX_TAG_CHARS = 128
MAX_TAGS = 64
MAX_META_BYTES = 64 << 10
MAX_EMBEDDING_DIM = 8192
MAX_ID = 2**64 - 1
MAX_QUERY_BYTES = (
    32 << 10
)  # 32 KiB of UTF-8 per recall query (a longer one stalls the caller for seconds)
MAX_META_DEPTH = 32  # nested lists/dicts in meta
MAX_EPOCH_S = 253402300800  # 9999-12-31T23:59:59Z + 1 s: the largest time chitta takes, either sign
MAX_SEGMENT_BYTES = 1 << 40  # 1 TiB per segment file

_META_ENCODER = msgspec.msgpack.Encoder()


def text(value: object, what: str = "text") -> str:
    if type(value) is not str:
        if not isinstance(value, str):
            raise InvalidArgument(f"{what} must be a str, not {type(value).__name__}")
        value = str(value)
    if not value or value.isspace():
        raise InvalidArgument(f"{what} is empty")
    if len(value) <= MAX_TEXT_BYTES // 4:  # cannot exceed the limit; just check it encodes
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InvalidArgument(f"{what} is not valid Unicode: {exc.reason}") from exc
        return value
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"{what} is not valid Unicode: {exc.reason}") from exc
    if size > MAX_TEXT_BYTES:
        raise InvalidArgument(f"{what} is {size} bytes of UTF-8; the limit is {MAX_TEXT_BYTES}")
    return value


def _has_control(value: str) -> bool:
    return any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in value)


def name(value: object, what: str) -> str | None:
    """An optional short label (realm, session, source tool)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a str or None, not {type(value).__name__}")
    if not value.strip() or len(value) > MAX_NAME_CHARS or _has_control(value):
        raise InvalidArgument(
            f"{what} must be 1-{MAX_NAME_CHARS} printable characters, got {value!r:.80}"
        )
    return value


def choice(value: object, allowed: frozenset[str], what: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidArgument(f"{what} must be one of {sorted(allowed)}, not {value!r:.80}")
    return value


def tags(value: object) -> tuple[str, ...]:
    if value == () or value == []:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidArgument(
            f"tags must be a list or tuple of str, not {type(value).__name__}"
            + (" (wrap a single tag in a list)" if isinstance(value, str) else "")
        )
    out: list[str] = []
    for tag in value:
        if (
            not isinstance(tag, str)
            or not tag.strip()
            or len(tag) > MAX_TAG_CHARS
            or _has_control(tag)
        ):
            raise InvalidArgument(
                f"each tag must be 1-{MAX_TAG_CHARS} printable characters, got {tag!r:.80}"
            )
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidArgument(f"at most {MAX_TAGS} tags, got {len(out)}")
    return tuple(out)


def unit_float(value: object, what: str) -> float:
    """A finite number in [0, 1]."""
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidArgument(f"{what} must be a number, not {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f) or not 0.0 <= f <= 1.0:
        raise InvalidArgument(f"{what} must be between 0 and 1, got {value!r}")
    return f


def non_negative_float(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidArgument(f"{what} must be a number, not {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f) or f < 0.0:
        raise InvalidArgument(f"{what} must be a finite number >= 0, got {value!r}")
    return f


MAX_ID_DIGITS = len(str(MAX_ID))  # 20: the longest decimal id string taken


def memory_id(value: object) -> int:
    """A memory id from an int or a decimal string of digits (JSON doors send ids as
    strings, docs/DECISIONS.md D-038)."""
    if isinstance(value, bool):
        raise InvalidArgument("a memory id must be an int or a decimal string, not bool")
    if isinstance(value, str):
        # length first: int() of a huge string is slow; digits only (no sign, space, 0x, _)
        if not 0 < len(value) <= MAX_ID_DIGITS or not (value.isascii() and value.isdigit()):
            raise InvalidArgument(
                f"a memory id must be an int or a string of 1-{MAX_ID_DIGITS} decimal digits,"
                f" got {value!r:.40}"
            )
        value = int(value)
    try:
        i = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidArgument(
            f"a memory id must be an int or a decimal string, not {type(value).__name__}"
        ) from None
    if not 0 < i <= MAX_ID:
        raise InvalidArgument(f"a memory id must be between 1 and 2**64-1, got {i}")
    return i


def embedding(value: object, expected_dim: int | None) -> bytes | None:
    """A 1-D finite vector as little-endian float32 bytes."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise InvalidArgument("embedding must be a sequence of numbers or a numpy array")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"embedding is not a numeric vector: {exc}") from exc
    if arr.dtype.kind not in "fiu" or arr.ndim != 1:
        raise InvalidArgument(
            f"embedding must be a 1-D numeric vector, got shape {arr.shape} {arr.dtype}"
        )
    if not 1 <= arr.shape[0] <= MAX_EMBEDDING_DIM:
        raise InvalidArgument(
            f"embedding dimension must be 1..{MAX_EMBEDDING_DIM}, got {arr.shape[0]}"
        )
    if expected_dim is not None and arr.shape[0] != expected_dim:
        raise InvalidArgument(
            f"embedding has dimension {arr.shape[0]} but this field's embeddings have {expected_dim}"
        )
    f32 = arr.astype("<f4")
    if not np.all(np.isfinite(f32)):
        raise InvalidArgument("embedding contains NaN or infinity")
    return f32.tobytes()


def _meta_value(value: object, depth: int, where: str) -> None:
    """Only str, int, float, bool, None, lists/tuples and str-keyed dicts, nested at most
    MAX_META_DEPTH deep (a set or any other type is refused, not silently converted)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if depth >= MAX_META_DEPTH:
        raise InvalidArgument(
            f"meta is nested deeper than {MAX_META_DEPTH} levels (at {where}); flatten it"
        )
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _meta_value(item, depth + 1, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidArgument(f"meta keys must be str, got {key!r:.80} at {where}")
            _meta_value(item, depth + 1, f"{where}[{key!r:.40}]")
        return
    raise InvalidArgument(
        f"meta must hold only str, numbers, bools, None, lists and dicts; {where} is a {type(value).__name__}"
        + (" (use a sorted list)" if isinstance(value, (set, frozenset)) else "")
    )


#: The meta key of a memory's affect: -1 (negative) .. 1 (positive); recall's ``mood`` is
#: on the same scale (chitta.recall.learned: affect_valence, mood_congruence).
VALENCE_KEY = "valence"


def valence(value: object, where: str = "valence") -> float:
    """An affect value: a finite number from -1 (negative) to 1 (positive)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not -1.0 <= value <= 1.0
    ):
        raise InvalidArgument(
            f"{where} must be a number from -1 (negative) to 1 (positive), not {value!r:.40}"
        )
    return float(value)


def meta(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"meta must be a dict, not {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise InvalidArgument(f"meta keys must be str, got {key!r:.80}")
    _meta_value(dict(value), 0, "meta")
    if VALENCE_KEY in value:
        valence(value[VALENCE_KEY], f"meta[{VALENCE_KEY!r}]")
    try:
        encoded = _META_ENCODER.encode(dict(value))
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidArgument(
            f"meta must hold only str, numbers, bools, None, lists and dicts: {exc}"
        ) from exc
    if len(encoded) > MAX_META_BYTES:
        raise InvalidArgument(
            f"meta encodes to {len(encoded)} bytes; the limit is {MAX_META_BYTES}"
        )
    decoded: dict[str, Any] = msgspec.msgpack.decode(encoded)
    return decoded


def query(value: object) -> str | None:
    """A recall query: None or a non-blank str of at most MAX_QUERY_BYTES of UTF-8."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument("query must be a non-empty str or None")
    if len(value) > MAX_QUERY_BYTES // 4 or not value.isascii():
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidArgument(f"query is not valid Unicode: {exc.reason}") from exc
        if size > MAX_QUERY_BYTES:
            raise InvalidArgument(
                f"query is {size} bytes of UTF-8; the limit is {MAX_QUERY_BYTES} (recall with a shorter query)"
            )
    return value


def epoch_ms(value: object, what: str) -> int:
    """Epoch seconds (int or float) as milliseconds, within +-MAX_EPOCH_S."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidArgument(f"{what} must be a datetime or epoch seconds")
    if not -MAX_EPOCH_S <= value <= MAX_EPOCH_S:
        raise InvalidArgument(
            f"{what} must be epoch seconds within +-{MAX_EPOCH_S} (year 9999), got {value!r}"
        )
    return int(value * 1000)


def segment_bytes(value: object) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 1024 <= value <= MAX_SEGMENT_BYTES
    ):
        raise InvalidArgument(
            f"segment_bytes must be an int from 1024 to {MAX_SEGMENT_BYTES} (1 TiB), got {value!r:.40}"
        )
    return value


def field_path(value: object) -> str:
    """A field path that the OS can take: no NUL byte, encodable (checked before anything is created)."""
    import os

    try:
        raw = os.fsencode(value)  # type: ignore[arg-type]
    except UnicodeEncodeError as exc:
        raise InvalidArgument(
            f"path cannot be encoded for the file system ({exc.reason}); "
            "use a path of valid characters"
        ) from exc
    except TypeError as exc:
        raise InvalidArgument(
            f"path must be a str or os.PathLike, not {type(value).__name__}"
        ) from exc
    if b"\0" in raw:
        raise InvalidArgument("path contains a NUL byte; no file name can hold one")
    text = os.fsdecode(raw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # bytes the file system takes but that are not UTF-8
        raise InvalidArgument(
            "path is not valid UTF-8; chitta needs a UTF-8 path (rename the directory)"
        ) from exc
    return text
