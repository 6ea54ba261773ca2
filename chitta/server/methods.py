"""The method table: every operation that crosses a process boundary, in one place.

:data:`METHODS` names the ``Field`` methods; :func:`table` adds the operations
every registered organ declares (:class:`chitta.organs.contract.Operation`:
name, JSON schema, one-line description, handler). The table drives the daemon's
dispatch (which names may be called, with which parameters),
:class:`chitta.server.client.RemoteField` (Field's methods with ``Field``'s own
signatures; organ operations through ``RemoteField.call``), ``Field.call`` and
the MCP tools (their JSON schemas and the checks of their arguments). An organ
that declares an operation reaches every door with no other edit.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from chitta.errors import InvalidArgument
from chitta.organs.contract import Operation
from chitta.server.arguments import check_arguments  # re-exported (__all__)
from chitta.server.schemas import ID, LINK_SCHEMA, RECALL_SCHEMA, REMEMBER_SCHEMA, obj


@dataclasses.dataclass(frozen=True)
class Method:
    """One remotely callable operation: a ``Field`` method, or an organ's operation.

    ``schema`` (JSON Schema of the parameters) is given for the methods offered
    as MCP tools (an organ operation always has one); ``result`` turns the decoded
    reply back into the type Field returns (MessagePack has no tuples); ``reads``
    marks the calls before which a long-lived server refreshes its view of other
    writers. ``operation`` is set for an organ's operation (run through
    ``Field.call``); ``doors`` says where it is offered.
    """

    name: str
    reads: bool = False
    schema: dict[str, Any] | None = None
    description: str = ""
    result: Callable[[Any], Any] | None = None
    operation: Operation | None = None
    doors: frozenset[str] = frozenset({"python", "daemon", "mcp"})

    def signature(self) -> inspect.Signature:
        if self.operation is not None:
            return _schema_signature(self.operation)
        sig = _SIGNATURES.get(self.name)
        if sig is None:  # inspect.signature costs tens of microseconds: once per method
            from chitta.field import Field

            sig = _SIGNATURES[self.name] = inspect.signature(getattr(Field, self.name))
        return sig

    def params(self) -> tuple[str, ...]:
        return tuple(self.signature().parameters)[1:]  # without self

    def invoke(self, field: Any, params: dict[str, Any]) -> Any:
        """Run this method on ``field`` (a Field) with checked ``params``."""
        if self.operation is not None:
            return field.call(self.name, **params)
        return getattr(field, self.name)(**params)


_SIGNATURES: dict[str, inspect.Signature] = {}


def _schema_signature(operation: Operation) -> inspect.Signature:
    """A keyword-only signature (after ``self``) made from an operation's schema."""
    props = operation.schema.get("properties", {})
    required = set(operation.schema.get("required", ()))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name in props:
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(params)


def _tuple(value: Any) -> Any:
    return tuple(value)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "remember",
            schema=REMEMBER_SCHEMA,
            description="Store one memory (a fact, decision, lesson, observation) in the shared field; returns its id.",
        ),
        Method("remember_many"),
        Method("remember_triplet", result=_tuple),
        Method(
            "get",
            reads=True,
            schema=obj({"id": ID}, ("id",)),
            description="Fetch one memory by id, with its kind, tags, confidence and provenance.",
        ),
        Method(
            "forget",
            schema=obj({"id": ID}, ("id",)),
            description="Forget (soft-delete) a memory by id; its history stays in the log.",
        ),
        Method("update"),
        Method(
            "link",
            schema=LINK_SCHEMA,
            description="Add a typed edge src -> dst between two memories (e.g. Supports, Contradicts, Supersedes).",
        ),
        Method(
            "recall",
            reads=True,
            schema=RECALL_SCHEMA,
            description="Recall the memories that matter most for a query (keyword, semantic and graph lanes "
            "fused), with optional filters and a byte budget.",
        ),
        Method("render"),
        Method(
            "write_gate_stats",
            reads=True,
            schema=obj({}),
            description="How many memories are staged (written, never recalled) and how old the oldest is.",
        ),
        Method("write_gate_pass"),
        Method(
            "pruned",
            reads=True,
            schema=obj({}),
            description="List memories the write gate pruned (never recalled for the prune age) "
            "that nobody restored.",
            doors=frozenset({"python", "daemon"}),  # MCP: the list_pruned tool (organs/pruning.py)
        ),
        Method(
            "restore",
            schema=obj({"id": ID}, ("id",)),
            description="Bring a pruned memory back (as a new memory the gate never prunes); "
            "returns its new id.",
            doors=frozenset({"python", "daemon"}),  # MCP: the restore_pruned tool
        ),
        Method("learn_encoder"),
        Method("reencode"),
        Method("maintain"),
        Method("checkpoint"),
        Method("set_dense_index"),
        Method("refresh"),
        Method("wait_embedded"),
        Method(
            "stats",
            reads=True,
            schema=obj({}),
            description="Counts and sizes of the field: memories, writer instances, segments, bytes.",
        ),
        Method("ids", reads=True),
        Method("remote_status", reads=True),
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


def check_call(method_name: object, params: object) -> tuple[Method, dict[str, Any]]:
    """A daemon request's method and parameters, checked against the table and
    Field's signature (names only; Field checks the values), or, for an organ
    operation, against its schema."""
    methods = _table()
    if not isinstance(method_name, str) or method_name not in methods:
        raise InvalidArgument(f"unknown method {method_name!r:.80}")
    method = methods[method_name]
    if "daemon" not in method.doors:
        raise InvalidArgument(f"{method_name} is not offered through the daemon")
    if params is None:
        params = {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise InvalidArgument("params must be a map of parameter names to values")
    if method.operation is not None:
        return method, check_arguments(method, params)
    names, required = _keywords(method)
    if params.keys() <= names and required <= params.keys():
        return method, params  # what bind() would accept, without its cost
    try:
        method.signature().bind(None, **params)
    except TypeError as exc:
        raise InvalidArgument(f"{method_name}: {exc}") from exc
    return method, params


_KEYWORDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {}


def _keywords(method: Method) -> tuple[frozenset[str], frozenset[str]]:
    """(names a call may pass by keyword, names it must pass) of a Field method: the
    check ``signature().bind`` makes, once per method; a signature with ``*args`` or
    ``**kwargs`` gets none (bind decides)."""
    got = _KEYWORDS.get(method.name)
    if got is None:
        kinds = inspect.Parameter
        params = list(method.signature().parameters.values())[1:]  # without self
        if any(p.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD) for p in params):
            got = (frozenset(), frozenset({"*"}))
        else:
            named = [
                p for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
            ]
            got = (
                frozenset(p.name for p in named),
                frozenset(p.name for p in params if p.default is kinds.empty),
            )
        _KEYWORDS[method.name] = got
    return got


def _operation_method(operation: Operation) -> Method:
    return Method(
        operation.name,
        reads=operation.reads,
        schema=dict(operation.schema),
        description=operation.description,
        operation=operation,
        doors=operation.doors,
    )


_TABLE: tuple[tuple[Any, ...], dict[str, Method]] | None = (
    None  # (registered factories, their table)
)


def table() -> dict[str, Method]:
    """:data:`METHODS` plus the operations of every registered organ (chitta.organs.registry).
    InvalidArgument when an organ's operation reuses a name or has no object schema."""
    return dict(_table())


def _table() -> dict[str, Method]:
    """The cached table itself (not to be changed): the daemon asks on every request."""
    global _TABLE
    from chitta.organs import registry

    factories = registry.factories()
    if _TABLE is not None and _TABLE[0] == factories:
        return _TABLE[1]
    out = dict(METHODS)
    for factory in factories:
        for operation in getattr(factory, "operations", ()):
            if operation.name in out and out[operation.name].operation is not operation:
                raise InvalidArgument(
                    f"organ operation {operation.name!r} reuses a method name; rename it"
                )
            if operation.schema.get("type") != "object":
                raise InvalidArgument(
                    f"organ operation {operation.name!r} needs an object JSON schema"
                )
            out[operation.name] = _operation_method(operation)
    _TABLE = (factories, out)
    return out


__all__ = ["METHODS", "Method", "check_arguments", "check_call", "table"]


#: Field methods that change nothing (recall only with ``touch=False``): the daemon runs
#: them beside other calls; every other call takes its writer lock.
_PURE_READS = frozenset(
    {
        "get",
        "write_gate_stats",
        "pruned",
        "stats",
        "ids",
        "memories",
        "history",
        "__len__",
        "__contains__",
    }
)


def only_reads(method: Method, params: dict[str, Any]) -> bool:
    """True when the call cannot write: safe to run beside a writing call."""
    if method.operation is not None:
        return False
    if method.name == "recall":
        return params.get("touch", True) is False
    return method.name in _PURE_READS
