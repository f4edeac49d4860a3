"""A status line the user scripts (Claude Code's ``statusLine`` setting, ``[ui] status_command``).

The command gets a JSON payload on stdin in Claude Code's statusLine shape (the fields
we have) and the first line it prints is shown in the chat footer. It runs on its own
thread, at most once every :data:`INTERVAL` seconds, under a timeout: the view never
waits for it, and a slow or failing command shows as such (``status: timed out``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import printable

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "INTERVAL",
    "TIMEOUT",
    "RuntimeStatusLine",
    "StatusLineRunner",
    "budget_left",
    "build_payload",
    "payload_for",
    "run_once",
    "runner_for",
]

INTERVAL = 0.3  # seconds between two starts of the command (Claude Code's pace)
TIMEOUT = 2.0  # seconds a run may take before it is killed and shown as timed out
_LIMIT = 4096  # characters of the first line kept
# colour and other CSI/OSC sequences: the footer has its own colours, so they are dropped
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def build_payload(
    *,
    session_id: str,
    transcript_path: str,
    cwd: str,
    model_ref: str,
    model_name: str,
    mode: str,
    context_used: int | None,
    context_window: int,
    cache_hit: float | None,
    cost_usd: float | None,
    cost_amount: float | None = None,
    currency: str = "",
    input_tokens: int = 0,
    output_tokens: int = 0,
    budget_left: dict[str, float] | None = None,
    version: str = "",
    started: float | None = None,
) -> dict[str, Any]:
    """The stdin payload: Claude Code's statusLine fields, plus ours under ``reasonix``.

    ``cost_usd`` is None when the model is unpriced or priced in another currency
    (then ``cost.total_cost_usd`` is null and ``reasonix.cost`` names the currency).
    """
    used_pct = None
    if context_used is not None and context_window:
        used_pct = round(100.0 * context_used / context_window, 1)
    cost: dict[str, Any] = {"total_cost_usd": cost_usd}
    if started is not None:
        cost["total_duration_ms"] = int((time.monotonic() - started) * 1000)
    return {
        "hook_event_name": "Status",
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "model": {"id": model_ref, "display_name": model_name},
        "workspace": {"current_dir": cwd, "project_dir": cwd},
        "version": version,
        "output_style": {"name": "default"},
        "permission_mode": mode,
        "cost": cost,
        "context_window": {
            "total_input_tokens": input_tokens,
            "total_output_tokens": output_tokens,
            "context_window_size": context_window,
            "used_percentage": used_pct,
            "remaining_percentage": None if used_pct is None else round(100.0 - used_pct, 1),
        },
        "reasonix": {
            "mode": mode,
            "context_used": context_used,
            "cache_hit": cache_hit,
            "cost": None if cost_amount is None else {"amount": cost_amount, "currency": currency},
            "budget_left": budget_left,
        },
    }


def first_line(out: bytes) -> str:
    """The first line of the command's output, made safe for one footer row."""
    text = out.decode("utf-8", "replace")
    line = text.split("\n", 1)[0].rstrip("\r")
    return printable(_ESCAPES.sub("", line)[:_LIMIT].expandtabs(4), keep_newlines=False).strip()


def run_once(
    command: str,
    payload: dict[str, Any],
    cwd: str,
    timeout: float = TIMEOUT,
    env: dict[str, str] | None = None,
) -> str:
    """Run ``command`` once with ``payload`` on stdin; its first line, or why there is none.

    An empty output gives "" (the line stays blank, as in Claude Code). ``env``
    None: this process's environment.
    """
    data = json.dumps(payload).encode()
    try:
        # the user's command, or a trusted workspace's (the loader's trust guard)
        proc = subprocess.Popen(
            command,
            shell=True,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own group: a timeout kills what it started too
        )
    except OSError as exc:
        return f"status: cannot run ({exc.strerror or exc})"
    try:
        out, _ = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            proc.communicate(timeout=1.0)
        return "status: timed out"
    if proc.returncode != 0:
        return f"status: failed (exit {proc.returncode})"
    return first_line(out)


class StatusLineRunner:
    """Runs the status command off the UI thread whenever the facts change.

    :meth:`update` only stores the newest payload; one worker thread runs the
    command for it, never more often than ``interval``, and hands each first line to
    ``on_line`` (which must be safe to call from another thread).
    """

    def __init__(
        self,
        command: str,
        cwd: str,
        on_line: Callable[[str], None],
        *,
        interval: float = INTERVAL,
        timeout: float = TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> None:
        self.command, self.cwd, self.on_line, self.env = command, cwd, on_line, env
        self.interval, self.timeout = interval, timeout
        self._lock = threading.Lock()
        self._payload: dict[str, Any] | None = None
        self._worker: threading.Thread | None = None
        self._closed = False
        self.runs = 0  # how many times the command ran (tests, throttling)

    def update(self, payload: dict[str, Any]) -> None:
        """Ask for a run with ``payload`` (the newest one wins); never blocks."""
        with self._lock:
            if self._closed:
                return
            self._payload = payload
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name="reasonix-statusline", daemon=True
                )
                self._worker.start()

    def close(self) -> None:
        """Run no more (a run in progress ends by itself, under its timeout)."""
        with self._lock:
            self._closed = True
            self._payload = None

    def _work(self) -> None:
        last = 0.0
        while True:
            wait = self.interval - (time.monotonic() - last)
            if wait > 0:
                time.sleep(wait)
            with self._lock:
                payload, self._payload = self._payload, None
                if payload is None or self._closed:
                    self._worker = None
                    return
            last = time.monotonic()
            self.runs += 1
            line = run_once(self.command, payload, self.cwd, self.timeout, self.env)
            if not self._closed:
                self.on_line(line)


def payload_for(rt: Any, status: Any, started: float | None = None) -> dict[str, Any]:
    """:func:`build_payload` from a runtime and the footer's :class:`~.state.Status`."""
    from reasonix import __version__
    from reasonix.agent.telemetry import estimate_cost

    telemetry = rt.telemetry
    total = telemetry.total
    cost = estimate_cost(total, rt.price)
    return build_payload(
        session_id=rt.session.id,
        transcript_path=str(rt.session.path),
        cwd=str(rt.workspace),
        model_ref=rt.resolved.ref,
        model_name=rt.resolved.model,
        mode=rt.mode,
        context_used=status.context_used,
        context_window=status.context_window,
        cache_hit=telemetry.cache_hit_ratio,
        cost_usd=cost.amount if cost is not None and cost.currency == "USD" else None,
        cost_amount=None if cost is None else cost.amount,
        currency="" if cost is None else cost.currency,
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        version=__version__,
        started=started,
        budget_left=budget_left(getattr(rt, "run_budget", None), total, rt.price),
    )


def budget_left(budget: Any, usage: Any, price: Any) -> dict[str, float] | None:
    """What is left of a run budget by measure (``cost``, ``tokens``, ``seconds``; only
    the limits set), or None without one. ``budget`` is a ``spend.RunBudget``."""
    if budget is None or not budget.active:
        return None
    used = budget.used(usage, price)
    left: dict[str, float] = {}
    if budget.max_cost > 0:
        left["cost"] = round(max(0.0, budget.max_cost - used["cost"]), 6)
    if budget.max_tokens > 0:
        left["tokens"] = max(0, budget.max_tokens - int(used["tokens"]))
    if budget.max_seconds > 0:
        left["seconds"] = round(max(0.0, budget.max_seconds - used["time"]), 1)
    return left


class RuntimeStatusLine:
    """The chat view's handle: a :class:`StatusLineRunner` fed from a runtime's facts."""

    def __init__(self, runner: StatusLineRunner) -> None:
        self.runner = runner
        self.started = time.monotonic()  # the view's session began (cost.total_duration_ms)

    def update(self, rt: Any, status: Any) -> None:
        """Ask for a run with the runtime's current facts."""
        self.runner.update(payload_for(rt, status, self.started))

    def close(self) -> None:
        """Run no more."""
        self.runner.close()


def runner_for(rt: Any, on_line: Callable[[str], None]) -> RuntimeStatusLine | None:
    """The status line for ``rt``'s ``[ui] status_command``; None when there is none."""
    command = rt.config.ui.status_command
    if not command:
        return None
    # as for hooks: provider keys stay out of its environment
    secret = {p.api_key_env for p in rt.config.providers if p.api_key_env}
    env = {k: v for k, v in os.environ.items() if k not in secret}
    env["CLAUDE_PROJECT_DIR"] = env["REASONIX_PROJECT_DIR"] = str(rt.workspace)
    return RuntimeStatusLine(StatusLineRunner(command, str(rt.workspace), on_line, env=env))
