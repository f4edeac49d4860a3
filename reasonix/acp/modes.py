"""Session modes and config options: permission postures, the model, the effort.

ACP v1 carries the posture twice, as the older ``modes`` state and as a
``configOptions`` entry of category ``mode``; both are kept in sync. Model
selection in stable v1 is a ``select`` config option of category ``model``
(``session/set_config_option``); the reasoning effort is one of category
``thought_level``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.boot import Runtime

from .params import req_str
from .rpc import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MODES", "config_options", "mode_state", "set_config_option"]

MODES: tuple[tuple[str, str, str], ...] = (
    ("ask", "Ask", "Ask before edits, commands and other writes"),
    ("acceptEdits", "Accept edits", "File edits run; commands and other writes ask"),
    ("auto", "Auto", "Everything the rules do not deny runs without asking"),
    ("plan", "Plan", "Plan first: reads run, every write asks"),
    ("dontAsk", "Don't ask", "Only what rules pre-approve runs; nothing asks"),
    ("bypassPermissions", "Bypass permissions", "Everything runs, no questions (yolo)"),
)
_MODE_IDS = tuple(m[0] for m in MODES)
EFFORTS = ("default", "low", "medium", "high")


def mode_state(rt: Runtime) -> dict[str, Any]:
    """The ``SessionModeState`` of a session."""
    return {
        "currentModeId": rt.mode,
        "availableModes": [{"id": i, "name": n, "description": d} for i, n, d in MODES],
    }


def _models(rt: Runtime) -> list[dict[str, str]]:
    """Models worth offering: the current one plus every model of a usable provider."""
    current = rt.resolved.ref
    seen = {current}
    out = [{"value": current, "name": current}]
    for p in rt.config.providers:
        usable = bool(p.api_key) or not p.api_key_env  # a key, or a local server needing none
        if not usable:
            continue
        for model in p.models:
            ref = f"{p.name}/{model}"
            if ref not in seen:
                seen.add(ref)
                out.append({"value": ref, "name": ref})
    return out


def config_options(rt: Runtime) -> list[dict[str, Any]]:
    """The session's ``configOptions`` (mode, model, effort), most important first."""
    effort = rt.config.agent.effort or "default"
    return [
        {
            "id": "mode",
            "name": "Permission mode",
            "category": "mode",
            "type": "select",
            "currentValue": rt.mode,
            "options": [{"value": i, "name": n, "description": d} for i, n, d in MODES],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": rt.resolved.ref,
            "options": _models(rt),
        },
        {
            "id": "effort",
            "name": "Reasoning effort",
            "category": "thought_level",
            "type": "select",
            "currentValue": effort if effort in EFFORTS else "default",
            "options": [{"value": e, "name": e} for e in EFFORTS],
        },
    ]


def check_mode(mode_id: str) -> str:
    """``mode_id`` when it is one of :data:`MODES`, else invalid params."""
    if mode_id not in _MODE_IDS:
        raise RpcError(INVALID_PARAMS, f"unknown mode {mode_id!r}; modes: {', '.join(_MODE_IDS)}")
    return mode_id


def set_config_option(rt: Runtime, params: dict[str, Any]) -> str:
    """Apply one ``session/set_config_option``; returns the option id that changed."""
    config_id = req_str(params, "configId")
    value = params.get("value")
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, "invalid params: value must be a string (a select value)")
    if config_id == "mode":
        rt.set_mode(check_mode(value))
    elif config_id == "model":
        if value not in {m["value"] for m in _models(rt)}:
            raise RpcError(INVALID_PARAMS, f"unknown model {value!r} for this session")
        rt.switch_model(value)
    elif config_id == "effort":
        if value not in EFFORTS:
            raise RpcError(INVALID_PARAMS, f"effort must be one of {', '.join(EFFORTS)}")
        rt.set_effort("" if value == "default" else value)
    else:
        raise RpcError(INVALID_PARAMS, f"unknown config option {config_id!r}")
    return config_id
