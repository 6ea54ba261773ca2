"""The MCP tool table and the server state, independent of the SDK and its transport.

The tools and their JSON schemas come from :func:`chitta.server.methods.table` (the
entries with a schema); :data:`TOOLS` maps each to a function shaping its answer:
a text for the model and a dict for ``structuredContent``. :class:`ChittaMCP`
holds the one field a server process serves (stdio or HTTP) behind one lock.
Nothing here imports the ``mcp`` SDK, so the field can open on a thread while
the SDK is still importing (``chitta/mcp/server.py``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chitta.ops import json_ids

if TYPE_CHECKING:
    from chitta.field import Field
    from chitta.model import Memory
    from chitta.recall.hit import Hit

Answer = tuple[str, dict[str, Any]]
Tool = Callable[["Field", dict[str, Any], "str | None"], Answer]


def memory_json(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "text": m.text,
        "kind": m.kind,
        "realm": m.realm,
        "session": m.session,
        "source_tool": m.source_tool,
        "harness": m.harness,
        "tags": list(m.tags),
        "confidence": m.confidence,
        "strength": m.strength,
        "created_at": m.created_at.isoformat(),
        "access_count": m.access_count,
        "meta": m.meta,
    }


def _hit_json(h: Hit) -> dict[str, Any]:
    return {
        "id": h.id,
        "text": h.text,
        "kind": h.memory.kind,
        "score": round(h.score, 6),
        "relevance": None if h.relevance is None else round(h.relevance, 6),
        "realm": h.memory.realm,
        "tags": list(h.memory.tags),
        "created_at": h.memory.created_at.isoformat(),
    }


def _remember(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    from chitta.policies import provenance as policy

    # the provenance this client's name shows wins over source_tool; an open-weight
    # client may claim only an open-weight provenance (it cannot lift its own quarantine)
    seen = policy.from_writer(client)
    claimed = args.get("provenance")
    if claimed is None and seen is not None:
        args["provenance"] = seen
    elif (
        claimed is not None
        and seen in policy.OPEN_WEIGHT
        and policy.normalise(claimed) not in policy.OPEN_WEIGHT
    ):
        from chitta.errors import ProvenanceRefused

        raise ProvenanceRefused(
            f"client {client!r} is an open-weight model client; it may not claim "
            f"provenance {claimed!r}. Omit provenance (its writes are {seen}); nothing "
            "was logged"
        )
    if args.get("source_tool") is None and client:
        args["source_tool"] = client
    mid = field.remember(**args)
    return f"remembered {mid}", {"id": mid}


def _recall(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    hits = field.recall(**args)
    if not hits:
        return "no memories match", {"hits": []}
    lines = [f"- [{h.memory.kind}] {h.text} (id {h.id})" for h in hits]
    lines.append(
        f"(recall_id {hits[0].recall_id}: pass it to feedback with the memory that helped)"
    )
    return "\n".join(lines), {"hits": [_hit_json(h) for h in hits], "recall_id": hits[0].recall_id}


def _get(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    data = memory_json(field.get(args["id"]))
    organ: Any = field.core.registry.by_name.get("provenance")  # who wrote it, if recorded
    if organ is not None:
        data["provenance"] = organ.provenance(data["id"])
        data["candidate"] = organ.is_candidate(data["id"])
    return json_ids.dumps(data), data


def _forget(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    field.forget(args["id"])
    return f"forgot {args['id']}", {"forgotten": str(args["id"])}


def _link(field: Field, args: dict[str, Any], client: str | None) -> Answer:
    field.link(**args)
    edge = args.get("edge", "RelatedTo")
    return f"linked {args['src']} -{edge}-> {args['dst']}", {
        "src": args["src"],
        "dst": args["dst"],
        "edge": edge,
    }


def _plain(method: str) -> Tool:
    def run(field: Field, args: dict[str, Any], client: str | None) -> Answer:
        value = getattr(field, method)(**args)
        data = value.as_dict() if hasattr(value, "as_dict") else value
        if not isinstance(data, dict):
            data = {"result": data}
        return json_ids.dumps(data), data

    return run


TOOLS: dict[str, Tool] = {
    "remember": _remember,
    "recall": _recall,
    "get": _get,
    "forget": _forget,
    "link": _link,
    "write_gate_stats": _plain("write_gate_stats"),
    "stats": _plain("stats"),
}


def client_name(ctx: Any) -> str | None:
    """The MCP client's ``clientInfo.name`` from the initialize handshake, if any."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name.strip() else None


class ChittaMCP:
    """The server state: one field, one lock.

    :meth:`start_open` opens the field on a thread (so it overlaps the SDK
    import); :meth:`field` waits for it and re-raises its error, if any.
    """

    def __init__(self, path: str | os.PathLike[str] | None, *, embedder: Any = "auto") -> None:
        self._path = path
        self._embedder = embedder
        self._field: Field | None = None
        self._error: BaseException | None = None
        self._opener: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()

    def _open(self) -> None:
        from chitta.field import Field, default_path

        try:
            path = self._path if self._path is not None else default_path()
            self._field = Field(path, embedder=self._embedder)
            self._field.core.learn_async = True  # a server: no write waits for a learning step
        except BaseException as exc:  # noqa: BLE001  (re-raised by field(), on the caller's thread)
            self._error = exc

    def start_open(self) -> None:
        """Begin opening the field on a background thread."""
        if self._opener is None and self._field is None:
            self._opener = threading.Thread(target=self._open, name="chitta-mcp-open", daemon=True)
            self._opener.start()

    def field(self) -> Field:
        """The open field (opened here if :meth:`start_open` was not called)."""
        if self._closed:
            from chitta.errors import ClosedError

            raise ClosedError("the MCP server is shutting down; its field is closed")
        if self._opener is not None:
            self._opener.join()
            self._opener = None
        elif self._field is None and self._error is None:
            self._open()
        if self._error is not None:
            raise self._error
        assert self._field is not None
        return self._field

    def close(self) -> None:
        """Flush and close the field (waits for an open still in flight)."""
        with self._lock:
            self._closed = True
            if self._opener is not None:
                self._opener.join()
                self._opener = None
            if self._field is not None:
                self._field.close()
                self._field = None

    def call(self, name: str, arguments: dict[str, Any] | None, client: str | None) -> Answer:
        """Run one tool (in a worker thread); InvalidArgument for bad arguments.
        The dict has ids as decimal strings (chitta/ops/json_ids.py, D-038)."""
        from chitta.server import methods

        method = methods.table()[name]
        args = methods.check_arguments(method, arguments)
        with self._lock:
            field = self.field()
            if method.reads:
                field.refresh()
            if method.operation is not None:
                text, data = _answer(field.call(name, **args))
            else:
                text, data = TOOLS[name](field, args, client)
        return text, json_ids.json_safe(data)


def _answer(value: Any) -> Answer:
    """An organ operation's result as text for the model plus structuredContent."""
    data = value.as_dict() if hasattr(value, "as_dict") else value
    if not isinstance(data, dict):
        data = {"result": data}
    return json_ids.dumps(data), data


def tool_methods() -> dict[str, Any]:
    """Every method offered as an MCP tool: the Field methods with a tool shaper
    (:data:`TOOLS`) and every registered organ operation offered to MCP."""
    from chitta.server import methods

    return {
        name: m
        for name, m in methods.table().items()
        if (name in TOOLS or m.operation is not None) and "mcp" in m.doors and m.schema is not None
    }


__all__ = ["TOOLS", "Answer", "ChittaMCP", "client_name", "memory_json", "tool_methods"]
