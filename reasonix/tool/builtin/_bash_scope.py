"""What the bash tool asks before and after a sandboxed run (CFG-13/14, spec §3.7, §9).

* :func:`declared_roots` — ``additional_write_dirs`` + ``justification``: each
  directory outside the writable roots goes through the run's write-scope gate
  (``ctx.extra["write_scope"]``, the same :class:`~reasonix.permission.ScopeGate`
  the file tools use). A missing directory is asked for as its deepest existing
  ancestor, like the file tools do. Headless runs refuse and name ``--add-dir``.
* :func:`escape` — ``escape_sandbox: true``: the one unsandboxed retry of a
  command the sandbox just blocked, decided by ``ctx.extra["sandbox_escape"]``
  (an :class:`~reasonix.permission.EscapeGate`: a fresh human answer or nothing).
* :func:`blame_note` / :func:`unavailable_note` — after a failure the sandbox
  caused, tell the model so (and offer the retry).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import PathDenied, ToolError
from reasonix.permission.escape import EscapeGate
from reasonix.permission.sandbox import SandboxSettings
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.paths import base_dir, real_path

if TYPE_CHECKING:
    from typing import Any

__all__ = ["blame_note", "declared_roots", "escape", "unavailable_note"]


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent  # ask for what exists: the command creates the rest
    return path


def _dirs(args: dict[str, Any]) -> list[str]:
    raw = args.get("additional_write_dirs") or []
    if not isinstance(raw, list) or not all(isinstance(d, str) and d.strip() for d in raw):
        raise ToolError("additional_write_dirs must be a list of non-empty directory paths")
    return list(dict.fromkeys(raw))


def declared_roots(args: dict[str, Any], ctx: ToolContext) -> list[Path]:
    """The extra writable roots for this command, after asking; raises ToolError if refused.

    Session and project grants also join ``ctx.write_roots`` and the sandbox's roots,
    so later commands (and the file tools) share them; a "once" grant is only returned.
    """
    wanted = _dirs(args)
    if not wanted:
        return []
    justification = str(args.get("justification") or "")
    if not justification.strip():
        raise ToolError(
            "additional_write_dirs needs a justification: say why the command must write "
            "there (the user sees it). The command was NOT run."
        )
    scope = ctx.extra.get("write_scope")
    granted: list[Path] = []
    for text in wanted:
        try:
            target = _existing(real_path(text, base_dir(ctx)))
        except PathDenied as err:
            raise ToolError(f"additional_write_dirs: {err}. The command was NOT run.") from None
        if scope is None:
            roots = [Path(os.path.realpath(r)) for r in [ctx.workspace, *ctx.write_roots]]
            if not any(target == r or target.is_relative_to(r) for r in roots):
                import shlex  # only for this message

                raise ToolError(
                    f"{target} is outside the writable roots; rerun with --add-dir "
                    f"{shlex.quote(str(target))} or add it to [sandbox].allow_write. "
                    "The command was NOT run."
                )
            continue
        outcome = scope.request(str(target), f"{justification} (bash: {_short(args)})")
        if not outcome.allowed:
            raise ToolError(f"{outcome.message}. The command was NOT run.")
        path = Path(outcome.path or target)
        if scope.within(str(path)):
            _share(ctx, path)
        granted.append(path)
    return granted


def _short(args: dict[str, Any], width: int = 160) -> str:
    flat = " ".join(str(args.get("command", "")).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _share(ctx: ToolContext, path: Path) -> None:
    """A session/project grant: visible to later bash calls and the file tools."""
    if path not in ctx.write_roots:
        ctx.write_roots.append(path)
    sandbox = ctx.sandbox
    if isinstance(sandbox, SandboxSettings) and path not in sandbox.write_roots:
        sandbox.write_roots.append(path)


def _gate(ctx: ToolContext) -> EscapeGate | None:
    gate = ctx.extra.get("sandbox_escape")
    return gate if isinstance(gate, EscapeGate) else None


def escape(
    command: str, args: dict[str, Any], ctx: ToolContext
) -> tuple[ToolResult | None, dict[str, Any]]:
    """Decide an ``escape_sandbox`` request: (None, record) = granted, run unsandboxed;
    (refusal, record) otherwise. The record goes into the result's metadata, from
    where the agent emits it and writes it to the transcript."""
    justification = str(args.get("justification") or "")
    gate = _gate(ctx)
    if gate is None:
        message, granted, detail = "refused: this run cannot leave the sandbox", False, "no gate"
    else:
        outcome = gate.request(command, justification)
        message, granted, detail = outcome.message, outcome.granted, outcome.detail
    record = {
        "command": command,
        "justification": justification,
        "granted": granted,
        "detail": detail,
    }
    if granted:
        return None, record
    refusal = ToolResult(content=message, is_error=True, metadata={"sandbox_escape": record})
    return refusal, record


def blame_note(command: str, output: str, ctx: ToolContext, roots: list[Path], cwd: str) -> str:
    """After a failed sandboxed run: the note saying the sandbox caused it ("" if it did not)."""
    from reasonix.permission.sandbox.blame import sandbox_blame  # only after a failure

    sandbox = ctx.sandbox
    network = not isinstance(sandbox, SandboxSettings) or sandbox.network
    blame = sandbox_blame(output, roots=roots, cwd=Path(cwd), network=network)
    if blame is None:
        return ""
    remedy = ""
    if blame.path:
        remedy = (
            f"To stay inside the sandbox, call bash again declaring "
            f'"additional_write_dirs": [{json.dumps(os.path.dirname(blame.path))}] '
            'with a "justification".'
        )
    gate = _gate(ctx)
    if gate is None:
        return f"[sandbox: {blame.reason}.{' ' + remedy if remedy else ''}]"
    return gate.offer(command, blame.reason, remedy)


def unavailable_note(command: str, problem: str, ctx: ToolContext) -> str:
    """Enforcement is on but the sandbox cannot run: the refusal, with the escape offer."""
    text = (
        f"refused: the OS sandbox is set to enforce but cannot run here ({problem}). "
        "The command was NOT run. Install the sandbox backend (bubblewrap on Linux) or "
        "ask the user to change [sandbox] settings."
    )
    gate = _gate(ctx)
    offer = gate.offer(command, "the sandbox is unavailable") if gate is not None else ""
    return f"{text}\n{offer}" if offer else text
