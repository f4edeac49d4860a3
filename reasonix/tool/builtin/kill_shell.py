"""The ``kill_shell`` tool: stop a background job and everything it started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._jobs import jobs

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL", "kill_shell"]

DESCRIPTION = (
    "Terminate a running background job started with bash(run_in_background=true), "
    "including every process it spawned. A no-op if the job has already finished or the "
    "id is unknown."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "description": 'The background job id to terminate (e.g. "bash-1").',
        },
    },
    "required": ["job_id"],
}


def kill_shell(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Kill one job (the tool function)."""
    job_id: str = args["job_id"]
    if jobs.kill(job_id, ctx.session_id):
        return ToolResult(f"Killed background job {job_id!r}.")
    job = jobs.get(job_id, ctx.session_id)
    if job is not None:
        return ToolResult(f"Background job {job_id!r} was not running ({job.status_line()}).")
    return ToolResult(f"Background job {job_id!r} was not running (unknown id).")


TOOL = FunctionTool(
    name="kill_shell", description=DESCRIPTION, schema=SCHEMA, fn=kill_shell, read_only=False
)
register_builtin(TOOL)
