"""Read-only views of a field's log: every record decoded, and a full check.

Used by ``chitta dump`` / ``chitta verify`` and by tools; takes no locks and
never writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chitta import _core, ops
from chitta.errors import ChittaError, NotAFieldError


def _root(path: str | os.PathLike[str]) -> Path:
    root = Path(path).expanduser()
    if not (root / "segments").is_dir():
        raise NotAFieldError(f"{root} is not a chitta field (no segments/ directory)")
    return root


def verify(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Check every record of every segment. Returns segments, records, bytes and
    a list of damages (dicts with segment, offset, bytes, kind, detail); torn
    tails have kind ``"torn_tail"``. Payloads are decoded too, so an unknown op
    type or an undecodable payload is reported (kind ``"bad_payload"``)."""
    root = _root(path)
    report: dict[str, Any] = _core.verify_segments(str(root))
    log = _core.SegmentLog(str(root), read_only=True, salvage=True)
    try:
        result = log.read_new()
        for i in range(len(result)):
            op_type = int(result.op_types[i])
            try:
                op = ops.decode(op_type, result.payload(i))
                ops.validate(op)  # decodes but breaks its op's rules: damage too (FORMAT.md §5)
            except ChittaError as exc:
                report["damages"].append(
                    {
                        "segment": result.segments[int(result.segment_index[i])],
                        "offset": int(result.offsets[i]),
                        "bytes": len(result.payload(i)) + 17,
                        "kind": "unknown_op_type"
                        if "unknown op type" in str(exc)
                        else "bad_payload",
                        "detail": str(exc),
                    }
                )
    finally:
        log.close()
    return report


def iter_records(
    path: str | os.PathLike[str], *, salvage: bool = False
) -> Iterator[dict[str, Any]]:
    """Every record in replay order as a dict: seqno, instance, op_type, op, segment,
    offset, fields (JSON-friendly). Undecodable payloads raise, or with
    ``salvage`` are yielded with ``op=None`` and an ``error``."""
    root = _root(path)
    log = _core.SegmentLog(str(root), read_only=True, salvage=salvage)
    try:
        result = log.read_new()
    finally:
        log.close()
    seqnos, instances, types = result.seqnos, result.instances, result.op_types
    seg_index, offsets = result.segment_index, result.offsets
    for i in range(len(result)):
        op_type = int(types[i])
        rec: dict[str, Any] = {
            "seqno": int(seqnos[i]),
            "instance": int(instances[i]),
            "op_type": op_type,
            "segment": result.segments[int(seg_index[i])],
            "offset": int(offsets[i]),
        }
        try:
            op = ops.decode(op_type, result.payload(i))
            rec["op"] = ops.OpType(op_type).name
            rec["fields"] = ops.op_to_dict(op)
        except ChittaError as exc:
            if not salvage:
                raise type(exc)(
                    f"{exc} (segment {rec['segment']}, offset {rec['offset']})"
                ) from exc
            rec["op"] = None
            rec["fields"] = {}
            rec["error"] = str(exc)
        yield rec
