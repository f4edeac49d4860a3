"""Running the user's hook commands around the agent (Claude Code's hook contract).

Each hook gets one JSON object on stdin (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``, ``permission_mode`` — Claude's names: ``default``
for our ``ask`` — plus the event's own fields) and answers with its exit code
and output:

- exit 0: success; stdout may be a JSON object (``decision``/``reason``,
  ``continue``/``stopReason``, ``systemMessage`` for the user,
  ``hookSpecificOutput`` with ``permissionDecision``/``updatedInput``/
  ``additionalContext``, or PermissionRequest's ``decision.behavior``); for
  ``UserPromptSubmit`` and ``SessionStart`` plain stdout is context for the
  model; stdout that looks like JSON but does not parse is a warning;
- exit 2: a blocking error; stderr is the reason (given to the model for tool
  events and ``Stop``, to the user for ``UserPromptSubmit``);
- anything else (another exit code, a crash or a signal, a timeout, a hook that
  cannot start): a non-blocking error; the action goes ahead. It is never
  silent: the notice names the hook (event, matcher, command, source file),
  goes out as a ``Notice("hook")`` event where the event has a turn to ride on,
  and is kept in :attr:`HookRunner.problems` for headless results (``run``'s
  text warnings and JSON ``warnings``).

Hooks run with the workspace as their directory and inside the same sandbox
rules as the ``bash`` tool; provider keys are removed from their environment.
Context a hook adds goes into the user turn, never into the system prompt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from reasonix.config.hooks import HookSpec
from reasonix.errors import ReasonixError
from reasonix.lazy import dataclass, field
from reasonix.tool.children import popen

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CLAUDE_TOOL_NAMES", "HookOutcome", "HookRunner", "claude_mode", "stop_block_cap"]

OUTPUT_LIMIT = 256 * 1024  # per stream; the rest is dropped (a hook cannot flood memory)

# Our tool names -> Claude Code's, so matchers and scripts written for Claude work unchanged.
CLAUDE_TOOL_NAMES = {
    "bash": "Bash", "edit_file": "Edit", "multi_edit": "MultiEdit", "write_file": "Write",
    "read_file": "Read", "grep": "Grep", "glob": "Glob", "ls": "LS", "web_fetch": "WebFetch",
    "todo_write": "TodoWrite", "notebook_edit": "NotebookEdit", "task": "Task",
}  # fmt: skip
# Events whose matcher selects on a payload field rather than a tool name (Claude's
# choice of field); events not named here and not tool events ignore the matcher.
_MATCH_FIELDS = {
    "SessionStart": "source", "SessionEnd": "reason", "PreCompact": "trigger",
    "Notification": "notification_type", "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}  # fmt: skip
# Claude Code ends a turn after this many consecutive Stop-hook blocks with no tool
# call between them (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP overrides it; 0 turns it off).
STOP_BLOCK_CAP = 8
_CAP_ENV = ("REASONIX_STOP_HOOK_BLOCK_CAP", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")


def claude_mode(mode: Any) -> str:
    """Our permission mode under Claude Code's name (``ask`` -> ``default``)."""
    from reasonix.permission.modes import Mode, parse_mode

    try:
        parsed = parse_mode(str(mode))
    except Exception:  # noqa: BLE001 - an unknown name is passed on as it came
        return str(mode)
    return "default" if parsed is Mode.ASK else parsed.value


def stop_block_cap() -> int:
    """How many consecutive Stop/SubagentStop blocks a turn allows (0: no cap)."""
    for name in _CAP_ENV:
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                return max(0, int(raw))
            except ValueError:
                continue  # not a number: the next name, then the default
    return STOP_BLOCK_CAP


@dataclass
class HookOutcome:
    """What the hooks of one event decided, folded over every hook that ran."""

    blocked: bool = False  # exit 2, decision "block"/"deny", or continue=false
    reason: str = ""  # why (stderr of exit 2, or the JSON reason)
    context: list[str] = field(default_factory=list)  # additionalContext / plain stdout
    permission: str = ""  # "allow" | "deny" | "ask" from PreToolUse, "" = none
    # non-blocking errors and the hooks' own ``systemMessage`` lines, for the user
    notices: list[str] = field(default_factory=list)
    updated_input: dict[str, Any] | None = None  # PreToolUse / PermissionRequest rewrite
    ran: int = 0

    @property
    def context_text(self) -> str:
        """The added context as one block ("" when none)."""
        return "\n".join(c for c in self.context if c.strip())


class HookRunner:
    """Runs the configured hooks of each event; one per runtime.

    ``base`` supplies the fields common to every event (session id, transcript
    path, permission mode) at call time; ``wrap`` turns an argv and environment
    into the sandboxed ones (the bash tool's rules); ``secret_env`` names the
    variables removed from a hook's environment.
    """

    def __init__(
        self,
        specs: Iterable[HookSpec],
        *,
        workspace: str,
        base: Callable[[], dict[str, Any]],
        wrap: Callable[[list[str], dict[str, str]], tuple[list[str], dict[str, str]]] | None,
        secret_env: Iterable[str] = (),
    ) -> None:
        self.specs = list(specs)
        self.workspace = workspace
        self.base, self.wrap = base, wrap
        self.secret_env = set(secret_env)
        # Every non-blocking failure so far, in order, including those of events
        # with no turn to report on (Notification, PreCompact, SubagentStop).
        self.problems: list[str] = []
        self._lock = threading.Lock()  # sub-agents run hooks from worker threads

    def report(self, text: str) -> None:
        """Record a hook failure for the user (also used for a sub-agent's hooks)."""
        with self._lock:
            self.problems.append(text)

    def has(self, event: str) -> bool:
        """True when any hook is declared for ``event``."""
        return any(s.event == event for s in self.specs)

    def selected(self, event: str, fields: dict[str, Any], tool_name: str = "") -> list[HookSpec]:
        """The hooks of ``event`` whose matcher selects this call (or this source, reason …)."""
        if tool_name:
            names: tuple[str, ...] = (tool_name, CLAUDE_TOOL_NAMES.get(tool_name, tool_name))
        elif event in _MATCH_FIELDS:
            names = (str(fields.get(_MATCH_FIELDS[event], "")),)
        else:  # UserPromptSubmit, Stop: Claude ignores a matcher there
            return [s for s in self.specs if s.event == event]
        return [s for s in self.specs if s.event == event and s.matches(names)]

    def run(self, event: str, fields: dict[str, Any], tool_name: str = "") -> HookOutcome:
        """Run every hook of ``event`` that its matcher selects, in order, then fold."""
        outcome = HookOutcome()
        chosen = self.selected(event, fields, tool_name)
        if not chosen:  # nothing to run: the common fields (a transcript sync) are not built
            return outcome
        payload = {**self.base(), "cwd": self.workspace, "hook_event_name": event, **fields}
        if "permission_mode" in payload:
            payload["permission_mode"] = claude_mode(payload["permission_mode"])
        if tool_name:
            payload["tool_name"] = CLAUDE_TOOL_NAMES.get(tool_name, tool_name)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        for spec in chosen:
            outcome.ran += 1
            try:
                code, out, err = self._exec(spec, data)
            except (OSError, ReasonixError) as exc:
                outcome.notices.append(f"{spec.describe()} could not start: {exc}; going ahead")
            else:
                _fold(outcome, spec, code, out, err)
        for text in outcome.notices:
            self.report(text)
        return outcome

    def _exec(self, spec: HookSpec, data: bytes) -> tuple[int | None, str, str]:
        env = {k: v for k, v in os.environ.items() if k not in self.secret_env}
        env["CLAUDE_PROJECT_DIR"] = env["REASONIX_PROJECT_DIR"] = self.workspace
        argv = ["/bin/sh", "-c", spec.command]
        if self.wrap is not None:
            argv, env = self.wrap(argv, env)
        proc = popen(  # own session, and gone with Reasonix even after a SIGKILL
            argv, cwd=self.workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        out: list[bytes] = []
        err: list[bytes] = []
        readers = [_drain(proc.stdout, out), _drain(proc.stderr, err)]
        try:
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.close()
        except OSError:
            pass  # a hook that does not read its input is fine
        try:
            code: int | None = proc.wait(timeout=spec.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            code = None
        for t in readers:
            t.join(2.0)
        return (
            code,
            b"".join(out).decode("utf-8", "replace"),
            b"".join(err).decode("utf-8", "replace"),
        )


def _drain(stream: Any, sink: list[bytes]) -> threading.Thread:
    def read() -> None:
        size = 0
        while chunk := stream.read(65536):
            if size < OUTPUT_LIMIT:
                sink.append(chunk[: OUTPUT_LIMIT - size])
            size += len(chunk)
        stream.close()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()


def _failure(code: int, err: str) -> str:
    """Why a hook failed, in words: its exit code or signal, and its last stderr line."""
    if code < 0:
        try:
            how = f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exit {code}"
    last = err.strip().splitlines()[-1].strip() if err.strip() else ""
    return f"{how}: {last[:200]}" if last else how


def _fold(outcome: HookOutcome, spec: HookSpec, code: int | None, out: str, err: str) -> None:
    event = spec.event
    where = f"{event} hook `{spec.command[:60]}`"
    if code is None:
        outcome.notices.append(
            f"{spec.describe()} timed out after {spec.timeout:g} s and was stopped; going ahead"
        )
        return
    if code == 2:
        outcome.blocked = True
        outcome.reason = err.strip() or f"blocked by {where}"
        if event in ("PreToolUse", "PermissionRequest"):
            outcome.permission = "deny"
        return
    if code != 0:  # Claude Code: any other code is a non-blocking error shown to the user
        outcome.notices.append(f"{spec.describe()} failed ({_failure(code, err)}); going ahead")
        return
    reply, problem = _json_reply(out)
    if problem:  # meant as JSON (it starts like JSON) but unreadable: never silent
        outcome.notices.append(
            f"{spec.describe()} printed invalid JSON ({problem}); its answer was ignored"
        )
    if reply is None:
        if event in ("UserPromptSubmit", "SessionStart") and out.strip():
            outcome.context.append(out.strip())
        return
    message = reply.get("systemMessage")
    if isinstance(message, str) and message.strip():  # Claude shows it to the user
        outcome.notices.append(f"{event} hook: {message.strip()}")
    specific = reply.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        outcome.context.append(context.strip())
    if event == "PermissionRequest":
        _fold_permission_request(outcome, specific, where)
    updated = specific.get("updatedInput")
    if event == "PreToolUse" and isinstance(updated, dict):
        outcome.updated_input = {**(outcome.updated_input or {}), **updated}
    decision = str(specific.get("permissionDecision") or reply.get("decision") or "").lower()
    reason = specific.get("permissionDecisionReason") or reply.get("reason") or ""
    if decision in ("block", "deny") or reply.get("continue") is False:
        outcome.blocked = True
        stop = reply.get("stopReason") if reply.get("continue") is False else ""
        outcome.reason = str(reason or stop or f"blocked by {where}")
        outcome.permission = "deny" if event == "PreToolUse" else outcome.permission
    elif decision in ("allow", "approve") and event == "PreToolUse":
        outcome.permission = outcome.permission or "allow"
    elif decision == "ask" and event == "PreToolUse":
        outcome.permission = "ask"


def _fold_permission_request(outcome: HookOutcome, specific: dict[str, Any], where: str) -> None:
    """PermissionRequest's ``decision: {behavior, updatedInput, message}``; deny wins."""
    decision = specific.get("decision")
    if not isinstance(decision, dict):
        return
    behavior = str(decision.get("behavior") or "").lower()
    if behavior == "deny":
        outcome.blocked, outcome.permission = True, "deny"
        outcome.reason = str(decision.get("message") or f"denied by {where}")
    elif behavior == "allow" and outcome.permission != "deny":
        outcome.permission = "allow"
        updated = decision.get("updatedInput")
        if isinstance(updated, dict):
            outcome.updated_input = {**(outcome.updated_input or {}), **updated}


def _json_reply(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object a hook printed, and why it could not be read ("" when fine or plain)."""
    text = text.strip()
    if not text.startswith(("{", "[")):
        return None, ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, ""
