"""Organ operations run on a field: ``Field.call(name, **arguments)``.

An organ declares its operations (:class:`chitta.organs.contract.Operation`);
this module finds one by name among the field's organs, checks the arguments
against its JSON schema (the same check every door makes), and runs its
handler with the organ and a :class:`CallContext`: the one way an operation
writes (ops go through the log like every other write) and reads the clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.ops import Op
from chitta.organs.contract import Operation, Organ

if TYPE_CHECKING:
    from chitta.field.core import FieldCore


class CallContext:
    """What an operation's handler may do with the field beyond its own organ."""

    def __init__(self, core: FieldCore) -> None:
        self._core = core

    @property
    def core(self) -> FieldCore:
        """The field itself, for handlers in ``chitta.field`` / ``chitta.policies`` that
        read several organs through their queries (e.g. chitta/policies/code_trust.py;
        an organ's own handler reads only its organ)."""
        return self._core

    @property
    def read_only(self) -> bool:
        return self._core.read_only

    def now_ms(self) -> int:
        """The field's clock, in epoch milliseconds."""
        return self._core.now_ms()

    def new_id(self) -> int:
        """A fresh memory id of this instance (unique across instances)."""
        return self._core.new_id()

    def refresh(self) -> int:
        """Apply what other writers appended since this handle last looked; returns
        the records read (an operation re-checks a decision against them)."""
        with self._core.lock:
            return self._core.replay()

    def commit(self, *group: Op) -> None:
        """Append ``group`` (one op, or several as one atomic Batch) and apply it to
        every organ that handles its types. Each op is validated first."""
        self._core.check_writable()
        for op in group:
            ops.validate(op)
        self._core.commit_group(list(group))


def find(organs: Sequence[Organ], name: str) -> tuple[Organ, Operation]:
    for organ in organs:
        for operation in organ.operations:
            if operation.name == name:
                return organ, operation
    known = sorted(op.name for organ in organs for op in organ.operations)
    raise InvalidArgument(f"no operation named {name!r}; this field's organs offer {known}")


def call(core: FieldCore, name: object, arguments: dict[str, Any]) -> Any:
    from chitta.server.methods import Method, check_arguments

    if not isinstance(name, str):
        raise InvalidArgument(f"an operation name is a str, not {type(name).__name__}")
    organ, operation = find(core.organs, name)
    method = Method(operation.name, schema=dict(operation.schema), operation=operation)
    args = check_arguments(method, arguments)
    if operation.writes:
        core.check_writable()
    else:
        core.check_open()
    with core.lock:
        return operation.handler(organ, CallContext(core), **args)
