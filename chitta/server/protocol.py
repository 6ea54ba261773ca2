"""The wire protocol shared by the daemon, its client and the MCP server.

The method table (:mod:`chitta.server.methods`: every ``Field`` method and organ
operation that crosses a process boundary) drives the daemon's dispatch,
:class:`chitta.server.client.RemoteField` and the MCP tools; this module holds
the framing and the values.

Framing (docs/DAEMON.md): each frame is a 4-byte big-endian unsigned length,
then that many bytes of MessagePack. Values chitta returns travel as
MessagePack extension types and come back as the same Python types.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from chitta import errors
from chitta.errors import ChittaError, InvalidArgument
from chitta.field.checkpoint.snapshot import CheckpointInfo
from chitta.model import FieldStats, Memory
from chitta.policies.contradictions import ContradictionPair
from chitta.policies.curation import CurationReport
from chitta.policies.dedup import DedupReport
from chitta.recall.hit import Factor, Hit
from chitta.server.methods import (  # re-exported (__all__)
    METHODS,
    Method,
    check_arguments,
    check_call,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

MAX_FRAME = 16 << 20  # bytes of one frame's body, either direction
HEADER = struct.Struct(">I")
PROTOCOL_VERSION = 1

# MessagePack extension codes (docs/DAEMON.md, "Values").
EXT_NDARRAY = 1
EXT_MEMORY = 2
EXT_HIT = 3
EXT_FACTOR = 4
EXT_FIELD_STATS = 5
EXT_REPORT = 6  # a lifecycle report dataclass: [class name, [field values]]

_REPORTS: dict[str, type[DataclassInstance]] = {
    c.__name__: c for c in (CurationReport, DedupReport, ContradictionPair, CheckpointInfo)
}
_MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))
_STATS_FIELDS = tuple(f.name for f in dataclasses.fields(FieldStats))


class ProtocolError(ChittaError):
    """A peer sent a frame that breaks the protocol (too large, not MessagePack, wrong shape)."""


# ---- values --------------------------------------------------------------------------
def _ext(code: int, body: Any) -> msgspec.msgpack.Ext:
    return msgspec.msgpack.Ext(code, _ENC.encode(_wire(body)))


def _memory_ext(obj: Memory) -> msgspec.msgpack.Ext:
    # a Memory's fields are plain values (meta: JSON values, embedding: an array for the
    # hook): encoded as they are, without walking them
    return msgspec.msgpack.Ext(EXT_MEMORY, _ENC.encode([getattr(obj, n) for n in _MEMORY_FIELDS]))


def _factor_ext(obj: Factor) -> msgspec.msgpack.Ext:
    return msgspec.msgpack.Ext(
        EXT_FACTOR, _ENC.encode([obj.name, obj.kind, obj.value, obj.weight, obj.contribution])
    )


def _hit_ext(obj: Hit) -> msgspec.msgpack.Ext:
    memory = obj.memory
    return msgspec.msgpack.Ext(
        EXT_HIT,
        _ENC.encode(
            [
                obj.id,
                obj.text,
                obj.score,
                _memory_ext(memory) if type(memory) is Memory else _wire(memory),
                obj.lanes,
                obj.fused,
                [_factor_ext(f) if type(f) is Factor else _wire(f) for f in obj.factors],
                obj.relevance,
                obj.recall_id,
                obj.graph_path,
            ]
        ),
    )


#: the exact types with an encoder of their own (the hot path of recall's replies)
_FAST: dict[type, Any] = {Memory: _memory_ext, Hit: _hit_ext, Factor: _factor_ext}


def _wire(obj: Any) -> Any:
    """The value with chitta's types replaced by extensions (msgspec would send
    dataclasses as plain maps, so they are converted before encoding)."""
    if isinstance(obj, (str, int, float, bool, bytes)) or obj is None:
        return obj
    fast = _FAST.get(type(obj))
    if fast is not None:
        return fast(obj)
    if isinstance(obj, Memory):
        return _ext(EXT_MEMORY, [getattr(obj, n) for n in _MEMORY_FIELDS])
    if isinstance(obj, Hit):
        return _ext(
            EXT_HIT,
            [
                obj.id,
                obj.text,
                obj.score,
                obj.memory,
                obj.lanes,
                obj.fused,
                list(obj.factors),
                obj.relevance,
                obj.recall_id,
                obj.graph_path,
            ],
        )
    if isinstance(obj, Factor):
        return _ext(EXT_FACTOR, [obj.name, obj.kind, obj.value, obj.weight, obj.contribution])
    if isinstance(obj, FieldStats):
        return _ext(EXT_FIELD_STATS, [getattr(obj, n) for n in _STATS_FIELDS])
    if type(obj).__name__ in _REPORTS and isinstance(obj, _REPORTS[type(obj).__name__]):
        return _ext(
            EXT_REPORT,
            [type(obj).__name__, [getattr(obj, f.name) for f in dataclasses.fields(obj)]],
        )
    if isinstance(obj, (list, tuple)):
        return [_wire(x) for x in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(_wire(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _wire(x) for k, x in obj.items()}
    return obj  # numpy arrays, datetimes, ...: the encoder and its hook


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"cannot send an array of dtype {arr.dtype}")
        return msgspec.msgpack.Ext(
            EXT_NDARRAY, _ENC.encode([arr.dtype.str, list(arr.shape), arr.tobytes()])
        )
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot send a {type(obj).__name__} over the wire")


def _tuples(value: Any) -> Any:
    return tuple(_tuples(x) for x in value) if isinstance(value, list) else value


def _ext_hook(code: int, data: memoryview) -> Any:
    body = _DEC.decode(data)
    if code == EXT_NDARRAY:
        dtype, shape, raw = body
        return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
    if code == EXT_MEMORY:
        values = dict(zip(_MEMORY_FIELDS, body))
        values["tags"] = tuple(values["tags"])
        values["artifacts"] = tuple(values["artifacts"])
        return Memory(**values)
    if code == EXT_HIT:
        # rest: relevance, recall_id, graph_path (a newer peer may send more)
        hid, text, score, memory, lanes, fused, factors, *rest = body
        return Hit(hid, text, score, memory, lanes, fused, tuple(factors), *rest[:3])
    if code == EXT_FACTOR:
        return Factor(*body)
    if code == EXT_FIELD_STATS:
        return FieldStats(**dict(zip(_STATS_FIELDS, body)))
    if code == EXT_REPORT:
        name, values = body
        cls = _REPORTS.get(name)
        if cls is None:
            raise ProtocolError(f"unknown report type {name!r}")
        fields = dataclasses.fields(cls)
        # tuples travel as arrays: restore them where the class declares tuples
        return cls(
            **{
                f.name: _tuples(v) if str(f.type).startswith("tuple") else v
                for f, v in zip(fields, values)
            }
        )
    raise ProtocolError(f"unknown MessagePack extension type {code}")


_ENC = msgspec.msgpack.Encoder(enc_hook=_enc_hook)
_DEC = msgspec.msgpack.Decoder(ext_hook=_ext_hook)


def pack(value: Any) -> bytes:
    """MessagePack bytes of a request or reply (chitta's value types as extensions)."""
    try:
        return _ENC.encode(_wire(value))
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
        raise InvalidArgument(f"cannot encode for the wire: {exc}") from exc


def unpack(data: bytes | memoryview) -> Any:
    try:
        return _DEC.decode(data)
    except ChittaError:
        raise
    except (msgspec.DecodeError, ValueError, TypeError) as exc:
        raise ProtocolError(f"malformed frame: {exc}") from exc


def frame(body: bytes) -> bytes:
    if len(body) > MAX_FRAME:
        raise InvalidArgument(f"the message is {len(body)} bytes; the frame limit is {MAX_FRAME}")
    return HEADER.pack(len(body)) + body


# ---- errors --------------------------------------------------------------------------
def error_body(exc: BaseException) -> dict[str, Any]:
    """The ``error`` member of a reply: the chitta class name and the message."""
    if isinstance(exc, ChittaError):
        name = type(exc).__name__ if type(exc).__name__ in _ERROR_CLASSES else _nearest(exc)
    else:
        name = "ChittaError"
    out: dict[str, Any] = {"type": name, "message": str(exc)}
    if isinstance(exc, errors.CorruptionError):
        out["segment"], out["offset"] = exc.segment, exc.offset
    return out


def _nearest(exc: ChittaError) -> str:
    for cls in type(exc).__mro__:
        if cls.__name__ in _ERROR_CLASSES:
            return cls.__name__
    return "ChittaError"


_ERROR_CLASSES: dict[str, type[ChittaError]] = {
    name: cls
    for name, cls in vars(errors).items()
    if isinstance(cls, type) and issubclass(cls, ChittaError) and cls.__name__ == name
}
_ERROR_CLASSES["ProtocolError"] = ProtocolError


def error_from(body: Mapping[str, Any]) -> ChittaError:
    """The exception a reply's ``error`` member stands for (same class as raised remotely)."""
    cls = _ERROR_CLASSES.get(str(body.get("type")), ChittaError)
    exc = cls(str(body.get("message", "")))
    if isinstance(exc, errors.CorruptionError):
        exc.segment, exc.offset = body.get("segment"), body.get("offset")
    return exc


def to_epoch(value: Any) -> Any:
    """Datetimes as epoch seconds (for JSON answers)."""
    return value.timestamp() if isinstance(value, datetime) else value


__all__ = [
    "EXT_FACTOR",
    "EXT_FIELD_STATS",
    "EXT_HIT",
    "EXT_MEMORY",
    "EXT_NDARRAY",
    "EXT_REPORT",
    "HEADER",
    "MAX_FRAME",
    "METHODS",
    "PROTOCOL_VERSION",
    "Method",
    "ProtocolError",
    "check_arguments",
    "check_call",
    "error_body",
    "error_from",
    "frame",
    "pack",
    "to_epoch",
    "unpack",
]
