"""The ``reasonix run`` and chat command lines as one table.

Each row is ``(option strings, argparse keyword arguments)``; an ``"exclusive"``
key names a mutually exclusive group instead of being passed to argparse.
Both readers of a command line work from these rows:
:func:`reasonix.cli.flag_parser.add_flags` declares them on an
:class:`argparse.ArgumentParser` (``--help``, errors, abbreviations), and
:func:`reasonix.cli.argspec.table_spec` turns them into the data that
:func:`reasonix.cli.argspec.fast_parse` reads for a plain command line without
importing argparse. tests/cli/test_argspec.py holds the two readings equal.

This module is on the chat's first-frame path: plain data (no argparse, json, re, typing).
"""

from __future__ import annotations

# (option strings, argparse keyword arguments) per flag, in --help order.
Rows = tuple[tuple[tuple[str, ...], dict[str, object]], ...]

__all__ = ["CHAT", "PERMISSION_MODES", "RUN", "SHARED", "TABLES", "Rows"]

# Kept here (not imported from boot) so `--help` and the first frame do not import the runtime.
PERMISSION_MODES = (
    "ask", "manual", "auto", "acceptEdits", "dontAsk", "plan", "bypassPermissions", "yolo",
)  # fmt: skip

# The flags shared by ``run`` and the chat (DESIGN §4), in --help order.
SHARED: Rows = (
    (("--model",), {"help": "model reference: provider, provider/model or a model name"}),
    (("--effort",), {"help": "reasoning effort hint (low, medium, high)"}),
    (("--max-steps",), {"type": int, "metavar": "N",
                        "help": "tool-round budget (0 = automatic, 200)"}),
    (("--max-cost",), {"metavar": "USD",
                       "help": "stop the run when its cost reaches USD (a priced model only)"}),
    (("--max-tokens",), {"type": int, "metavar": "N",
                         "help": "stop the run when its input + output tokens reach N"}),
    (("--max-time",), {"metavar": "DURATION",
                       "help": "stop the run after DURATION (90s, 10m, 1h)"}),
    (("--dir",), {"metavar": "DIR", "help": "work in DIR instead of the current directory"}),
    (("--add-dir",), {"action": "append", "default": [], "metavar": "DIR",
                      "help": "extra writable directory"}),
    (("-c", "--continue"), {"dest": "continue_", "action": "store_true",
                            "help": "continue the latest session"}),
    (("-r", "--resume"), {"nargs": "?", "const": "", "metavar": "QUERY",
                          "help": "resume a session (id, path or title)"}),
    (("--copy",), {"action": "store_true",
                   "help": "with -c/-r: continue in a new copy of the session"}),
    (("--allowed-tools", "--allowedTools"), {"dest": "allowed_tools", "action": "append",
                                             "default": [], "metavar": "RULES",
                                             "help": 'allow rules, e.g. "Read,Bash(git diff:*)"'}),
    (("--permission-mode",), {"choices": PERMISSION_MODES, "help": "approval posture"}),
    (("--yolo",), {"action": "store_true",
                   "help": "bypass permission prompts (bypassPermissions)"}),
    (("-y", "--auto"), {"action": "store_true",
                        "help": "auto mode: approve what the policy allows"}),
    (("--trust",), {"action": "store_true",
                    "help": "trust this workspace for this run (its hooks, MCP servers, rules)"}),
    (("--ablate",), {"metavar": "LIST",
                     "help": "comma-separated experiment arms (recorded in --metrics)"}),
    (("--compact",), {"action": "store_true", "help": "compact the context before the turn"}),
    (("--mcp-debug",), {"metavar": "FILE", "help": "log MCP JSON-RPC traffic to FILE"}),
    # One route per turn (docs/COORDINATOR.md): these exclude each other.
    (("--plan",), {"exclusive": "plan", "dest": "plan_route", "action": "store_const",
                   "const": "plan_then_execute",
                   "help": "plan first (the planner model, if configured), then execute"}),
    (("--plan-approve",), {"exclusive": "plan", "dest": "plan_route", "action": "store_const",
                           "const": "plan_for_approval",
                           "help": "plan, then wait for your approval"}),
    (("--plan-only",), {"exclusive": "plan", "dest": "plan_route", "action": "store_const",
                        "const": "plan_only", "help": "plan and save the plan; execute nothing"}),
    (("--goal",), {"exclusive": "plan", "metavar": "OBJECTIVE",
                   "help": "pursue OBJECTIVE over as many turns as it takes (update_goal)"}),
    (("--approve-plan",), {"exclusive": "plan", "action": "store_true",
                           "help": "with -c/-r: approve the saved plan and carry it out"}),
)  # fmt: skip

# ``reasonix run [flags] [PROMPT]`` (and ``reasonix -p``): its own flags, then the shared ones.
RUN: Rows = (
    (("prompt",), {"nargs": "?", "metavar": "PROMPT", "help": "the task"}),
    (("-p", "--print"), {"dest": "print_prompt", "metavar": "PROMPT", "nargs": "?", "const": "",
                         "help": "print mode: run PROMPT (or stdin) and print only the "
                                 "final answer"}),
    (("--output-format",), {"choices": ("text", "json", "stream-json"), "default": None}),
    (("--json",), {"action": "store_true", "help": "same as --output-format json"}),
    (("--events-jsonl",), {"metavar": "FILE", "help": "redacted lifecycle events"}),
    (("--metrics",), {"metavar": "FILE", "help": "write run metrics as JSON"}),
    *SHARED,
)  # fmt: skip

# ``reasonix`` with no command: the chat (the curses view, or line mode).
CHAT: Rows = (
    (("--plain",), {"action": "store_true", "help": "line mode (no full-screen view)"}),
    *SHARED,
)

# The command lines by name (what reasonix.cli.main reads without argparse).
TABLES: dict[str, Rows] = {"run": RUN, "chat": CHAT}
