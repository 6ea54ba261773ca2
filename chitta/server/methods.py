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
import re
from collections.abc import Callable, Mapping
from typing import Any

from chitta.errors import InvalidArgument
from chitta.ops import checks
from chitta.organs.contract import Operation

_S = {"type": "string"}
_OPT_S = {"type": ["string", "null"]}
# ids: a decimal string (what the JSON doors write, D-038) or an integer
_ID = {
    "type": ["string", "integer"],
    "pattern": "^[0-9]{1,20}$",
    "minimum": 1,
    "description": "a memory id: the decimal string a tool returned (an integer also works)",
}
_TAGS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 128},
    "maxItems": 64,
    "description": 'short labels to filter and group by, e.g. ["ci", "deploy"] (at most 64)',
}
_SESSION = {
    **_OPT_S,
    "description": "the agent session (conversation) this belongs to, any stable label; "
    "omit when unknown",
}
# what each kind is for (remember offers the ones an agent writes; alias is chitta's own)
_KINDS = {
    "observation": "a fact seen or told (the default)",
    "thought": "speculation or a synthesis, not yet checked",
    "decision": "a chosen action with its reason",
    "code_fact": "about a symbol, file, call or type in code",
    "lesson": "a principle learned from something that went wrong",
    "episode": "a condensed stretch of a conversation or session",
    "wisdom": "a recurring pattern promoted from many memories",
}
_KIND_HELP = "; ".join(f"{k}: {v}" for k, v in _KINDS.items())
_PROVENANCES = [
    "human",
    "claude",
    "codex",
    "open_weight_distilled",
    "open_weight_generated",
    "unknown",
]
_EDGES = {
    "RelatedTo": "untyped association (the default)",
    "Supports": "src is evidence for dst",
    "Contradicts": "src disputes dst (recall ranks dst lower)",
    "Supersedes": "src replaces dst (recall ranks dst lower)",
    "DerivedFrom": "src was made from dst",
    "Confirms": "src observes dst again",
    "SameSession": "written in the same session",
    "CoRetrieved": "recalled together",
    "AliasOf": "src is the plain-language twin of dst",
}


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
        from chitta.field import Field

        return inspect.signature(getattr(Field, self.name))

    def params(self) -> tuple[str, ...]:
        return tuple(self.signature().parameters)[1:]  # without self

    def invoke(self, field: Any, params: dict[str, Any]) -> Any:
        """Run this method on ``field`` (a Field) with checked ``params``."""
        if self.operation is not None:
            return field.call(self.name, **params)
        return getattr(field, self.name)(**params)


def _schema_signature(operation: Operation) -> inspect.Signature:
    """A keyword-only signature (after ``self``) made from an operation's schema."""
    props = operation.schema.get("properties", {})
    required = set(operation.schema.get("required", ()))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name in props:
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(params)


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_REMEMBER_SCHEMA = _obj(
    {
        "text": {**_S, "description": "what to remember (plain text, at most 1 MiB)"},
        "kind": {
            **_S,
            "enum": list(_KINDS),
            "description": f"what sort of memory it is; {_KIND_HELP}",
        },
        "realm": {**_OPT_S, "description": "the project or domain it belongs to, e.g. a repo name"},
        "session": _SESSION,
        "source_tool": {
            **_OPT_S,
            "description": "the tool that produced it (sets the harness); default: this client",
        },
        "tags": _TAGS,
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "how sure you are it is true, 0 to 1 (default 1); recall weighs it",
        },
        "artifacts": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 1024},
            "maxItems": 64,
            "description": "the code it is about: 'path', 'path#Qualified.name' or "
            "'path:line' (paths relative to the repository root); recall then knows "
            "when that code changed",
        },
        "dedup": {
            "type": "boolean",
            "description": "if a memory of the same realm says the same (case and spacing "
            "aside), reinforce it and return its id instead of storing a copy",
        },
        "provenance": {
            **_S,
            "enum": _PROVENANCES,
            "description": "who wrote it; default: inferred from this client's name. "
            "open_weight_generated memories enter the candidate band",
        },
    },
    ("text",),
)
_RECALL_SCHEMA = _obj(
    {
        "query": {**_S, "description": "what you need to know, in words (at most 32 KiB)"},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "how many memories (default 10)",
        },
        "kinds": {
            "type": "array",
            "items": {"type": "string", "enum": [*_KINDS, "alias"]},
            "uniqueItems": True,
            "description": "only memories of these kinds (default: every kind)",
        },
        "realm": {**_OPT_S, "description": "only memories of this project or domain"},
        "session": {**_OPT_S, "description": "only memories written in this agent session"},
        "harness": {
            **_OPT_S,
            "description": "only memories written through this harness (claude-code, codex)",
        },
        "since": {
            "type": "number",
            "description": "epoch seconds: only memories that happened at or after",
        },
        "until": {
            "type": "number",
            "description": "epoch seconds: only memories that happened before",
        },
        "include_staged": {
            "type": "boolean",
            "description": "include memories never recalled yet (staged by the write gate; "
            "default true); false returns only memories that proved useful before",
        },
        "budget_bytes": {
            "type": "integer",
            "minimum": 0,
            "description": "fit whole memories into this many bytes",
        },
        "tags": {**_TAGS, "description": "only memories carrying every one of these tags"},
        "min_score": {
            "type": "number",
            "minimum": -1,
            "maximum": 1,
            "description": "drop hits whose relevance (the query's cosine with the memory, "
            "about 0.3 loosely related, 0.6 and up close) is below this",
        },
        "provenance": {
            "type": "array",
            "items": {"type": "string", "enum": _PROVENANCES},
            "uniqueItems": True,
            "description": "only memories written by these (unknown: none recorded)",
        },
    },
    ("query",),
)
_LINK_SCHEMA = _obj(
    {
        "src": {**_ID, "description": "the memory the edge starts at (a memory id)"},
        "dst": {**_ID, "description": "the memory the edge points to (a memory id, not src)"},
        "edge": {
            **_S,
            "enum": list(_EDGES),
            "description": "how src relates to dst; "
            + "; ".join(f"{k}: {v}" for k, v in _EDGES.items()),
        },
        "weight": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 1e6,
            "description": "strength of the edge (default 1); linking again adds to it",
        },
    },
    ("src", "dst"),
)


def _tuple(value: Any) -> Any:
    return tuple(value)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "remember",
            schema=_REMEMBER_SCHEMA,
            description="Store one memory (a fact, decision, lesson, observation) in the shared field; returns its id.",
        ),
        Method("remember_many"),
        Method("remember_triplet", result=_tuple),
        Method(
            "get",
            reads=True,
            schema=_obj({"id": _ID}, ("id",)),
            description="Fetch one memory by id, with its kind, tags, confidence and provenance.",
        ),
        Method(
            "forget",
            schema=_obj({"id": _ID}, ("id",)),
            description="Forget (soft-delete) a memory by id; its history stays in the log.",
        ),
        Method("update"),
        Method(
            "link",
            schema=_LINK_SCHEMA,
            description="Add a typed edge src -> dst between two memories (e.g. Supports, Contradicts, Supersedes).",
        ),
        Method(
            "recall",
            reads=True,
            schema=_RECALL_SCHEMA,
            description="Recall the memories that matter most for a query (keyword, semantic and graph lanes "
            "fused), with optional filters and a byte budget.",
        ),
        Method("render"),
        Method(
            "write_gate_stats",
            reads=True,
            schema=_obj({}),
            description="How many memories are staged (written, never recalled) and how old the oldest is.",
        ),
        Method("write_gate_pass"),
        Method(
            "pruned",
            reads=True,
            schema=_obj({}),
            description="List memories the write gate pruned (never recalled for the prune age) "
            "that nobody restored.",
            doors=frozenset({"python", "daemon"}),  # MCP: the list_pruned tool (organs/pruning.py)
        ),
        Method(
            "restore",
            schema=_obj({"id": _ID}, ("id",)),
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
            schema=_obj({}),
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


# ---- argument checks (MCP) ---------------------------------------------------------------
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _check_value(value: Any, schema: Mapping[str, Any], where: str) -> Any:
    """``value`` checked against ``schema`` (the keywords the table uses); an id comes
    back as an int. InvalidArgument names ``where`` and what is expected."""
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        ok = any(
            isinstance(value, _JSON_TYPES[n])
            and not (n in ("integer", "number") and isinstance(value, bool))
            for n in names
        )
        if not ok:
            raise InvalidArgument(
                f"{where} must be {' or '.join(names)}, not {_json_type(value)}"
                + (f" ({schema['description']})" if "description" in schema else "")
            )
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidArgument(f"{where} must be one of {schema['enum']}, not {value!r:.80}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise InvalidArgument(f"{where} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise InvalidArgument(f"{where} must have at most {schema['maxLength']} characters")
        if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
            what = "decimal digits" if schema["pattern"] == _ID["pattern"] else schema["pattern"]
            raise InvalidArgument(f"{where} must match {what}, got {value!r:.40}")
    if schema.get("pattern") == _ID["pattern"]:  # a memory id, as a string or an int
        try:
            return checks.memory_id(value)
        except InvalidArgument as exc:
            raise InvalidArgument(f"{where}: {exc}") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidArgument(f"{where} must be >= {schema['minimum']}, got {value!r}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidArgument(f"{where} must be <= {schema['maximum']}, got {value!r}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise InvalidArgument(f"{where} must be > {schema['exclusiveMinimum']}, got {value!r}")
    if isinstance(value, (list, tuple)):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise InvalidArgument(f"{where} must have at most {schema['maxItems']} items")
        if "items" in schema:
            value = [
                _check_value(item, schema["items"], f"{where}[{i}]") for i, item in enumerate(value)
            ]
        if schema.get("uniqueItems") and len(set(map(repr, value))) != len(value):
            raise InvalidArgument(f"{where} must not repeat an item")
    return value


def _json_type(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if isinstance(value, types) and not (name == "integer" and isinstance(value, bool)):
            return name
    return type(value).__name__


def check_arguments(method: Method, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arguments`` checked against the method's JSON schema (names, types, ranges; ids
    given as strings become ints); InvalidArgument names the first problem and what fits."""
    if method.schema is None:
        raise InvalidArgument(f"{method.name} has no argument schema")
    if arguments is not None and not isinstance(arguments, Mapping):
        raise InvalidArgument(f"{method.name}: the arguments must be an object of name: value")
    args = dict(arguments or {})
    props = method.schema.get("properties", {})
    unknown = sorted(set(args) - set(props))
    if unknown:  # the handlers take exactly the declared names
        raise InvalidArgument(
            f"{method.name}: unknown argument(s) {unknown}; allowed: {sorted(props)}"
        )
    missing = [n for n in method.schema.get("required", ()) if n not in args]
    if missing:
        wanted = "; ".join(
            f"{n} ({props.get(n, {}).get('description', _type_text(props.get(n, {})))})"
            for n in missing
        )
        raise InvalidArgument(f"{method.name}: missing required argument(s): {wanted}")
    for name, value in args.items():
        args[name] = _check_value(value, props[name], f"{method.name}: {name}")
    return args


def _type_text(schema: Mapping[str, Any]) -> str:
    kinds = schema.get("type", "any value")
    return kinds if isinstance(kinds, str) else " or ".join(kinds)


def check_call(method_name: object, params: object) -> tuple[Method, dict[str, Any]]:
    """A daemon request's method and parameters, checked against the table and
    Field's signature (names only; Field checks the values), or, for an organ
    operation, against its schema."""
    methods = table()
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
    try:
        method.signature().bind(None, **params)
    except TypeError as exc:
        raise InvalidArgument(f"{method_name}: {exc}") from exc
    return method, params


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
    global _TABLE
    from chitta.organs import registry

    factories = registry.factories()
    if _TABLE is not None and _TABLE[0] == factories:  # the daemon asks on every request
        return dict(_TABLE[1])
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
    return dict(out)


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
