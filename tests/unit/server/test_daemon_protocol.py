"""The shared method table and the wire codec (no processes)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta import errors
from chitta.server import protocol
from chitta.server.client import RemoteField

# Public Field members that do not cross the wire, and why.
LOCAL_ONLY = {
    "close": "closes the handle itself (RemoteField.close closes the connection)",
    "path": "a property (RemoteField.path reads the daemon's answer)",
    "instance_id": "a property (as path)",
    "closed": "a property of the handle",
    "read_only": "a property of how the daemon opened the field",
    "durability": "a property of how the daemon opened the field",
    "salvaged": "an attribute of the daemon's open",
    "call": "RemoteField.call sends an organ operation by name (the table's organ entries)",
    "organ": "returns the organ object itself: in-process state, not a value for the wire",
    "explain_route": "returns a RouteInfo of this process's parse (a remote recall routes itself)",
    "set_slot_filler": "takes a Python callable (the model hook): in-process only",
}


def _public_methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def test_every_table_method_has_the_same_signature_on_field_and_remote_field() -> None:
    for name in protocol.METHODS:
        assert hasattr(chitta.Field, name), name
        assert hasattr(RemoteField, name), name
        assert inspect.signature(getattr(chitta.Field, name)) == inspect.signature(
            getattr(RemoteField, name)
        ), name


def test_every_public_field_method_is_in_the_table_or_declared_local() -> None:
    missing = _public_methods(chitta.Field) - set(protocol.METHODS) - set(LOCAL_ONLY)
    assert not missing, (
        f"add these to chitta.server.protocol.METHODS (or LOCAL_ONLY here): {sorted(missing)}"
    )


def test_mcp_schemas_name_only_real_parameters() -> None:
    for method in protocol.METHODS.values():
        if method.schema is not None:
            assert set(method.schema["properties"]) <= set(method.params()), method.name
            assert method.description


def test_memory_hit_and_stats_round_trip_as_the_same_types(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder="hashing") as field:
        mid = field.remember("the build uses ninja", tags=["build", "ci"], meta={"n": 1})
        hits = field.recall("ninja", explain=True)
        memory, stats = field.get(mid), field.stats()
    value = {
        "m": memory,
        "hits": hits,
        "stats": stats,
        "pair": (1, 2),
        "arr": np.arange(6, dtype="<i8").reshape(2, 3),
    }
    back = protocol.unpack(protocol.pack(value))
    assert isinstance(back["m"], chitta.Memory) and back["m"] == memory
    assert back["m"].tags == ("build", "ci") and back["m"].embedding.dtype == np.float32
    assert back["hits"] == hits and back["hits"][0].factors == hits[0].factors
    assert back["stats"] == stats
    assert np.array_equal(back["arr"], value["arr"]) and back["arr"].shape == (2, 3)


def test_error_reply_recreates_the_same_class() -> None:
    for exc in (
        errors.NotFound("no memory with id 5"),
        errors.InvalidArgument("bad"),
        errors.LockedError("held"),
        errors.CrcMismatch("crc"),
        protocol.ProtocolError("frame"),
    ):
        again = protocol.error_from(protocol.unpack(protocol.pack(protocol.error_body(exc))))
        assert type(again) is type(exc) and str(again) == str(exc)
    assert type(protocol.error_from(protocol.error_body(RuntimeError("x")))) is errors.ChittaError


@pytest.mark.parametrize("body", [b"\xc1", b"\x92\x01"])
def test_unpack_of_garbage_is_a_protocol_error(body: bytes) -> None:
    try:
        protocol.unpack(body)
    except protocol.ProtocolError:
        return
    # b"\x92\x01" is a truncated array: also refused
    raise AssertionError("garbage decoded")


def test_check_call_refuses_unknown_methods_and_parameters() -> None:
    with pytest.raises(errors.InvalidArgument, match="unknown method"):
        protocol.check_call("close", {})
    with pytest.raises(errors.InvalidArgument, match="remember"):
        protocol.check_call("remember", {"txt": "x"})
    with pytest.raises(errors.InvalidArgument, match="params"):
        protocol.check_call("get", [1])


def test_check_arguments_follows_the_json_schema() -> None:
    recall = protocol.METHODS["recall"]
    assert protocol.check_arguments(recall, {"query": "x", "k": 3}) == {"query": "x", "k": 3}
    for bad in (
        {},
        {"query": 3},
        {"query": "x", "k": True},
        {"query": "x", "k": 0},
        {"query": "x", "kinds": [1]},
        {"query": "x", "nope": 1},
    ):
        with pytest.raises(errors.InvalidArgument):
            protocol.check_arguments(recall, bad)


def test_lifecycle_reports_cross_the_wire_as_themselves() -> None:
    from chitta.policies.contradictions import ContradictionPair
    from chitta.policies.curation import CurationReport
    from chitta.policies.dedup import DedupReport

    values = [
        CurationReport(examined=5, expired=1, deduplicated=2, decayed=3, bad_expiry=0, at_ms=7),
        DedupReport(examined=4, exact=1, near=1, merges=((1, 2), (3, 4))),
        ContradictionPair(
            a=1, b=2, score=0.6, reason="kind_mismatch", realm=None, prefix="the build uses"
        ),
    ]
    for value in values:
        back = protocol.unpack(protocol.pack(value))
        assert back == value and type(back) is type(value)
