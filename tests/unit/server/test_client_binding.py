"""RemoteField binds a call's arguments without ``Signature.bind`` where it can
(chitta/server/client.py): for every method of the table, the parameters sent equal what
``Signature.bind`` gives, and a call ``Field`` would refuse raises the same TypeError."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from chitta.server.client import RemoteField
from chitta.server.methods import METHODS


class _Recorder(RemoteField):
    def __init__(self) -> None:  # no connection: _call records instead
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        return None


def _calls(sig: inspect.Signature) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Valid calls: every parameter as a keyword, the positional ones by position, a mix."""
    ps = list(sig.parameters.values())[1:]
    pos = [p for p in ps if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    everything = {p.name: f"v-{p.name}" for p in ps}
    required = {p.name: f"v-{p.name}" for p in ps if p.default is inspect.Parameter.empty}
    out: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((), everything), ((), required)]
    if pos:
        n = len(pos)
        args = tuple(f"v-{p.name}" for p in pos)
        rest = {k: v for k, v in everything.items() if k not in {p.name for p in pos}}
        out.append((args, rest))
        out.append((args[:1], {k: v for k, v in everything.items() if k != pos[0].name}))
        assert n >= 1
    return out


@pytest.mark.parametrize("name", sorted(METHODS))
def test_fast_binding_sends_what_signature_bind_gives(name: str) -> None:
    method = METHODS[name]
    sig = method.signature()
    for args, kwargs in _calls(sig):
        remote = _Recorder()
        try:
            getattr(remote, name)(*args, **kwargs)
        except Exception:  # noqa: BLE001, S110  the result hook on the recorder's None; sent is checked
            pass
        bound = sig.bind(remote, *args, **kwargs)
        want = dict(bound.arguments)
        want.pop(next(iter(sig.parameters)))
        assert remote.sent == [(name, want)]


def test_wrong_calls_raise_type_error() -> None:
    remote = _Recorder()
    with pytest.raises(TypeError):
        remote.get()  # the id is required
    with pytest.raises(TypeError):
        remote.recall("q", 5)  # k is keyword-only
    with pytest.raises(TypeError):
        remote.recall("q", query="again")  # twice
    with pytest.raises(TypeError):
        remote.recall("q", nonsense=1)  # no such parameter
    with pytest.raises(TypeError):
        remote.get(1, 2, 3, 4, 5, 6, 7, 8)  # too many positional
    assert remote.sent == []
