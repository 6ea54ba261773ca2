"""``chitta mcp`` to the MCP spec 2025-11-25, checked with the SDK's own client over a
real ``chitta mcp --no-host`` (the toy organ registered, so organ operations are
tools too): SEP-1303 validation results for every tool, protocol errors only for
an unknown tool, annotations checked against what reaches the disk, structured
content validated by ``jsonschema``, ids above 2**53 as strings (D-038),
resources and the prompt. Params that are not an object (a malformed request)
are covered by test_mcp_every_line_answered.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")
import anyio
import mcp_types as types
from daemontools import child_env, chitta_command
from fieldtools import segment_files
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import chitta
from chitta import ops

HELPERS = Path(__file__).resolve().parents[2] / "helpers"
INSTANCE = 0xDEADBEEF  # ids of this writer are above 2**53
TOOLS = {"remember", "recall", "get", "forget", "link", "write_gate_stats", "stats"}


@asynccontextmanager
async def session(field: Path) -> AsyncIterator[ClientSession]:
    cmd = chitta_command()
    env = child_env(CHITTA_ORGANS="toy_organ:SessionTally")
    env["PYTHONPATH"] = f"{HELPERS}:{env.get('PYTHONPATH', '')}"
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--path", str(field), "mcp", "--no-host"],
        cwd=str(field.parent),
        env=env,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


def seeded(tmp_path: Path) -> tuple[Path, list[int]]:
    """A field with three memories written by a writer whose ids exceed 2**53 (then four
    lessons, a debt and a pruned memory for the learning tools)."""
    field = tmp_path / "field"
    with chitta.open(field, instance_id=INSTANCE, embedder=None, clock=lambda: _EPOCH) as f:
        old = f.remember("an old note nobody recalled")  # pruned below: restore_pruned has one
    with chitta.open(field, instance_id=INSTANCE, embedder=None) as f:
        ids = [
            f.remember("the staging database listens on port 5433", tags=["ops"]),
            f.remember("deploys need the VPN", kind="decision"),
            f.remember("the CI runs on 2 cores"),
        ]
        f._core.commit(  # a code symbol for the code tools (chitta/organs/code/)
            ops.UpsertSymbol(name="a.py#f", kind="function", file_path="a.py", line_end=3)
        )
        f._core.commit(  # a theme for the themes tools (chitta/organs/themes.py)
            ops.ThemeEvent(event="create", theme=7, at_ms=1, centroid=b"\x00\x00\x80\x3f" * 2)
        )
        # for the learning organs' tools: a recurring lesson (4 times, 2 sessions), a debt
        ids += [
            f.remember("lesson: rebase before you push", kind="lesson", session=f"s{i % 2}")
            for i in range(4)
        ]
        debt = f.call("debt_register", question="why does CI flake?")
        f.call("debt_evidence", debt_id=debt["id"], memory_ids=[ids[2]], confidence=0.5)
    with chitta.open(field, instance_id=INSTANCE, embedder=None) as f:
        assert f.write_gate_pass() == 1
    EXTRA.update(debt=debt["id"], pruned=str(old))
    assert all(i > 2**53 for i in ids)  # the case a double cannot hold
    _seed_curated(field)
    return field, ids


def _seed_curated(field: Path) -> None:
    """A curated vocabulary (closed to MCP), a fact and a dispute the curated tools name."""
    with chitta.open(field, embedder=None) as f:
        f.call("vocabulary_declare", path="build", descriptor="how it builds")
        f.call("vocabulary_declare", path="build/cache", descriptor="the build cache")
        a = f.call("memory_remember", body="ccache in ~/.ccache", paths=["build/cache"])["fact"]
        b = f.call("memory_remember", body="no ccache on CI", paths=["build/cache"])["fact"]
        c = f.call("memory_remember", body="ccache on CI", paths=["build/cache"], disputes=b)[
            "fact"
        ]
    _CURATED["memory_fact"] = {"id": a}
    _CURATED["memory_supersede"] = {"fact": a, "body": "ccache in /var/cache/ccache"}
    _CURATED["memory_resolve"] = {"fact": b, "other": c, "winner": "both"}


_EPOCH = 1_600_000_000.0  # 2020: long past the write gate's prune age
EXTRA: dict[str, str] = {}  # ids seeded() made that are not live memories


def disk_bytes(field: Path) -> int:
    return sum(p.stat().st_size for p in segment_files(field))


def valid_args(name: str, ids: list[int]) -> dict[str, Any]:
    """Good arguments per tool; a tool missing here fails the test (cover new tools)."""
    return {
        "remember": {"text": "a new note"},
        "recall": {"query": "staging database port"},
        "get": {"id": str(ids[0])},
        "forget": {"id": str(ids[2])},
        "link": {"src": str(ids[0]), "dst": str(ids[1]), "edge": "Supports"},
        "write_gate_stats": {},
        "stats": {},
        "session_tally": {"session": "s1"},
        "session_note": {"session": "s1"},
        "kg_add": {"subject": "staging", "predicate": "listens_on", "object": "5433"},
        "kg_invalidate": {"subject": "staging", "predicate": "listens_on", "object": "5433"},
        "kg_alias": {"alias": "stg", "canonical": "staging"},
        "kg_query": {"subject": "staging"},
        "kg_entities": {},
        "kg_extract": {"text": "Jeff uses Rust."},
        "route_query": {"query": "what did Ana decide about the schema in May?"},
        "themes": {"vector": [1.0, 0.0]},
        "theme_members": {"theme": 7},
        "settle": {"seeds": [str(ids[0])]},
        "attractor_settle": {"code": [1, 2, 3]},
        "what_do_i_know_about": {"topic": "staging database"},
        "cross_harness_conflicts": {},
        "get_conflicts": {"id": str(ids[0])},
        "staleness": {"id": str(ids[0])},
        "mark_invalidated": {"id": str(ids[0]), "by": "abc123"},
        "note_test": {"target": "a.py#f", "passed": True},
        "record_commit": {"commit": "abc123", "changes": {"a.py": [[1, 2]]}},
        "find_symbol": {"name": "f"},
        "index_code": {"root": str(Path(__file__).parent)},
        "symbol_events": {"symbol": "a.py#f"},
        **_CURATED,
        "feedback": {"memory_id": str(ids[0]), "useful": True},
        "record_outcome": {"expected": "ok", "actual": "ok", "memory_ids": [str(ids[0])]},
        "feedback_stats": {},
        "source_weights": {},
        "scorer_model": {},
        "surprise_credit": {"id": str(ids[0])},
        "wisdom_candidates": {},
        "distill": {},
        "wisdom_contradict": {"cluster_key": f"distill:{ids[3]}"},
        "wisdom_clear": {"cluster_key": f"distill:{ids[3]}"},
        "debt_register": {"question": "why?"},
        "debt_evidence": {"debt_id": EXTRA["debt"], "memory_ids": [str(ids[0])], "confidence": 0.5},
        "debt_update": {"debt_id": EXTRA["debt"], "status": "open"},
        "debts": {},
        "debt_auto_resolve": {},
        "record_access": {"ids": [str(ids[0])]},
        "predict_next": {"id": str(ids[0])},
        "list_pruned": {},
        "restore_pruned": {"id": EXTRA["pruned"]},
        "set_prune_days": {"days": 7},
        "set_maintenance_every": {"name": "debts.auto_resolve", "every_s": 600},
        "provenance_of": {"id": str(ids[0])},
        "candidates": {},
        "reconcile_all": {},
    }[name]


_ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
_CURATED: dict[str, dict[str, Any]] = {
    "vocabulary_show": {},
    "memory_remember": {"body": "a fact", "paths": ["build/cache"]},
    "memory_supersede": {"fact": _ULID, "body": "a new version"},
    "memory_resolve": {"fact": _ULID, "other": _ULID, "winner": "both"},
    "memory_catalog": {},
    "memory_recall": {"paths": ["build/cache"]},
    "memory_pin": {"task": "t1", "paths": ["build/cache"]},
    "memory_pinned": {"task": "t1"},
    "memory_channel": {"task": "t1", "role": "implementer"},
    "memory_fact": {"id": _ULID},
    "memory_export": {"directory": "tree"},
}


def wrong_type(schema: dict[str, Any]) -> Any:
    """A value of a JSON type the property's schema does not allow."""
    allowed = schema.get("type", [])
    allowed = [allowed] if isinstance(allowed, str) else allowed
    for value in ({"x": 1}, [1], "many", 1.5, True):
        kind = {dict: "object", list: "array", str: "string", float: "number", bool: "boolean"}
        if kind[type(value)] not in allowed and not (type(value) is float and "number" in allowed):
            return value
    raise AssertionError(f"no wrong type for {schema}")


def test_every_tool_reports_bad_arguments_as_tool_errors(tmp_path: Path) -> None:
    field, ids = seeded(tmp_path)
    before = disk_bytes(field)

    async def main() -> int:
        calls = 0
        async with session(field) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert TOOLS | {"session_tally", "session_note"} <= set(tools)
            for name, tool in tools.items():
                good = valid_args(name, ids)
                props = tool.input_schema["properties"]
                cases: list[tuple[str, dict[str, Any]]] = [
                    ("zz_unknown", {**good, "zz_unknown": 1})
                ]
                for req in tool.input_schema.get("required", []):
                    cases.append((req, {k: v for k, v in good.items() if k != req}))
                for prop, schema in props.items():
                    cases.append((prop, {**good, prop: wrong_type(schema)}))
                for arg, bad in cases:
                    res = await s.call_tool(name, bad)  # never an MCPError (SEP-1303)
                    text = res.content[0].text
                    assert res.is_error, (name, bad)
                    assert text.startswith("InvalidArgument") and arg in text, (name, bad, text)
                    assert res.structured_content is None  # the message is the content
                    calls += 1
        return calls

    calls = anyio.run(main)
    assert calls > 40
    assert disk_bytes(field) == before  # nothing written by any refused call
    with chitta.open(field, read_only=True, embedder=None) as f:
        assert sorted(f.ids()) == sorted(ids)


def test_value_errors_and_unknown_tools(tmp_path: Path) -> None:
    field, ids = seeded(tmp_path)
    before = disk_bytes(field)

    async def main() -> None:
        async with session(field) as s:
            for name, args, needle in [
                ("remember", {"text": "  "}, "text"),
                ("remember", {"text": "x", "kind": "poem"}, "kind"),
                ("remember", {"text": "x", "confidence": 2}, "confidence"),
                ("recall", {"query": "x", "k": 0}, "k"),
                ("recall", {"query": "x", "kinds": ["poem"]}, "kinds[0]"),
                ("get", {"id": "12ab"}, "id"),
                ("get", {"id": "0"}, "id"),
                ("get", {"id": str(2**64)}, "id"),
                ("link", {"src": str(ids[0]), "dst": str(ids[0])}, "itself"),
                ("link", {"src": str(ids[0]), "dst": str(ids[1]), "weight": 0}, "weight"),
            ]:
                res = await s.call_tool(name, args)
                assert res.is_error and needle in res.content[0].text, (name, args, res)
            missing = await s.call_tool("get", {"id": "12345"})
            assert missing.is_error and missing.content[0].text.startswith("NotFound")
            with pytest.raises(MCPError) as info:  # the one protocol error: no such tool
                await s.call_tool("nope", {})
            assert (
                info.value.error.code == types.INVALID_PARAMS and "nope" in info.value.error.message
            )

    anyio.run(main)
    assert disk_bytes(field) == before


def test_annotations_output_schemas_and_big_ids(tmp_path: Path) -> None:
    field, ids = seeded(tmp_path)
    results: dict[str, Any] = {}

    async def main() -> None:
        async with session(field) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            recall_kinds = tools["recall"].input_schema["properties"]["kinds"]
            assert recall_kinds["type"] == "array" and "decision" in recall_kinds["items"]["enum"]
            for prop in ("kind", "session", "tags", "confidence"):
                assert tools["remember"].input_schema["properties"][prop]["description"]
            for prop in ("edge", "weight"):
                assert tools["link"].input_schema["properties"][prop]["description"]
            assert tools["recall"].input_schema["properties"]["include_staged"]["description"]
            # every tool: schema valid, annotations present, the hints checked on disk
            order = ["stats", "write_gate_stats", "get", "session_tally", "recall", "remember"]
            order += [
                "link",
                "session_note",
                "forget",
                "kg_query",
                "kg_entities",
                "kg_extract",
                "themes",
                "theme_members",
                "kg_add",
                "kg_alias",
            ]
            order += ["kg_invalidate", "settle", "attractor_settle"]
            order += ["what_do_i_know_about", "cross_harness_conflicts", "get_conflicts"]
            order += ["staleness", "mark_invalidated", "note_test", "record_commit"]
            order += ["find_symbol", "symbol_events", "index_code"]
            order += ["vocabulary_show", "memory_catalog", "memory_recall", "memory_fact"]
            order += ["memory_export", "memory_remember", "memory_supersede", "memory_resolve"]
            order += ["memory_pin", "memory_pinned", "memory_channel"]
            order += ["feedback_stats", "source_weights", "scorer_model", "surprise_credit"]
            order += ["wisdom_candidates", "debts", "predict_next", "list_pruned"]
            order += ["feedback", "record_outcome", "distill", "wisdom_contradict", "wisdom_clear"]
            order += ["debt_register", "debt_evidence", "debt_update", "debt_auto_resolve"]
            order += ["record_access", "set_prune_days", "set_maintenance_every", "restore_pruned"]
            order += ["provenance_of", "candidates", "reconcile_all", "route_query"]
            assert set(order) == set(tools)
            for name in order:
                tool = tools[name]
                hints = tool.annotations
                assert hints is not None and hints.open_world_hint is False, name
                jsonschema.Draft202012Validator.check_schema(tool.output_schema)
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                size = disk_bytes(field)
                res = await s.call_tool(name, valid_args(name, ids))
                assert not res.is_error, (name, res)
                jsonschema.validate(res.structured_content, tool.output_schema)
                wrote = disk_bytes(field) != size
                assert wrote is not hints.read_only_hint, (name, wrote)
                size = disk_bytes(field)
                again = await s.call_tool(name, valid_args(name, ids))
                if hints.idempotent_hint:  # a repeat changes nothing more (forget: NotFound)
                    assert disk_bytes(field) == size, name
                elif name != "recall":  # recall of the same query records accesses again
                    assert disk_bytes(field) != size, name
                results[name] = (res.structured_content, again)
            assert tools["forget"].annotations.destructive_hint is True
            assert tools["get"].annotations.destructive_hint is False

            # ids above 2**53: strings on the wire, both forms taken back
            hit = results["recall"][0]["hits"][0]
            assert hit["id"] == str(ids[0])
            as_js = json.loads(json.dumps(results["recall"][0]), parse_int=float)
            assert as_js["hits"][0]["id"] == str(ids[0])  # a double reader keeps it exact
            for form in (str(ids[1]), ids[1]):
                got = (await s.call_tool("get", {"id": form})).structured_content
                assert got["id"] == str(ids[1]) and got["kind"] == "decision"
            new = results["remember"][0]["id"]
            assert isinstance(new, str) and new.isdigit()
            assert (await s.call_tool("get", {"id": new})).structured_content["text"] == (
                "a new note"
            )
            assert results["link"][0] == {
                "src": str(ids[0]),
                "dst": str(ids[1]),
                "edge": "Supports",
            }
            assert results["forget"][0] == {"forgotten": str(ids[2])}
            assert results["stats"][0]["instance_id"].isdigit()

            # resources and the prompt
            listed = [r.uri for r in (await s.list_resources()).resources]
            assert "chitta://stats" in [str(u) for u in listed]
            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["chitta://memory/{id}"]
            body = (await s.read_resource(f"chitta://memory/{ids[0]}")).contents[0]
            memory = json.loads(body.text, parse_int=float)
            assert memory["id"] == str(ids[0]) and memory["text"].startswith("the staging")
            stats = json.loads((await s.read_resource("chitta://stats")).contents[0].text)
            # 3 seeded + 4 lessons + 2 remembered + 1 wisdom (distill) + 1 restored - 1 forgotten
            assert stats["memories"] == 10
            with pytest.raises(MCPError):
                await s.read_resource(f"chitta://memory/{ids[2]}")  # forgotten
            prompts = (await s.list_prompts()).prompts
            assert [p.name for p in prompts] == ["recall-before-you-start"]
            prompt = await s.get_prompt("recall-before-you-start", {"task": "fixing CI"})
            assert "fixing CI" in prompt.messages[0].content.text
            assert "recall" in prompt.messages[0].content.text

    anyio.run(main)
    with chitta.open(field, read_only=True, embedder=None) as f:
        assert ids[2] not in f and len(f) == 10
        assert f.get(ids[0]).text.startswith("the staging")
