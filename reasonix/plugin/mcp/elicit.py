"""Form-mode elicitation (``elicitation/create``, MCP 2025-06-18 / 2025-11-25): I/O-free rules.

A server may ask the user for a few structured values in the middle of a
call. Reasonix answers only when a frontend installs an :data:`ElicitHook`
(``ConnectOptions.on_elicit``); without one the client advertises no
``elicitation`` capability and a request for it is refused as an unknown
method — a headless run never pretends a user answered.

Two policies ship here:

* :func:`decline_all` — advertise elicitation but always decline (a frontend
  that wants servers to know nobody will answer);
* :func:`accept_defaults` — the opt-in headless policy: accept only when
  every value can come from the schema's own ``default`` (SEP-1034), decline
  otherwise. It never invents user data.

Whatever a hook returns for ``accept`` is completed with the schema defaults
of omitted fields (SEP-1034: the client applies them before sending) and
checked against the requested schema's primitive types, so a server never
receives content its own schema forbids.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from reasonix.errors import PluginError
from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ACTIONS",
    "ElicitHook",
    "ElicitRequest",
    "ElicitResult",
    "accept_defaults",
    "apply_defaults",
    "decline_all",
    "parse_request",
    "result_json",
    "schema_errors",
]

ACTIONS = ("accept", "decline", "cancel")
_TYPES = ("string", "number", "integer", "boolean", "array")


@dataclass(frozen=True)
class ElicitRequest:
    """One form-mode elicitation from ``server``."""

    server: str
    message: str
    schema: Mapping[str, Any]  # ``requestedSchema``: a flat object of primitive properties

    @property
    def properties(self) -> Mapping[str, Any]:
        """The requested fields (name → property schema)."""
        props = self.schema.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        """Names of the fields the server requires."""
        req = self.schema.get("required")
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


@dataclass(frozen=True)
class ElicitResult:
    """The user's answer: ``accept`` (with content), ``decline`` or ``cancel``."""

    action: str
    content: Mapping[str, Any] = field(default_factory=dict)


ElicitHook = Callable[[ElicitRequest], ElicitResult]


def parse_request(server: str, params: Any) -> ElicitRequest:
    """The form-mode request in ``params``; PluginError for URL mode or a malformed one."""
    if not isinstance(params, dict):
        raise PluginError("elicitation/create without params")
    mode = params.get("mode", "form")
    if mode != "form":
        raise PluginError(f"elicitation mode {mode!r} is not supported (form only)")
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise PluginError("elicitation/create needs an object requestedSchema")
    message = params.get("message")
    return ElicitRequest(server, message if isinstance(message, str) else "", schema)


def apply_defaults(schema: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` with every omitted field that has a schema ``default`` filled in (SEP-1034)."""
    out = dict(content)
    props = schema.get("properties")
    for name, prop in (props if isinstance(props, dict) else {}).items():
        if name not in out and isinstance(prop, dict) and "default" in prop:
            out[name] = prop["default"]
    return out


def _type_ok(kind: Any, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(float(value))
        )
    if kind == "array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return kind not in _TYPES  # a type we do not know: the server checks it


def _allowed(prop: Mapping[str, Any]) -> list[Any] | None:
    """The permitted values of an enum field (``enum`` or titled ``oneOf``/``anyOf``)."""
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list):
            return [o.get("const") for o in options if isinstance(o, dict) and "const" in o]
    return None


def schema_errors(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """Why ``content`` does not fit the requested schema ([] when it does).

    Checks what the elicitation schema subset can say: required fields,
    primitive types and enum membership; unknown fields are refused.
    """
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    problems: list[str] = []
    req = schema.get("required")
    for name in req if isinstance(req, list) else []:
        if name not in content:
            problems.append(f"{name}: required")
    for name, value in content.items():
        prop = props.get(name)
        if not isinstance(prop, dict):
            problems.append(f"{name}: not in the requested schema")
            continue
        if not _type_ok(prop.get("type"), value):
            problems.append(f"{name}: not a {prop.get('type')}")
            continue
        allowed = _allowed(prop)
        values = value if isinstance(value, list) else [value]
        if allowed is not None and any(v not in allowed for v in values):
            problems.append(f"{name}: {value!r} is not one of {allowed!r}")
    return problems


def decline_all(request: ElicitRequest) -> ElicitResult:
    """A policy that always declines (nobody is there to answer)."""
    del request
    return ElicitResult("decline")


def accept_defaults(request: ElicitRequest) -> ElicitResult:
    """The opt-in headless policy: accept with the schema's defaults, or decline.

    Accepts only when the defaults alone make a valid answer — every required
    field has a default and every default fits its field. Nothing else is
    ever filled in: a field without a default means the server needs a real
    user, and we decline.
    """
    content = apply_defaults(request.schema, {})
    if schema_errors(request.schema, content):
        return ElicitResult("decline")
    return ElicitResult("accept", content)


def result_json(request: ElicitRequest, answer: ElicitResult) -> dict[str, Any]:
    """The ``elicitation/create`` result for ``answer``; PluginError when it is not sendable.

    An accepted answer is completed with defaults (SEP-1034) and must then
    fit the schema; declined and cancelled answers carry no content.
    """
    if answer.action not in ACTIONS:
        raise PluginError(f"unknown elicitation action {answer.action!r}")
    if answer.action != "accept":
        return {"action": answer.action}
    content = apply_defaults(request.schema, answer.content)
    problems = schema_errors(request.schema, content)
    if problems:
        raise PluginError("the elicitation answer does not fit the schema: " + "; ".join(problems))
    return {"action": "accept", "content": content}
