"""The wire protocol shared by the daemon, its client and the MCP server.

One table, :data:`METHODS`, names every ``Field`` method that crosses a
process boundary. It drives the daemon's dispatch (which names may be called,
with which parameters), :class:`chitta.client.RemoteField` (whose methods are
made from it, with ``Field``'s own signatures, so the two cannot drift) and
the MCP tools (their JSON schemas and the checks of their arguments).

Framing (docs/DAEMON.md): each frame is a 4-byte big-endian unsigned length,
then that many bytes of MessagePack. Values chitta returns travel as
MessagePack extension types and come back as the same Python types.
"""

from __future__ import annotations

import dataclasses
import inspect
import struct
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from chitta import errors
from chitta.checkpoint.snapshot import CheckpointInfo
from chitta.errors import ChittaError, InvalidArgument
from chitta.lifecycle.contradictions import ContradictionPair
from chitta.lifecycle.curation import CurationReport
from chitta.lifecycle.dedup import DedupReport
from chitta.model import FieldStats, Memory
from chitta.recall.hit import Factor, Hit

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


def _wire(obj: Any) -> Any:
    """The value with chitta's types replaced by extensions (msgspec would send
    dataclasses as plain maps, so they are converted before encoding)."""
    if isinstance(obj, (str, int, float, bool, bytes)) or obj is None:
        return obj
    if isinstance(obj, Memory):
        return _ext(EXT_MEMORY, [getattr(obj, n) for n in _MEMORY_FIELDS])
    if isinstance(obj, Hit):
        return _ext(EXT_HIT, [obj.id, obj.text, obj.score, obj.memory, obj.lanes, obj.fused, list(obj.factors)])
    if isinstance(obj, Factor):
        return _ext(EXT_FACTOR, [obj.name, obj.kind, obj.value, obj.weight, obj.contribution])
    if isinstance(obj, FieldStats):
        return _ext(EXT_FIELD_STATS, [getattr(obj, n) for n in _STATS_FIELDS])
    if type(obj).__name__ in _REPORTS and isinstance(obj, _REPORTS[type(obj).__name__]):
        return _ext(EXT_REPORT, [type(obj).__name__, [getattr(obj, f.name) for f in dataclasses.fields(obj)]])
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
        return msgspec.msgpack.Ext(EXT_NDARRAY, _ENC.encode([arr.dtype.str, list(arr.shape), arr.tobytes()]))
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
        hid, text, score, memory, lanes, fused, factors = body
        return Hit(hid, text, score, memory, lanes, fused, tuple(factors))
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
        return cls(**{f.name: _tuples(v) if str(f.type).startswith("tuple") else v for f, v in zip(fields, values)})
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


# ---- the method table ------------------------------------------------------------------
_S = {"type": "string"}
_OPT_S = {"type": ["string", "null"]}
_ID = {"type": "integer", "minimum": 0, "description": "a memory id"}
_TAGS = {"type": "array", "items": {"type": "string"}}


@dataclasses.dataclass(frozen=True)
class Method:
    """One remotely callable Field method.

    ``schema`` (JSON Schema of the parameters) is given for the methods offered
    as MCP tools; ``result`` turns the decoded reply back into the type Field
    returns (MessagePack has no tuples); ``reads`` marks the calls before which
    a long-lived server refreshes its view of other writers.
    """

    name: str
    reads: bool = False
    schema: dict[str, Any] | None = None
    description: str = ""
    result: Callable[[Any], Any] | None = None

    def signature(self) -> inspect.Signature:
        from chitta.field import Field

        return inspect.signature(getattr(Field, self.name))

    def params(self) -> tuple[str, ...]:
        return tuple(self.signature().parameters)[1:]  # without self


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


_REMEMBER_SCHEMA = _obj(
    {
        "text": {**_S, "description": "what to remember (plain text, at most 1 MiB)"},
        "kind": {**_S, "enum": ["observation", "thought", "decision", "code_fact", "lesson", "episode", "wisdom"]},
        "realm": {**_OPT_S, "description": "project or domain"},
        "session": _OPT_S,
        "source_tool": {**_OPT_S, "description": "tool that produced it (infers the harness)"},
        "tags": _TAGS,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    ("text",),
)
_RECALL_SCHEMA = _obj(
    {
        "query": {**_S, "description": "what you need to know"},
        "k": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "how many memories (default 10)"},
        "kinds": {"type": "array", "items": _S},
        "realm": _OPT_S,
        "session": _OPT_S,
        "harness": {**_OPT_S, "description": "only memories written through this harness (claude-code, codex)"},
        "since": {"type": "number", "description": "epoch seconds: only memories that happened at or after"},
        "until": {"type": "number", "description": "epoch seconds: only memories that happened before"},
        "include_staged": {"type": "boolean"},
        "budget_bytes": {"type": "integer", "minimum": 0, "description": "fit whole memories into this many bytes"},
    },
    ("query",),
)


def _tuple(value: Any) -> Any:
    return tuple(value)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("remember", schema=_REMEMBER_SCHEMA,
               description="Store one memory (a fact, decision, lesson, observation) in the shared field; returns its id."),
        Method("remember_many"),
        Method("remember_triplet", result=_tuple),
        Method("get", reads=True, schema=_obj({"id": _ID}, ("id",)),
               description="Fetch one memory by id, with its kind, tags, confidence and provenance."),
        Method("forget", schema=_obj({"id": _ID}, ("id",)),
               description="Forget (soft-delete) a memory by id; its history stays in the log."),
        Method("update"),
        Method("link", schema=_obj(
            {"src": _ID, "dst": _ID,
             "edge": {**_S, "enum": ["RelatedTo", "Supports", "Contradicts", "Supersedes", "DerivedFrom",
                                     "Confirms", "SameSession", "CoRetrieved", "AliasOf"]},
             "weight": {"type": "number", "exclusiveMinimum": 0}},
            ("src", "dst")),
            description="Add a typed edge src -> dst between two memories (e.g. Supports, Contradicts, Supersedes)."),
        Method("recall", reads=True, schema=_RECALL_SCHEMA,
               description="Recall the memories that matter most for a query (keyword, semantic and graph lanes "
                           "fused), with optional filters and a byte budget."),
        Method("render"),
        Method("write_gate_stats", reads=True, schema=_obj({}),
               description="How many memories are staged (written, never recalled) and how old the oldest is."),
        Method("write_gate_pass"),
        Method("learn_encoder"),
        Method("reencode"),
        Method("maintain"),
        Method("checkpoint"),
        Method("set_dense_index"),
        Method("refresh"),
        Method("stats", reads=True, schema=_obj({}),
               description="Counts and sizes of the field: memories, writer instances, segments, bytes."),
        Method("ids", reads=True),
        Method("memories", reads=True, result=iter),
        Method("flush"),
        Method("sync"),
        Method("supersede"),
        Method("contradict"),
        Method("confirm"),
        Method("curate"),
        Method("dedup_pass"),
        Method("demote_pass"),
        Method("surprise_pass"),
        Method("detect_contradictions", reads=True),
        Method("history", reads=True),
        Method("__len__", reads=True),
        Method("__contains__", reads=True),
    )
}


# ---- argument checks (MCP) ---------------------------------------------------------------
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list, tuple), "object": (dict,), "null": (type(None),),
}


def _check_value(value: Any, schema: Mapping[str, Any], where: str) -> None:
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        ok = any(
            isinstance(value, _JSON_TYPES[n]) and not (n in ("integer", "number") and isinstance(value, bool))
            for n in names
        )
        if not ok:
            raise InvalidArgument(f"{where} must be {' or '.join(names)}, not {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidArgument(f"{where} must be one of {schema['enum']}, not {value!r:.80}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidArgument(f"{where} must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidArgument(f"{where} must be <= {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise InvalidArgument(f"{where} must be > {schema['exclusiveMinimum']}")
    if isinstance(value, (list, tuple)) and "items" in schema:
        for i, item in enumerate(value):
            _check_value(item, schema["items"], f"{where}[{i}]")


def check_arguments(method: Method, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arguments`` checked against the method's JSON schema (names, types, ranges);
    InvalidArgument names the first problem."""
    if method.schema is None:
        raise InvalidArgument(f"{method.name} has no argument schema")
    args = dict(arguments or {})
    props = method.schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise InvalidArgument(f"{method.name}: unknown argument(s) {unknown}; allowed: {sorted(props)}")
    missing = [n for n in method.schema.get("required", ()) if n not in args]
    if missing:
        raise InvalidArgument(f"{method.name}: missing required argument(s) {missing}")
    for name, value in args.items():
        _check_value(value, props[name], f"{method.name}: {name}")
    return args


def check_call(method_name: object, params: object) -> tuple[Method, dict[str, Any]]:
    """A daemon request's method and parameters, checked against the table and
    Field's signature (names only; Field checks the values)."""
    if not isinstance(method_name, str) or method_name not in METHODS:
        raise InvalidArgument(f"unknown method {method_name!r:.80}")
    method = METHODS[method_name]
    if params is None:
        params = {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise InvalidArgument("params must be a map of parameter names to values")
    try:
        method.signature().bind(None, **params)
    except TypeError as exc:
        raise InvalidArgument(f"{method_name}: {exc}") from exc
    return method, params


def to_epoch(value: Any) -> Any:
    """Datetimes as epoch seconds (for JSON answers)."""
    return value.timestamp() if isinstance(value, datetime) else value
