"""Checks of a checkpoint state's content, beyond its CRCs (FORMAT.md §8,
Loading): a state whose bytes are intact but whose content cannot be the
log's (forged, or written by a faulty writer) is refused like a damaged one,
and the field is rebuilt from its log."""

from __future__ import annotations

from typing import Any

import numpy as np

from chitta.errors import CorruptionError

_I63 = 2**63 - 1


def _count(state: dict[str, Any], key: str) -> int:
    value = state.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _I63:
        raise CorruptionError(f"checkpoint {key}={value!r} is not a count")
    return value


def check(state: dict[str, Any]) -> None:
    """CorruptionError unless the counts fit within the log the watermark names,
    the memories' texts are UTF-8 cut at character boundaries, and their ids
    are distinct, one per row."""
    positions = state["watermark"]["positions"]
    log_bytes = sum(int(p[1]) for p in positions)
    applied, unrouted = _count(state, "applied"), _count(state, "unrouted")
    if applied + unrouted > log_bytes:  # every record takes more than one byte of the log
        raise CorruptionError(
            f"checkpoint says {applied + unrouted} records were read from {log_bytes} bytes of log"
        )
    _check_types(state, unrouted)
    mem = state["organs"]["memories"]
    rows = _count(mem, "rows")
    if rows > applied:
        raise CorruptionError(
            f"checkpoint holds {rows} memories but applied only {applied} records"
        )
    ids = np.sort(np.frombuffer(mem["ids"], "<u8"))  # a sort, not np.unique (~30x cheaper)
    if len(ids) != rows or bool(np.any(ids[1:] == ids[:-1])):
        raise CorruptionError("checkpoint memory ids are not one distinct id per row")
    text = bytes(mem["text"])
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptionError(f"checkpoint memory texts are not UTF-8: {exc}") from exc
    off = np.frombuffer(mem["text_offsets"], "<i8")
    if len(off) != rows + 1 or (
        rows and (off[0] != 0 or off[-1] != len(text) or np.any(np.diff(off) < 0))
    ):
        raise CorruptionError("checkpoint text offsets do not cut the text arena into its rows")
    arena = np.frombuffer(text, np.uint8)
    inner = off[(off > 0) & (off < len(text))]
    if len(inner) and np.any((arena[inner] & 0xC0) == 0x80):
        raise CorruptionError("checkpoint text offsets split a UTF-8 character")


def _check_types(state: dict[str, Any], unrouted: int) -> None:
    """State 7's op-type records: op bytes, per-type counts that add up to ``unrouted``."""
    routed = state["routed_types"]
    if not isinstance(routed, list) or not all(_is_op_byte(t) for t in routed):
        raise CorruptionError(f"checkpoint routed_types={routed!r} is not a list of op types")
    counts = state["unrouted_types"]
    if counts is None:
        return
    if not isinstance(counts, list) or not all(
        isinstance(c, list) and len(c) == 2 and _is_op_byte(c[0]) and _is_count(c[1])
        for c in counts
    ):
        raise CorruptionError(f"checkpoint unrouted_types={counts!r} is not [op type, count] pairs")
    if sum(int(c[1]) for c in counts) != unrouted or {int(c[0]) for c in counts} & set(routed):
        raise CorruptionError(
            f"checkpoint unrouted_types do not add up to its {unrouted} unrouted records"
            " or name a type its organs routed"
        )


def _is_op_byte(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 255


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
