"""What the model sees of the delegation tools: their schemas and descriptions (data only).

Kept apart from :mod:`.tools` so a runtime can declare these tools in its
first request without importing the spawn primitive behind them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DELEGATION_TOOLS",
    "DESCRIPTIONS",
    "FLEET_MAX",
    "FLEET_MIN",
    "READ_ONLY",
    "READ_ONLY_DELEGATION",
    "SCHEMAS",
]

DELEGATION_TOOLS = ("task", "read_only_task", "parallel_tasks", "fleet", "run_skill")
READ_ONLY_DELEGATION = ("read_only_task", "parallel_tasks")

FLEET_MIN, FLEET_MAX = 2, 64

_PROMPT = {"type": "string", "description": "The whole task; the sub-agent sees nothing else."}
_PROFILE = {"type": "string", "description": "A [subagent] skill to run as (optional)."}
_MODEL = {"type": "string"}
_EFFORT = {"type": "string"}
_STEPS = {"type": "integer", "description": "Tool-round budget (0 = default)."}
_WRITE_PATHS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Paths it may change, all else refused (omitted: the whole workspace).",
}
_CONTINUE = {"type": "string", "description": "A transcript id from earlier receipts."}
_FORK = {"type": "string", "description": "Like continue_from, on a copy."}


# The call's own budget (issue 36), each cut to what the parent has left; 0 or absent: the
# [agent] default. No descriptions: the names say it, and small windows pay for every byte.
_BUDGET = {
    "max_tokens": {"type": "integer"},
    "max_cost": {"type": "number"},
    "max_turns": {"type": "integer"},
    "max_minutes": {"type": "number"},
}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_ITEM_PROPS = {
    "prompt": _PROMPT, "profile": _PROFILE, "model": _MODEL, "effort": _EFFORT, **_BUDGET,
}  # fmt: skip

SCHEMAS: dict[str, dict[str, Any]] = {
    "task": _obj(
        {
            **_ITEM_PROPS,
            "write_paths": _WRITE_PATHS,
            "max_steps": _STEPS,
            "continue_from": _CONTINUE,
            "fork_from": _FORK,
        },
        ["prompt"],
    ),
    "read_only_task": _obj(
        {**_ITEM_PROPS, "max_steps": _STEPS, "continue_from": _CONTINUE, "fork_from": _FORK},
        ["prompt"],
    ),
    "parallel_tasks": _obj(
        {
            "tasks": {
                "type": "array",
                "minItems": FLEET_MIN,
                "maxItems": FLEET_MAX,
                "items": _obj(dict(_ITEM_PROPS), ["prompt"]),
            }
        },
        ["tasks"],
    ),
    "fleet": _obj(
        {
            "tasks": {
                "type": "array",
                "minItems": FLEET_MIN,
                "maxItems": FLEET_MAX,
                "items": _obj(
                    {
                        "id": {"type": "string", "description": "Default: its position."},
                        **_ITEM_PROPS,
                        "write_paths": _WRITE_PATHS,
                        "read_only": {"type": "boolean"},
                        "depends_on": {"type": "array", "items": {"type": "string"}},
                    },
                    ["prompt"],
                ),
            },
            "fail_fast": {"type": "boolean", "description": "Start nothing new after a failure."},
        },
        ["tasks"],
    ),
    "run_skill": _obj(
        {
            "name": {"type": "string"},
            "arguments": {"type": "string", "description": "A [subagent] skill's whole task."},
            "file": {"type": "string", "description": "Read one of its listed files instead."},
        },
        ["name"],
    ),
}

DESCRIPTIONS = {
    "task": "Delegate one self-contained task to an isolated sub-agent that may change files "
    "(it sees only your prompt). Returns the host's verdict on its completion report, its "
    "answer and the host's receipts of what it ran, read and wrote. Costs a whole extra run.",
    "read_only_task": "Delegate one read-only question to an isolated sub-agent; only its "
    "answer and the host's receipts come back.",
    "parallel_tasks": "Run 2-64 independent read-only questions as concurrent sub-agents.",
    "fleet": "Run 2-64 sub-agent tasks as a dependency graph: an item starts once its "
    "depends_on items complete; a failed item skips its downstream; items that may run at "
    "the same time need disjoint write_paths; results are not passed on.",
    "run_skill": "Use a skill from the skill index: inline ones return their instructions "
    "and file list; [subagent] ones run a sub-agent on `arguments`.",
}

READ_ONLY = frozenset({"read_only_task", "parallel_tasks"})  # gated like reads
