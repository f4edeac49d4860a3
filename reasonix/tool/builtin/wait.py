"""The ``wait`` tool: block until background jobs finish, then report them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from reasonix.errors import Cancelled, ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._jobs import Job, jobs

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL", "wait"]

DESCRIPTION = (
    "Block until background jobs finish, then return each job's status and its output not "
    "yet read. Use to collect the result of a bash(run_in_background=true) command before "
    "continuing. Omit job_ids to wait for every running job (and report jobs that finished "
    "since you last looked); set timeout_seconds to return the current progress after that "
    "long instead of waiting for the end."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Background job ids to wait for. Omit to wait for every "
            "currently-running job.",
        },
        "timeout_seconds": {
            "type": "integer",
            "minimum": 1,
            "description": "Optional maximum seconds to block before returning current "
            "progress. Omit to wait until the jobs finish.",
        },
    },
    "required": [],
}


def wait(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Wait for jobs (the tool function)."""
    ids = args.get("job_ids")
    if ids:
        selected: list[Job] = []
        for job_id in ids:
            job = jobs.get(str(job_id), ctx.session_id)
            if job is None:
                raise ToolError(f"no background job {job_id!r}")
            selected.append(job)
    else:
        # Running jobs, plus finished ones whose end the model has not seen yet.
        selected = [j for j in jobs.list(ctx.session_id) if not j.reported]
    if not selected:
        return ToolResult("No background jobs to wait for.")
    timeout = args.get("timeout_seconds")
    deadline = None if timeout is None else time.monotonic() + max(1, int(timeout))
    for job in selected:
        while not job.finished:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            # Short slices keep the call responsive to the turn's cancel token.
            job.wait(0.1 if left is None else min(0.1, left))
            if ctx.cancel.cancelled:
                raise Cancelled(ctx.cancel.reason or "cancelled")
    parts = []
    for job in selected:
        status = job.status_line()
        out = job.read_new()
        parts.append(f"[{job.id}] {status}" + (f"\n{out.rstrip()}" if out.strip() else ""))
    return ToolResult("\n\n".join(parts))


TOOL = FunctionTool(name="wait", description=DESCRIPTION, schema=SCHEMA, fn=wait, read_only=True)
register_builtin(TOOL)
