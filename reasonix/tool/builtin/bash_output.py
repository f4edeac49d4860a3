"""The ``bash_output`` tool: new output and status of a background job."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin._jobs import jobs

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL", "bash_output"]

DESCRIPTION = (
    "Read new output from a background job started with bash(run_in_background=true). "
    "Returns the output produced since the last bash_output (or wait) call for that job, plus "
    "its status (running / done / failed / killed, with the exit code). Does not block: call "
    "wait to block until the job finishes."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "description": 'The background job id (e.g. "bash-1") returned when it was started.',
        },
        "filter": {
            "type": "string",
            "description": "Optional regular expression; only matching lines of the new "
            "output are returned (the rest is still consumed).",
        },
    },
    "required": ["job_id"],
}


def bash_output(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Return a job's unread output (the tool function)."""
    job = jobs.get(args["job_id"], ctx.session_id)
    if job is None:
        known = ", ".join(j.id for j in jobs.list(ctx.session_id)) or "none"
        raise ToolError(f"no background job {args['job_id']!r} (jobs of this session: {known})")
    rx = None
    if args.get("filter"):
        try:
            rx = re.compile(args["filter"])
        except re.error as err:
            raise ToolError(f"invalid filter regular expression: {err}") from None
    status = job.status_line()  # read before the output so "done" implies all output is in
    text = job.read_new()
    if rx is not None and text:
        text = "\n".join(line for line in text.splitlines() if rx.search(line))
    header = f"[{job.id}] {status}"
    if not text.strip():
        return ToolResult(f"{header}\n(no new output)")
    return ToolResult(f"{header}\n{text}")


TOOL = FunctionTool(
    name="bash_output", description=DESCRIPTION, schema=SCHEMA, fn=bash_output, read_only=True
)
register_builtin(TOOL)
