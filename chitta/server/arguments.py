"""Checks of a call's arguments against a method's JSON schema (the MCP tools, organ
operations, the daemon's JSON dialect): names, types, ranges, enums; ids given as
decimal strings become integers. Errors are InvalidArgument naming the argument and
what fits."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chitta.errors import InvalidArgument
from chitta.ops import checks
from chitta.server.schemas import ID

if TYPE_CHECKING:
    from chitta.server.methods import Method

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
            what = "decimal digits" if schema["pattern"] == ID["pattern"] else schema["pattern"]
            raise InvalidArgument(f"{where} must match {what}, got {value!r:.40}")
    if schema.get("pattern") == ID["pattern"]:  # a memory id, as a string or an int
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


__all__ = ["check_arguments"]
