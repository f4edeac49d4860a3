"""``reasonix permission``: see what the permission policy would decide, and why.

``reasonix permission check TOOL ARGS_JSON [--mode M] [--allow R] [--ask R] [--deny R]
[--read-only] [--allow-dynamic-bash] [--config] [--headless]`` prints one line such as
``ask: bash segment 'rm -rf x' matches no allow rule; needs approval (mode ask)``.
``reasonix permission bash COMMAND`` prints how the bash classifier splits a command.
``reasonix permission list [--json]`` shows every rule in force with the file and line it
came from (``reasonix.toml``, ``<home>/config.toml``, Claude Code's settings files).
Rules come from the flags only, unless ``--config`` merges the effective ``[permissions]``.
"""

from __future__ import annotations

import argparse
import json

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare ``permission check`` and ``permission bash``."""
    parser.description = "Debug the permission policy: show decisions and their reasons."
    sub = parser.add_subparsers(dest="permission_command", metavar="ACTION")
    check = sub.add_parser(
        "check",
        help="print the decision for one tool call",
        description="Print allow/ask/deny for TOOL called with ARGS_JSON, with the reason.",
    )
    check.add_argument("tool", metavar="TOOL", help="tool ID, e.g. bash, edit_file, mcp__gh__x")
    check.add_argument(
        "args_json", metavar="ARGS_JSON", nargs="?", default="{}", help='e.g. \'{"command":"ls"}\''
    )
    check.add_argument("--mode", default=None, help="ask|auto|acceptEdits|dontAsk|plan|yolo …")
    for name in ("allow", "ask", "deny"):
        check.add_argument(
            f"--{name}",
            action="append",
            default=[],
            metavar="RULE",
            help=f"{name} rule (repeatable)",
        )
    check.add_argument("--read-only", action="store_true", help="treat the tool as read-only")
    check.add_argument("--allow-dynamic-bash", action="store_true", help="[permissions] flag")
    check.add_argument(
        "--config", action="store_true", help="also use the effective [permissions] config"
    )
    check.add_argument(
        "--headless", action="store_true", help="also print what a headless run would answer"
    )
    check.add_argument("--workspace", default=None, help="anchor for path rules (default: cwd)")
    sim = sub.add_parser(
        "simulate",
        help="replay a rule against the tool calls recorded in this project's sessions",
        description="Show what RULE would have approved (and not then), with narrower and wider "
        "alternatives. Reads transcripts only; never runs anything.",
    )
    sim.add_argument("rule", metavar="RULE", help="e.g. 'Bash(git:*)', 'Edit(src/**)'")
    sim.add_argument("--all-projects", action="store_true", help="every project's sessions")
    sim.add_argument("--json", action="store_true", help="print JSON")
    sim.add_argument("--dir", default=None, help="the project (default: the current directory)")
    lst = sub.add_parser(
        "list",
        help="show every permission rule in force and the file (and line) it came from",
        description="List the permission rules of this workspace (reasonix.toml, "
        "<home>/config.toml and Claude Code's settings files), deny first, each with the "
        "file and line that declared it, and those left out (untrusted workspace, or a "
        "rule this grammar does not read).",
    )
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.add_argument("--dir", default=None, help="the project (default: the current directory)")
    bash = sub.add_parser(
        "bash",
        help="show how a bash command is split and classified",
        description="Print each simple-command segment with its class (static/dynamic/nested).",
    )
    bash.add_argument("command", metavar="COMMAND", help="the command line, quoted")


def _check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from reasonix.errors import UsageError
    from reasonix.permission import Gate, Policy

    try:
        call_args = json.loads(args.args_json)
    except ValueError as exc:
        raise UsageError(f"permission check: ARGS_JSON is not JSON: {exc}") from None
    if not isinstance(call_args, dict):
        raise UsageError("permission check: ARGS_JSON must be a JSON object")
    allow, ask, deny = list(args.allow), list(args.ask), list(args.deny)
    mode = args.mode
    dynamic = args.allow_dynamic_bash
    workspace = args.workspace or str(Path.cwd())
    if args.config:
        from reasonix.boot.permissions import usable_rules
        from reasonix.config import load

        cfg = load(Path(workspace))
        perms = cfg.permissions
        rules, _ = usable_rules(cfg)  # a Claude settings rule we cannot read is left out
        allow, ask, deny = rules["allow"] + allow, rules["ask"] + ask, rules["deny"] + deny
        mode = mode or perms.mode
        dynamic = dynamic or perms.allow_dynamic_bash
    from reasonix.config.paths import secret_paths

    # the run's policy also guards Reasonix's secrets: show what a run would answer
    policy = Policy(mode or "ask", allow, ask, deny, dynamic, workspace, secrets=secret_paths())
    verdict = policy.evaluate(args.tool, args.read_only, call_args)
    print(verdict)
    if verdict.suggested_rule and verdict.decision.name == "ASK":
        print(f"suggested rule: {verdict.suggested_rule}")
    if args.headless:
        outcome = Gate(policy).check(args.tool, args.read_only, call_args)
        print(f"headless: {'allowed' if outcome.allowed else outcome.message}")
    return 0


def _bash(args: argparse.Namespace) -> int:
    from reasonix.permission import analyze

    analysis = analyze(args.command)
    print(f"class: {analysis.kind}")
    for seg in analysis.segments:
        via = f" (via {seg.via})" if seg.via else ""
        why = f" — {'; '.join(seg.reasons)}" if seg.reasons else ""
        print(f"  {seg.kind}: {seg.text!r}{via}{why}")
    return 0


def execute(args: argparse.Namespace) -> int:
    """Run the chosen ``permission`` action."""
    from reasonix.errors import UsageError

    if args.permission_command == "check":
        return _check(args)
    if args.permission_command == "bash":
        return _bash(args)
    if args.permission_command == "simulate":
        return _simulate(args)
    if args.permission_command == "list":
        return _list(args)
    raise UsageError(
        "usage: reasonix permission check TOOL ARGS_JSON | permission bash COMMAND | "
        "permission simulate RULE | permission list"
    )


def _list(args: argparse.Namespace) -> int:
    """Every rule with its origin, in the order the policy consults them (deny, ask, allow)."""
    from pathlib import Path

    from reasonix.boot.permissions import usable_rules
    from reasonix.cli.safe_text import printable
    from reasonix.config import load

    workspace = Path(args.dir or ".").resolve()
    cfg = load(workspace, migrate=False, check_mcp_vars=False)
    _, refused = usable_rules(cfg)
    rows = []
    for kind in ("deny", "ask", "allow"):
        for origin in (o for o in cfg.permission_rules if o.kind == kind):
            skipped = origin.skipped
            if not skipped and origin in refused:
                skipped = f"not a rule Reasonix reads: {refused[origin]}"
            rows.append(
                {
                    "kind": kind,
                    "rule": origin.rule,
                    "written": origin.written or origin.rule,
                    "file": origin.file,
                    "line": origin.line,
                    "in_force": not skipped,
                    "skipped": skipped,
                }
            )
    mode_from = cfg.sources.get("permissions.mode", "default")
    roots = list(cfg.sandbox.allow_write)
    if args.json:
        doc = {
            "workspace": str(workspace),
            "trusted": cfg.trust.trusted,
            "mode": {"value": cfg.permissions.mode, "source": mode_from},
            "rules": rows,
            "writable_roots": roots,
        }
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    print(printable(f"mode: {cfg.permissions.mode} (from {mode_from})"))
    if not rows:
        print("no permission rules (every call goes by the mode)")
    for row in rows:
        where = row["file"] if row["line"] is None else f"{row['file']}:{row['line']}"
        text = f"{row['kind']:<5} {row['rule']}"
        if row["written"] != row["rule"]:
            text += f"  (written {row['written']})"
        text += f"  {where}"
        if row["skipped"]:
            text += f"  [left out: {row['skipped']}]"
        print(printable(text))
    for root in roots:
        print(printable(f"writable root: {root}"))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from reasonix.agent.recorded import project_sessions, recorded_calls
    from reasonix.cli.safe_text import printable
    from reasonix.permission.simulate import simulate

    workspace = Path(args.dir or ".").resolve()
    calls = recorded_calls(project_sessions(workspace, args.all_projects))
    sim = simulate(args.rule, calls, str(workspace))
    if args.json:
        print(json.dumps(sim.as_dict(), ensure_ascii=False))
    else:
        print(printable(sim.summary()))
    return 0
