"""The ``bash`` tool (TOOL-13): run a shell command, foreground or background.

``["bash", "-c", command]`` runs in ``ctx.cwd`` (else the workspace) with
stdin from /dev/null and stdout+stderr merged. Foreground calls stop at
``ctx.bash_timeout`` seconds (0 = no tool-local cap); a timeout or a cancel
kills the whole process group (see :mod:`._proc`). When ``ctx.sandbox`` is a
:class:`SandboxSettings`, the command is wrapped by the permission layer; if
enforcement is asked for but unavailable, the call is refused (CFG-12) —
never run unconfined.

``additional_write_dirs`` (with a ``justification``) asks to make directories
outside the roots writable for this command; ``escape_sandbox`` asks for one
unsandboxed retry of a command the sandbox just blocked (see :mod:`._bash_scope`).

With a terminal port (``ctx.ports.terminal``, an editor over ACP) a foreground
command runs in the frontend's terminal instead, already wrapped and with the
same environment; background jobs stay local.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import SandboxUnavailable, ToolError
from reasonix.lazy import replace
from reasonix.permission.sandbox import SandboxSettings, default_cache_roots, wrap_command
from reasonix.tool import CONTENT_LIMIT_BYTES, ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin import _bash_scope
from reasonix.tool.builtin._jobs import jobs
from reasonix.tool.builtin._proc import run_command
from reasonix.tool.paths import base_dir
from reasonix.which import which

if TYPE_CHECKING:
    from typing import Any

__all__ = ["TOOL", "OutputBuffer", "bash", "prepare"]

RAW_HEAD_BYTES = 4 * 1024 * 1024  # raw_content keeps this much of the start…
RAW_TAIL_BYTES = 4 * 1024 * 1024  # …and of the end; a runaway command cannot eat memory
# The provider sees head and tail in equal parts: a failing build's error sits
# at the end, the command's own context at the start.
_VISIBLE_BUDGET = CONTENT_LIMIT_BYTES - 512

DESCRIPTION = (
    "Execute a command with bash and return combined stdout/stderr plus the exit code. "
    "Use for builds, tests, git, package managers, running programs. stdin is /dev/null, "
    "so interactive commands fail; pass non-interactive flags. Foreground commands are "
    "killed (with everything they started) after the configured timeout. For long-running "
    "servers or watchers set run_in_background=true, then read output with bash_output, "
    "wait with wait, stop with kill_shell. To search/read/list/edit files prefer the "
    "dedicated tools (grep, glob, ls, read_file, edit_file) over grep/find/cat/sed in bash: "
    "they are faster, capped and respect the workspace rules. Commands run in an OS sandbox "
    "that writes only the workspace and approved directories: to write elsewhere, list them "
    "in additional_write_dirs with a justification. Only after a result says the sandbox "
    "blocked a command may you retry it with escape_sandbox=true (the user must approve)."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute (bash syntax)"},
        "run_in_background": {
            "type": "boolean",
            "description": "Run detached: returns a job id immediately and keeps running "
            "across turns (no foreground timeout). Read new output with bash_output, wait "
            "with wait, stop it with kill_shell. Use for servers, watchers or long builds.",
            "default": False,
        },
        "additional_write_dirs": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Directories outside the workspace this command writes to; the user "
            "approves each (headless runs refuse). Needs justification.",
        },
        "justification": {
            "type": "string",
            "description": "Why additional_write_dirs or escape_sandbox is needed; shown to "
            "the user.",
        },
        "escape_sandbox": {
            "type": "boolean",
            "description": "Retry this exact command once outside the sandbox, only after a "
            "result said the sandbox blocked it; needs the user's approval and a justification.",
            "default": False,
        },
    },
    "required": ["command"],
}


class OutputBuffer:
    """Collects output, keeping the first and last few MiB of a runaway stream."""

    def __init__(self, head: int = RAW_HEAD_BYTES, tail: int = RAW_TAIL_BYTES) -> None:
        self._head_max, self._tail_max = head, tail
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0
        self.total = 0

    def write(self, data: bytes) -> None:
        """Append a chunk."""
        self.total += len(data)
        room = self._head_max - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            over = len(self._tail) - self._tail_max
            if over > 0:
                del self._tail[:over]
                self.dropped += over

    def text(self) -> str:
        """Everything kept, with a marker where bytes were dropped."""
        head = self._head.decode("utf-8", "replace")
        if not self.dropped:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace")
        tail = self._tail.decode("utf-8", "replace")
        return f"{head}\n[... {self.dropped} bytes of output dropped ...]\n{tail}"


def _clip_even(text: str, budget: int = _VISIBLE_BUDGET) -> str:
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    half = (budget - 80) // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[len(data) - half :].decode("utf-8", "ignore")
    omitted = len(data) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[... {omitted} bytes omitted; the full output is kept locally ...]\n{tail}"


def prepare(
    command: str,
    ctx: ToolContext,
    extra_roots: list[Path] | None = None,
    *,
    sandboxed: bool = True,
) -> tuple[list[str], str, dict[str, str]]:
    """argv, cwd and environment for ``command``, sandbox-wrapped when configured.

    ``extra_roots`` are writable for this command only; ``sandboxed=False`` is the
    approved escape (no jail). Raises :class:`ToolError` when bash is missing or
    enforcement is unavailable (with the escape offer when the run has one).
    """
    shell = which("bash")
    if shell is None:
        raise ToolError("bash is not installed on this machine; the bash tool cannot run")
    cwd = str(base_dir(ctx))
    if not os.path.isdir(cwd):
        raise ToolError(f"working directory {cwd} does not exist")
    env = dict(os.environ)
    # stdin is /dev/null: a pager or a credential prompt would only hang or fail.
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    # Provider keys are the caller's secrets, not the command's: a model that runs
    # `env` must not be able to read them back (names passed by the agent layer).
    for name in ctx.extra.get("secret_env", ()):
        env.pop(str(name), None)
    argv = [shell, "-c", command]
    if isinstance(ctx.sandbox, SandboxSettings) and sandboxed:
        settings = ctx.sandbox
        if extra_roots:
            settings = replace(settings, write_roots=[*settings.write_roots, *extra_roots])
        try:
            argv, env = wrap_command(argv, settings, env)
        except SandboxUnavailable as err:
            raise ToolError(_bash_scope.unavailable_note(command, str(err), ctx)) from None
    return argv, cwd, env


def _jail_roots(ctx: ToolContext, extra: list[Path]) -> list[Path]:
    """The writable roots a sandboxed run had (for blaming a refused write)."""
    sandbox = ctx.sandbox
    if not isinstance(sandbox, SandboxSettings):
        return []
    roots = [sandbox.workspace, *sandbox.write_roots, *extra]
    return roots + (
        default_cache_roots(dict(os.environ))
        if sandbox.cache_roots is None
        else sandbox.cache_roots
    )


# Project files that would be trusted on the next start. The sandbox re-binds existing
# ones read-only, but bubblewrap can only protect a file that exists: one the command
# creates is moved aside when the sandboxed command has ended (every process in the
# sandbox ends with it: --unshare-pid).
_CONFIG_NAMES = ("reasonix.toml", ".mcp.json")
REJECTED_SUFFIX = ".rejected-by-sandbox"


def _absent_config(ctx: ToolContext) -> list[str]:
    sandbox = ctx.sandbox
    if not isinstance(sandbox, SandboxSettings) or sandbox.mode == "off":
        return []
    ws = os.path.realpath(sandbox.workspace)
    paths = [os.path.join(ws, name) for name in _CONFIG_NAMES]
    return [p for p in paths if not os.path.lexists(p)]


def _reject_planted(absent: list[str]) -> str:
    """Move aside config files a sandboxed command created; a note for the model."""
    notes = []
    for path in absent:
        if not os.path.lexists(path):
            continue
        try:
            os.replace(path, path + REJECTED_SUFFIX)
            notes.append(f"{os.path.basename(path)} -> {os.path.basename(path)}{REJECTED_SUFFIX}")
        except OSError as err:
            notes.append(f"{os.path.basename(path)} could not be moved aside: {err}")
    if not notes:
        return ""
    return (
        "[sandbox: the command created project config that steers Reasonix; moved aside: "
        + "; ".join(notes)
        + ". Edit reasonix.toml/.mcp.json with the file tools (a human approves).]\n"
    )


def bash(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one bash call (the tool function)."""
    command: str = args["command"]
    if not command.strip():
        raise ToolError("command must not be empty")
    escape: dict[str, Any] | None = None
    extra: list[Path] = []
    if args.get("escape_sandbox") is True:
        refusal, escape = _bash_scope.escape(command, args, ctx)
        if refusal is not None:
            return refusal
    else:
        extra = _bash_scope.declared_roots(args, ctx)
    meta: dict[str, Any] = {"sandbox_escape": escape} if escape is not None else {}
    try:
        argv, cwd, env = prepare(command, ctx, extra, sandboxed=escape is None)
    except ToolError as err:
        if escape is None:
            raise
        return ToolResult.error(f"bash: {err}", **meta)  # the granted escape stays on record
    jailed = len(argv) > 3  # [bash, -c, command] when not wrapped by bubblewrap / Seatbelt
    absent = _absent_config(ctx)
    if args.get("run_in_background"):
        try:
            job = jobs.start(
                argv,
                cwd=cwd,
                env=env,
                command=command,
                session_id=ctx.session_id,
                after=(lambda: _reject_planted(absent)) if absent else None,
            )
        except OSError as err:
            return ToolResult.error(f"bash: could not start the command: {err}", **meta)
        return ToolResult(
            f"Started background job {job.id!r} (pid {job.pid}). It keeps running across "
            f"turns; read new output with bash_output(job_id={job.id!r}), wait for it with "
            f"wait, or stop it with kill_shell(job_id={job.id!r}).",
            metadata={"job_id": job.id, "pid": job.pid, **meta},
        )
    timeout = ctx.bash_timeout if ctx.bash_timeout and ctx.bash_timeout > 0 else None
    if ctx.ports.terminal is not None:  # the editor's terminal (ACP), after the same wrapping

        def blame(out: str) -> str:
            return _bash_scope.blame_note(command, out, ctx, _jail_roots(ctx, extra), cwd)

        return _in_terminal(ctx, argv, cwd, env, timeout, absent, meta, blame if jailed else None)
    buf = OutputBuffer()
    progress = ctx.progress
    # Chunks can split a multi-byte character; the incremental decoder holds it back.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def sink(data: bytes) -> None:
        buf.write(data)
        if progress is not None:
            text = decoder.decode(data)
            if text:
                progress(text)

    try:
        outcome = run_command(
            argv,
            cwd=cwd,
            env=env,
            sink=sink,
            cancel=ctx.cancel,
            timeout=timeout,
            command_text=command,
        )
    except OSError as err:
        return ToolResult.error(f"bash: could not start the command: {err}", **meta)
    output = buf.text()
    note = _reject_planted(absent) if absent else ""
    if note:
        output += ("\n" if output and not output.endswith("\n") else "") + note
    if outcome.timed_out:
        trailer = f"[timed out after {timeout:g} s; the command and its children were killed]"
    elif outcome.cancelled:
        trailer = "[cancelled; the command and its children were killed]"
    elif outcome.exit_code is not None and outcome.exit_code < 0:
        trailer = f"[killed by signal {-outcome.exit_code}]"
    else:
        trailer = f"[exit code {outcome.exit_code}]"
    body = output if output.strip() else "(no output)\n"
    if not body.endswith("\n"):
        body += "\n"
    failed = outcome.timed_out or outcome.cancelled or outcome.exit_code != 0
    if failed and jailed and not outcome.cancelled and not outcome.timed_out:
        note = _bash_scope.blame_note(command, output, ctx, _jail_roots(ctx, extra), cwd)
        if note:  # after the exit line, where the model reads first after a failure
            trailer += "\n" + note
    meta.update(exit_code=outcome.exit_code, timed_out=outcome.timed_out, pid=outcome.pid)
    return ToolResult(
        content=_clip_even(body) + trailer,
        raw_content=body + trailer,
        is_error=failed,
        metadata=meta,
    )


def _in_terminal(
    ctx: ToolContext,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    timeout: float | None,
    absent: list[str],
    meta: dict[str, Any],
    blame: Callable[[str], str] | None,
) -> ToolResult:
    """Run the (already sandbox-wrapped) command through the frontend's terminal port."""
    terminal = ctx.ports.terminal
    assert terminal is not None
    # The terminal starts from its own environment: unset what ours removed
    # (provider keys, scrubbed variables) so the command sees the same world.
    removed = sorted(k for k in os.environ if k not in env)
    if removed:
        argv = ["env", *(part for k in removed for part in ("-u", k)), *argv]
    added = {k: v for k, v in env.items() if os.environ.get(k) != v}
    run = terminal.run(
        argv, cwd=cwd, env=added, timeout=timeout, cancel=ctx.cancel, call_id=ctx.call_id
    )
    output = run.output
    if run.truncated:
        output = "[... the start of the output was dropped by the terminal ...]\n" + output
    note = _reject_planted(absent) if absent else ""
    if note:
        output += ("\n" if output and not output.endswith("\n") else "") + note
    if run.timed_out:
        trailer = f"[timed out after {timeout:g} s; the command was killed]"
    elif run.cancelled:
        trailer = "[cancelled; the command was killed]"
    elif run.signal:
        trailer = f"[killed by signal {run.signal}]"
    else:
        trailer = f"[exit code {run.exit_code}]"
    body = output if output.strip() else "(no output)\n"
    if not body.endswith("\n"):
        body += "\n"
    failed = run.timed_out or run.cancelled or bool(run.signal) or run.exit_code != 0
    if failed and blame is not None and not run.cancelled and not run.timed_out:
        hint = blame(output)
        if hint:
            trailer += "\n" + hint
    meta.update(exit_code=run.exit_code, timed_out=run.timed_out, terminal=True)
    return ToolResult(
        content=_clip_even(body) + trailer,
        raw_content=body + trailer,
        is_error=failed,
        metadata=meta,
    )


TOOL = FunctionTool(name="bash", description=DESCRIPTION, schema=SCHEMA, fn=bash, read_only=False)
register_builtin(TOOL)
