"""``reasonix run [flags] [PROMPT]`` and ``reasonix -p PROMPT``: one task, headless.

Output formats: ``text`` streams the answer on stdout (tool activity and the
cost line on stderr); ``-p`` prints only the final answer; ``json`` prints one
result object; ``stream-json`` prints one JSON event per line, then the result
object. In the structured modes the result object is printed even when the
run fails, and this module picks the exit code itself (0 ok, 1 runtime, 2 usage).

Ctrl-C (or SIGTERM) cancels the turn (the in-flight request and tool); a
second one exits at once. Either way the transcript stays loadable and the
structured modes still print the result object; so does a usage error that
argparse finds in the flags.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING

from reasonix.agent.events import (
    Done,
    Error,
    Event,
    Notice,
    Phase,
    Runner,
    SandboxEscape,
    StepStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    WebSearch,
)
from reasonix.agent.telemetry import Telemetry
from reasonix.boot import Runtime
from reasonix.cancel import Cancel
from reasonix.cli.flags import RUN
from reasonix.cli.output import EventLog, RunOutcome, event_json, redacted_event, result_object
from reasonix.cli.safe_text import json_line, printable
from reasonix.cli.setup_run import build, read_prompt
from reasonix.errors import Cancelled, ConfigError, ReasonixError, UsageError, classify

if TYPE_CHECKING:
    import argparse
    from typing import IO, Any, NoReturn

__all__ = ["COLLECTS_AFTER_BUILD", "QUICK_EXIT", "configure", "execute"]

# The runtime is built with cyclic GC still off (cli.main.collect_again): it allocates
# what lives for the whole run, so sweeping it meanwhile is pure cost.
COLLECTS_AFTER_BUILD = True
# Everything a run opens is closed before execute() returns (the runtime, the event log):
# the process may end without the interpreter's teardown (reasonix.__main__.leave).
QUICK_EXIT = True


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the run flags (DESIGN §4; the table is cli/flags.py)."""
    parser.description = "Run one task headless. PROMPT, or stdin when it is not a terminal."
    from reasonix.cli.flag_parser import add_flags  # the argparse path only

    add_flags(parser, RUN)
    parser.error = lambda message: _flag_error(parser, message)  # type: ignore[method-assign]


def _flag_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """argparse's error exit (code 2), plus the result object when the flags ask for JSON."""
    import argparse

    sniff = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    sniff.add_argument("--output-format", choices=("text", "json", "stream-json"))
    sniff.add_argument("--json", action="store_true")
    try:
        fmt = _format(sniff.parse_known_args(sys.argv[1:])[0])
    except (argparse.ArgumentError, SystemExit):
        fmt = "text"
    if fmt != "text":
        outcome = RunOutcome(reason="error", error=message, error_type="UsageError")
        _emit_line(result_object(outcome, Telemetry(), 0, None))
    argparse.ArgumentParser.error(parser, message)


def _format(args: argparse.Namespace) -> str:
    if args.output_format:
        return str(args.output_format)
    return "json" if args.json else "text"


_SIGNALS = (signal.SIGINT, getattr(signal, "SIGTERM", signal.SIGINT))


class _Interrupts:
    """SIGINT/SIGTERM: the first cancels the turn, the next raises KeyboardInterrupt.

    Without a ``cancel`` token (outside the turn) the first one raises at once.
    """

    def __init__(self, cancel: Cancel | None) -> None:
        self.cancel = cancel
        self.count = 0
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        # Only the main thread may set handlers; an ignored signal (nohup, `&`) stays ignored.
        if threading.current_thread() is threading.main_thread():
            for sig in dict.fromkeys(_SIGNALS):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count == 1 and self.cancel is not None:
            why = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
            self.cancel.cancel(f"interrupted ({why})")
            return
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self.previous.items():
            signal.signal(sig, previous)


def execute(args: argparse.Namespace) -> int:
    """Run the task; return the exit code."""
    fmt = _format(args)
    started = time.monotonic()
    outcome = RunOutcome()
    outcome.extra["warnings"] = []  # config and plugin notices (item 6): in every result
    telemetry = Telemetry()
    price: dict[str, Any] | None = None
    setup: Runtime | None = None
    code = 1
    log = EventLog(None)
    guard = _Interrupts(None).__enter__()  # a signal outside the turn stops the run at once
    try:
        log = _open_log(args.events_jsonl)
        if args.metrics:  # checked before the first request, not after the whole task
            _check_writable("--metrics", args.metrics)
        if args.print_prompt == "":  # a bare -p: the prompt is PROMPT or stdin
            args.print_prompt = read_prompt(args.prompt)
        if getattr(args, "approve_plan", False) or getattr(args, "goal", None):
            prompt = args.print_prompt or args.prompt or ""  # the flag carries the turn
        else:
            prompt = args.print_prompt or read_prompt(args.prompt)
        if getattr(args, "compact", False) and not (args.continue_ or args.resume is not None):
            raise UsageError("--compact needs -c/--continue or -r/--resume: a new session is empty")
        try:
            setup = build(args, interactive=False)
        finally:
            from reasonix.cli.main import collect_again

            collect_again()
        telemetry, price = setup.telemetry, setup.price
        outcome.session_id, outcome.model = setup.session.id, setup.resolved.ref
        outcome.extra["cache_breaks"] = [b.as_dict() for b in setup.cache_breaks]
        prompt, ref_notes = _with_references(setup, prompt)
        warnings = outcome.extra["warnings"] = [*setup.notices, *ref_notes]
        if fmt == "text" and not args.print_prompt:
            for note in warnings:
                sys.stderr.write(printable(f"reasonix: {note}") + "\n")
        elif fmt == "stream-json":
            for note in warnings:
                _emit_line(event_json(Notice("warning", note)))
        start = {"event": "run_start", "session_id": setup.session.id, "resumed": setup.resumed}
        log.write({**start, "model": setup.resolved.ref})
        _drive(setup, prompt, args, fmt, outcome, log)
        _late_warnings(setup.checkpoint_notices(), args, fmt, outcome)
        code = 0 if outcome.ok else 1
    except (ConfigError, UsageError) as err:
        outcome.reason, outcome.error, outcome.error_type = "error", str(err), type(err).__name__
        outcome.error_kind = classify(err)
        code = 2
    except Cancelled as err:  # e.g. Ctrl-C / SIGTERM during `--compact`
        outcome.reason, outcome.error, outcome.error_type = "cancelled", str(err), "Cancelled"
        outcome.error_kind = classify(err)
    except ReasonixError as err:
        outcome.reason, outcome.error, outcome.error_type = "error", str(err), type(err).__name__
        outcome.error_kind = classify(err)
    except KeyboardInterrupt:
        outcome.reason, outcome.error, outcome.error_type = "cancelled", "interrupted", "Cancelled"
    except BrokenPipeError:
        raise  # nobody reads the output any more; the CLI boundary exits quietly
    except OSError as err:  # the machine said no: an unwritable state dir, a full disk
        outcome.reason, outcome.error = "error", _os_error_text(err)
        outcome.error_type = type(err).__name__
    except Exception as err:  # noqa: BLE001 - our bug; the structured modes still print JSON
        outcome.reason, outcome.error_type = "error", "InternalError"
        outcome.error = f"internal error: {type(err).__name__}: {err}"
    finally:
        if setup is not None:
            setup.close()
        guard.__exit__()
    if setup is not None and setup.hooks is not None:  # hook failures are never silent
        outcome.extra["warnings"] = [*outcome.extra["warnings"], *setup.hooks.problems]
    if setup is not None:  # what the server serves, once learned (probe or refusal)
        outcome.extra["context_window"] = setup.window.report()
        outcome.extra["compaction"] = _compaction_summary(setup)
    duration = int((time.monotonic() - started) * 1000)
    result = result_object(outcome, telemetry, duration, price)
    if args.metrics:
        try:
            _write_metrics(args.metrics, result, telemetry, setup)
        except OSError as err:  # the result still goes out, but a requested output is missing
            problem = f"--metrics {args.metrics}: {err.strerror or err}"
            if not outcome.error:
                outcome.reason, outcome.error, outcome.error_type = "error", problem, "OSError"
                result = result_object(outcome, telemetry, duration, price)
            elif fmt == "text":
                sys.stderr.write(printable(f"reasonix: {problem}") + "\n")
            code = code or 1
    log.write({"event": "run_end", "subtype": result["subtype"], "duration_ms": duration,
               "num_turns": outcome.num_turns, "exit_code": code})  # fmt: skip
    log.close()
    _finish(fmt, args, outcome, result, telemetry, price)
    return code


def _compaction_summary(setup: Runtime) -> dict[str, Any]:
    """``compaction`` in the result: summaries made and what they dropped (loss reports)."""
    from reasonix.agent.loss import LossReport

    reports = list(getattr(setup.context, "loss_reports", []) or [])
    merged = LossReport()
    for report in reports:
        merged.merge(report)
    return {"summaries": len(reports), "dropped": merged.as_dict(), "pins": setup.pins()}


def _os_error_text(err: OSError) -> str:
    """An OS refusal in plain words (as the CLI boundary words it)."""
    try:
        os.getcwd()
    except OSError:
        return "the current directory no longer exists; cd to one that does"
    where = f": {err.filename}" if err.filename else ""
    return f"{err.strerror or err}{where}"


def _with_references(setup: Runtime, prompt: str) -> tuple[str, list[str]]:
    """``@path`` and ``@server:uri`` resolved as in the chat; a leading ``/`` stays text (CMD-9)."""
    if "@" not in prompt:
        return prompt, []
    from reasonix.command.refs import expand_references

    mcp = setup.mcp
    return expand_references(
        prompt,
        workspace=setup.workspace,
        forbid_read=setup.tool_ctx.forbid_read,
        read_resource=mcp.read_resource if mcp is not None else None,
    )


def _check_writable(flag: str, path: str) -> None:
    """UsageError unless ``path`` can be written (its directory exists, it is no directory)."""
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as err:
        raise UsageError(f"{flag} {path}: {err.strerror or err}") from err


def _open_log(path: str | None) -> EventLog:
    if not path:
        return EventLog(None)
    try:
        return EventLog(open(path, "a", encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"--events-jsonl {path}: {err.strerror or err}") from err


def _drive(
    setup: Runtime,
    prompt: str,
    args: argparse.Namespace,
    fmt: str,
    outcome: RunOutcome,
    log: EventLog,
) -> None:
    cancel = Cancel()
    quiet = bool(args.print_prompt) and fmt == "text"
    tools = frozenset(setup.tool_names())
    with _Interrupts(cancel):
        context = setup.context
        if getattr(args, "compact", False) and context is not None:
            done = context.compact(cancel)
            for usage in done.usage:  # the summary call is part of the run's cost
                setup.telemetry.add_usage(usage)
            log.write({"event": "compaction", "status": done.status})
            detail = f"{done.status}: {done.detail}" if done.detail else done.status
            text = f"context manual: {done.tokens_before} -> {done.tokens_after} tokens ({detail})"
            notice = Notice("compaction", text)
            if fmt == "stream-json":
                _emit_line(event_json(notice))
            elif fmt == "text" and not quiet:
                _show_text(notice)
        runner: Runner = setup.runner  # LOOP-7: the CLI sees only the Runner protocol
        hooks = setup.hooks
        shown = 0  # hook failures written to stderr so far (text mode)
        try:
            for event in runner.run(prompt, cancel):
                log.write(redacted_event(event, tools))
                _collect(event, outcome)
                if fmt == "stream-json":
                    _emit_line(event_json(event))
                elif fmt == "text" and not quiet:
                    _show_text(event)
                    if hooks is not None:
                        shown = _show_hook_problems(hooks.problems, shown)
        finally:
            if fmt == "text" and not quiet and hooks is not None:
                _show_hook_problems(hooks.problems, shown)


def _late_warnings(notes: list[str], args: argparse.Namespace, fmt: str,
                   outcome: RunOutcome) -> None:  # fmt: skip
    """Warnings known only after the turn (its checkpoint, recorded after the answer):
    in the result's ``warnings`` and shown as the start's warnings are."""
    outcome.extra.setdefault("warnings", []).extend(notes)
    for note in notes:
        if fmt == "text" and not args.print_prompt:
            sys.stderr.write(printable(f"reasonix: {note}") + "\n")
        elif fmt == "stream-json":
            _emit_line(event_json(Notice("checkpoint", note)))


def _show_hook_problems(problems: list[str], shown: int) -> int:
    """Write the hook failures not shown yet to stderr; returns how many are shown now."""
    for note in problems[shown:]:
        sys.stderr.write(printable(f"reasonix: warning: {note}") + "\n")
    return len(problems)


def _collect(event: Event, outcome: RunOutcome) -> None:
    if isinstance(event, StepStart):
        outcome.num_turns += 1
    elif isinstance(event, Phase):  # COORD telemetry: codes and ids only
        if event.phase == "route" and outcome.extra.get("route") is None:
            outcome.extra["route"] = event.route  # the user's turn, not a goal continuation
        if event.plan_id:
            outcome.extra["plan_id"] = event.plan_id
        if event.phase == "goal" and event.stats:
            outcome.extra["goal"] = {"status": event.status, **event.stats}
    elif isinstance(event, Done):
        outcome.result, outcome.reason = event.result, event.reason
        if event.reason == "cancelled":
            outcome.error, outcome.error_type = "the run was cancelled", "Cancelled"
        elif event.reason == "max_steps":
            outcome.error, outcome.error_type = "the step budget ran out (--max-steps)", "MaxSteps"
        elif event.reason in ("refusal", "content_filter"):
            what = (
                "the model declined" if event.reason == "refusal" else "a content filter stopped it"
            )
            outcome.error = f"{what}: {event.result}" if event.result else what
            outcome.error_type = "Refusal" if event.reason == "refusal" else "ContentFilter"
        elif event.reason == "goal_blocked":
            outcome.error, outcome.error_type = (
                f"the goal is blocked: {event.result}",
                "GoalBlocked",
            )
    elif isinstance(event, Error):
        outcome.reason, outcome.error = "error", event.message
        outcome.error_type = type(event.error).__name__
        outcome.error_kind = classify(event.error)
    elif isinstance(event, Notice) and event.kind == "checkpoint":  # too big, store failed
        outcome.extra.setdefault("warnings", []).append(event.text)


def _emit_line(obj: dict[str, Any] | None, stream: IO[str] | None = None) -> None:
    if obj is None:
        return
    out = stream or sys.stdout
    out.write(json_line(obj) + "\n")
    out.flush()


def _show_text(event: Event) -> None:
    if isinstance(event, TextDelta):
        sys.stdout.write(printable(event.text))
        sys.stdout.flush()
    elif isinstance(event, ToolStart):
        sys.stderr.write(f"\n· {printable(event.name, keep_newlines=False)}\n")
    elif isinstance(event, WebSearch):
        from reasonix.cli.search_card import card_lines

        sys.stderr.write("\n" + "\n".join(card_lines(event)) + "\n")
    elif isinstance(event, SandboxEscape):
        verdict = "granted" if event.granted else "refused"
        sys.stderr.write(
            printable(f"  sandbox escape {verdict} ({event.detail})", keep_newlines=False) + "\n"
        )
    elif isinstance(event, Notice) and event.kind in (
        "checkpoint",
        "compaction",
        "context_window",
        "plan",
        "planner",
        "goal",
        "truncated",
        "refusal",
        "content_filter",
        "provider",  # what the provider layer changed on its own (a refused parameter dropped)
    ):
        sys.stderr.write(printable(f"[{event.text}]") + "\n")
    elif isinstance(event, ToolEnd) and event.is_error:
        first = event.content.strip().splitlines()[0] if event.content.strip() else ""
        first = first.removeprefix(f"{event.name}: ")  # tool errors already name the tool
        sys.stderr.write(printable(f"  ! {event.name}: {first[:200]}", keep_newlines=False) + "\n")


def _finish(
    fmt: str,
    args: argparse.Namespace,
    outcome: RunOutcome,
    result: dict[str, Any],
    telemetry: Telemetry,
    price: dict[str, Any] | None,
) -> None:
    if fmt in ("json", "stream-json"):
        _emit_line(result)
        return
    if args.print_prompt:
        if outcome.result:
            sys.stdout.write(printable(outcome.result.rstrip("\n")) + "\n")
    elif outcome.num_turns:
        sys.stdout.write("\n")
    if outcome.error:
        sys.stderr.write(printable(f"reasonix: {outcome.error}") + "\n")
    if not args.print_prompt and telemetry.per_request:
        sys.stderr.write(f"[{telemetry.summary_line(price)}]\n")
    if outcome.session_id and not args.print_prompt:
        sys.stderr.write(f"[session {outcome.session_id}; continue with: reasonix -c]\n")
    sys.stdout.flush()


def _write_metrics(
    path: str, result: dict[str, Any], telemetry: Telemetry, setup: Runtime | None
) -> None:
    from reasonix.agent.telemetry import usage_fields

    metrics = {
        "ablate": setup.ablate if setup else [],
        "arm": setup.arm if setup else None,  # planner: dual | single | ablated
        "route": result.get("route"),
        "planner_requests": result.get("planner_requests", 0),
        "executor_requests": result.get("executor_requests", 0),
        "model": result.get("model", ""),
        "duration_ms": result["duration_ms"],
        "num_turns": result["num_turns"],
        "subtype": result["subtype"],
        "usage": result["usage"],
        "cost": result["cost"],
        "cache_hit_ratio": result["cache_hit_ratio"],
        "per_request": [usage_fields(u) for u in telemetry.per_request],
        "counters": dict(telemetry.counters),
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(metrics, fh, indent=2)
        fh.write("\n")
