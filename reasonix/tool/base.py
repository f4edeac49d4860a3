"""A convenient concrete Tool: a schema plus a function over parsed arguments.

Built-ins subclass nothing; they build a :class:`FunctionTool` and register
it. ``execute`` parses and checks the JSON arguments against the schema and
turns every failure into an error result the model can read (TOOL contract:
tool errors never crash the loop).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import Cancelled, ReasonixError, ToolError
from reasonix.tool import ToolContext, ToolResult

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FunctionTool", "parse_args"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def parse_args(args_json: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Parse ``args_json`` and check it against the top level of ``schema``.

    Checks: an object, required keys present, declared types (booleans are not
    integers), enums. Defaults declared in the schema are filled in.
    Raises :class:`ToolError` with a message written for the model.
    """
    text = args_json.strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ToolError(f"arguments are not valid JSON: {err.msg} at position {err.pos}") from err
    if not isinstance(value, dict):
        raise ToolError("arguments must be a JSON object")
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in value]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    for key, spec in props.items():
        if key not in value:
            if "default" in spec:
                value[key] = spec["default"]
            continue
        _check_type(key, value[key], spec)
    return value


def _check_type(key: str, item: Any, spec: dict[str, Any]) -> None:
    kind = spec.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if item is None and "null" in kinds:
        return
    if kinds:
        ok = False
        for k in kinds:
            allowed = _JSON_TYPES.get(k)
            if allowed is None:
                continue
            if isinstance(item, bool) and k in ("integer", "number"):
                continue
            if isinstance(item, allowed):
                ok = True
                break
        if not ok:
            raise ToolError(f"argument {key!r} must be of type {'/'.join(kinds)}")
    if "enum" in spec and item not in spec["enum"]:
        choices = ", ".join(repr(c) for c in spec["enum"])
        raise ToolError(f"argument {key!r} must be one of {choices}")


class FunctionTool:
    """A Tool whose behaviour is ``fn(args, ctx)``.

    ``fn`` returns a :class:`ToolResult` or plain text; raising
    :class:`ToolError` gives an error result. ``metadata`` starts empty unless given.
    A plain class, not a dataclass: every run makes some before its first request, and
    a registry may canonicalise a tool's ``schema`` in place (issue 39).
    """

    def __init__(
        self,
        name: str,
        description: str,
        schema: dict[str, Any],
        fn: Callable[[dict[str, Any], ToolContext], ToolResult | str],
        read_only: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.schema = schema
        self.fn = fn
        self.read_only = read_only
        self.metadata: dict[str, Any] = {} if metadata is None else metadata

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        """Parse arguments, run ``fn`` and convert failures into error results."""
        try:
            args = parse_args(args_json, self.schema)
            out = self.fn(args, ctx)
        except Cancelled:
            return ToolResult.error(f"{self.name}: cancelled")
        except ReasonixError as err:
            return ToolResult.error(f"{self.name}: {err}")
        except OSError as err:
            return ToolResult.error(f"{self.name}: {err.strerror or err} ({err.filename or ''})")
        except Exception as err:  # noqa: BLE001 - a tool bug must not crash the loop
            return ToolResult.error(f"{self.name}: internal error {type(err).__name__}: {err}")
        if isinstance(out, ToolResult):
            return out
        return ToolResult(content=out)
