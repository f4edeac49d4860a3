"""``reasonix subagent list | show NAME | try NAME TASK | run NAME TASK | edit NAME``.

``try`` runs the profile with the read-only registry and keeps no transcript;
``run`` uses the normal permission and sandbox path (headless: an Ask fails
closed, deny rules apply). Both compile to a ProfileExecSpec and go through
the one spawn primitive, print the adjudicated result (status first, then
the sub-agent's answer, then the host's receipts) and exit 0 only when the
status is ``complete``. ``edit`` changes only simple manual project/global
profiles (SUB-2); built-in profiles take only ``--model``/``--effort``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import json_line, printable
from reasonix.errors import UsageError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the sub-commands."""
    parser.description = "Sub-agent profiles: list, show, try, run and edit them."
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dir", metavar="DIR", help="work in DIR instead of the current one")
        p.add_argument("--json", action="store_true", help="print one JSON object")

    common(sub.add_parser("list", help="list the profiles of this workspace"))
    show = sub.add_parser("show", help="show one profile")
    show.add_argument("name")
    common(show)
    for name, text in (
        ("try", "run a profile read-only; nothing is kept"),
        ("run", "run a profile with the normal permissions and sandbox"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("name")
        p.add_argument("task", nargs="?", help="the task (default: stdin)")
        p.add_argument("--model", help="the default model for this run (SUB-6 precedence)")
        p.add_argument("--max-steps", type=int, metavar="N", help="tool-round budget")
        common(p)
    edit = sub.add_parser("edit", help="edit a simple manual profile")
    edit.add_argument("name")
    edit.add_argument("--description")
    edit.add_argument("--prompt", help="the new profile body (system prompt)")
    edit.add_argument("--prompt-file", metavar="FILE", help="read the body from FILE (- = stdin)")
    edit.add_argument("--model", help="model reference ('' clears it)")
    edit.add_argument("--effort", help="reasoning effort ('' clears it)")
    edit.add_argument("--tools", help="allowed-tools, comma-separated ('' clears it)")
    common(edit)


def execute(args: argparse.Namespace) -> int:
    """Run the chosen action; the exit code."""
    handlers = {"list": _list, "show": _show, "try": _run, "run": _run, "edit": _edit}
    return handlers[args.action](args)


def _workspace(args: argparse.Namespace) -> Path:
    from reasonix.boot import RuntimeOptions

    return RuntimeOptions(workspace=args.dir).resolved_workspace()


def _skills(args: argparse.Namespace) -> Any:
    from reasonix.boot.subagents import load_skills

    return load_skills(_workspace(args))


def _out(text: str) -> None:
    sys.stdout.write(printable(text.rstrip("\n")) + "\n")


def _profile_row(skill: Any) -> dict[str, Any]:
    from reasonix.agent.subagent.profile import profile_from_skill

    p = profile_from_skill(skill)
    return {
        "name": p.name, "scope": p.scope, "invocation": p.invocation, "read_only": p.read_only,
        "model": p.model, "effort": p.effort, "allowed_tools": list(p.allowed_tools or []),
        "description": p.description, "path": p.path,
    }  # fmt: skip


def _list(args: argparse.Namespace) -> int:
    skills = _skills(args)
    rows = [_profile_row(s) for s in skills.profiles()]
    if args.json:
        sys.stdout.write(json_line({"profiles": rows, "notices": skills.notices}) + "\n")
        return 0
    for note in skills.notices:
        sys.stderr.write(printable(f"reasonix: {note}") + "\n")
    width = max([len(r["name"]) for r in rows] + [4])
    for r in rows:
        flags = ",".join(f for f in ("read-only" if r["read_only"] else "writer",
                                     r["invocation"], r["model"]) if f)  # fmt: skip
        _out(f"{r['name'].ljust(width)}  {r['scope']:<14} {flags:<28} {r['description']}")
    return 0


def _find(args: argparse.Namespace) -> Any:
    skills = _skills(args)
    skill = skills.get(args.name)
    if skill is None:
        known = ", ".join(s.name for s in skills.profiles()) or "none"
        raise UsageError(f"no sub-agent profile named {args.name!r}; profiles: {known}")
    return skill


def _show(args: argparse.Namespace) -> int:
    skill = _find(args)
    row = {**_profile_row(skill), "run_as": skill.run_as, "files": skill.resources()}
    if args.json:
        sys.stdout.write(json_line({**row, "body": skill.body}) + "\n")
        return 0
    for key, value in row.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        _out(f"{key}: {shown}")
    _out("\n" + skill.body)
    return 0


class _Interrupts:
    """Ctrl-C / SIGTERM cancel the run; a second one stops at once."""

    def __init__(self, cancel: Any) -> None:
        self.cancel, self.count = cancel, 0
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, getattr(signal, "SIGTERM", signal.SIGINT)):
                self.saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt
        self.cancel.cancel("interrupted")

    def __exit__(self, *exc: object) -> None:
        for sig, old in self.saved.items():
            signal.signal(sig, old)


def _run(args: argparse.Namespace) -> int:
    from reasonix.agent.subagent.profile import profile_from_skill
    from reasonix.agent.subagent.spec import (
        CapabilityGrant,
        ContextRequest,
        ProfileExecSpec,
        TaskSpec,
    )
    from reasonix.boot import RuntimeOptions
    from reasonix.boot.subagents import cli_delegation
    from reasonix.cancel import Cancel
    from reasonix.cli.setup_run import read_prompt

    skill = _find(args)
    if skill.run_as != "subagent":
        raise UsageError(f"{args.name} is an inline skill, not a sub-agent profile")
    task = read_prompt(args.task)
    options = RuntimeOptions(workspace=args.dir, model=args.model, max_steps=args.max_steps)
    prim, telemetry, _, hooks = cli_delegation(options)
    profile = profile_from_skill(skill)
    trying = args.action == "try"
    spec = ProfileExecSpec(
        profile, TaskSpec(task),
        CapabilityGrant(read_only=trying or profile.read_only),
        ContextRequest(ephemeral=trying), "cli_try" if trying else "cli_run",
    )  # fmt: skip
    cancel = Cancel()
    started = time.monotonic()
    with _Interrupts(cancel):
        outcome = prim.run_profile_spec(spec, cancel=cancel, hooks=hooks)
    code = 0 if outcome.ok else 1
    if not args.json:
        _out(outcome.text)
        for line in outcome.verdict.downgrades:
            sys.stderr.write(printable(f"reasonix: downgraded: {line}") + "\n")
        return code
    from reasonix.cli.output import RunOutcome, result_object

    run = RunOutcome(
        result=outcome.prose, reason="complete" if outcome.ok else "error",
        session_id=outcome.run_id, model=str(prim.default_model()),
    )  # fmt: skip
    if not outcome.ok:
        run.error, run.error_type = f"status: {outcome.verdict.status}", "SubagentStatus"
    run.num_turns = len(outcome.usage)
    obj = result_object(run, telemetry, int((time.monotonic() - started) * 1000), None)
    obj.update(_verdict_fields(outcome))
    sys.stdout.write(json_line(obj) + "\n")
    return code


def _verdict_fields(outcome: Any) -> dict[str, Any]:
    v = outcome.verdict
    return {
        "profile_status": v.status,
        "claimed_status": v.claimed,
        "downgrades": list(v.downgrades),
        "criteria": [
            {
                "text": c.text,
                "kind": c.kind,
                "evidence": c.evidence,
                "status": c.status,
                "reason": c.reason,
            }
            for c in v.criteria
        ],
        "receipts": list(outcome.receipts),
        "capsuleHash": outcome.capsule.capsule_hash if outcome.capsule else None,
        "transcript": outcome.transcript or None,
    }


def _edit(args: argparse.Namespace) -> int:
    from reasonix.agent.subagent.edit import editable_problem, render_profile
    from reasonix.config.atomic import write_atomic

    skill = _find(args)
    problem = editable_problem(skill)
    if problem:
        raise UsageError(f"refused: {problem}")
    if skill.scope == "builtin":
        return _edit_builtin(args, skill.name)
    meta = dict(skill.meta)
    for key, value in (("description", args.description), ("model", args.model),
                       ("effort", args.effort), ("allowed-tools", args.tools)):  # fmt: skip
        if value is not None:
            meta[key] = value
    body = skill.body
    if args.prompt is not None and args.prompt_file is not None:
        raise UsageError("give --prompt or --prompt-file, not both")
    if args.prompt is not None:
        body = args.prompt
    elif args.prompt_file is not None:
        body = sys.stdin.read() if args.prompt_file == "-" else Path(args.prompt_file).read_text()
    if not body.strip():
        raise UsageError("the profile body (its system prompt) must not be empty")
    write_atomic(Path(skill.path), render_profile(meta, body))
    _report(args, {"edited": skill.name, "path": skill.path})
    return 0


def _edit_builtin(args: argparse.Namespace, name: str) -> int:
    from reasonix.config import paths, tomledit

    if any(v is not None for v in (args.description, args.prompt, args.prompt_file, args.tools)):
        raise UsageError(f"refused: {name} is built in; only --model and --effort can be set")
    if args.model is None and args.effort is None:
        raise UsageError("nothing to change: give --model and/or --effort")
    path = paths.user_config_path()
    for table, value in (("agent.subagent_models", args.model),
                         ("agent.subagent_efforts", args.effort)):  # fmt: skip
        if value is None:
            continue
        if value:
            tomledit.set_key(path, table, name, value)
        else:
            tomledit.remove_keys(path, table, [name])
    _report(args, {"edited": name, "path": str(path)})
    return 0


def _report(args: argparse.Namespace, obj: dict[str, Any]) -> None:
    if args.json:
        sys.stdout.write(json.dumps(obj) + "\n")
    else:
        _out(f"edited {obj['edited']} ({obj['path']})")
