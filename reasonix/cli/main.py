"""The ``reasonix`` command: dispatch, help, version and the one error boundary.

Subcommands live in ``reasonix/cli/<name>_cmd.py`` and are imported only when
used, so ``--version`` and ``--help`` import almost nothing. Every library
error is turned into a message and an exit code here and nowhere else:
0 ok, 1 runtime error, 2 usage or configuration error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "PLACEHOLDERS", "entry", "main"]

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("reasonix.cli.run_cmd", "run one task headless (PROMPT or stdin)"),
    "config": ("reasonix.cli.config_cmd", "show or change settings (compact-ratio)"),
    "mcp": ("reasonix.cli.mcp_cmd", "list, add, remove and authorise MCP servers"),
    "memory": ("reasonix.cli.memory_cmd", "inspect and manage remembered facts"),
    "permission": ("reasonix.cli.permission_cmd", "debug: show the permission decision"),
    "trust": ("reasonix.cli.trust_cmd", "trust this workspace (its hooks, MCP, rules) or revoke"),
    "setup": ("reasonix.cli.setup_cmd", "set up a model provider (wizard or --preset)"),
    "doctor": ("reasonix.cli.doctor_cmd", "check config, provider, sandbox, MCP servers"),
    "rewind": ("reasonix.cli.rewind_cmd", "list turns, restore files/conversation, undo"),
    "replay": ("reasonix.cli.replay_cmd", "re-run a recorded session, report divergences"),
    "remote": ("reasonix.cli.remote_cmd", "Remote-SSH hosts, chat, tasks, forwards and files"),
    "serve": ("reasonix.cli.serve_cmd", "browser frontend over HTTP (see docs/SERVE.md)"),
    "acp": ("reasonix.cli.acp_cmd", "Agent Client Protocol agent on stdio (editors)"),
    "subagent": ("reasonix.cli.subagent_cmd", "list, show, try, run and edit sub-agent profiles"),
    "usage": ("reasonix.cli.usage_cmd", "tokens and cost of recorded sessions (offline report)"),
}

# Commands of DESIGN.md §4 that later issues implement: name -> (help, area).
PLACEHOLDERS: dict[str, tuple[str, str]] = {}

_CHAT_MODULE = "reasonix.cli.tui"  # the curses view; line mode (chat_cmd) where it cannot run
_RUN_MODULE = "reasonix.cli.run_cmd"
# The command lines read as data before argparse is tried (cli/flags.py: TABLES).
_FLAG_TABLES = {_RUN_MODULE: "run", _CHAT_MODULE: "chat"}

_USAGE = """\
usage: reasonix [--version] [--help] [-p PROMPT] [COMMAND] [ARGS …]

Reasonix — a terminal coding agent that drives LLMs through tools.

  reasonix                     interactive chat in the current directory
  reasonix -p PROMPT           print mode: run the task, print only the final answer
  reasonix run [flags] PROMPT  one task, headless (see `reasonix run --help`)

commands:
{commands}

options:
  -h, --help     show this help and exit
  -V, --version  print the version and exit

Configuration: ./reasonix.toml, then <home>/config.toml (home = $REASONIX_HOME
or ~/.reasonix); provider keys go in <home>/.env. Exit codes: 0 ok,
1 runtime error, 2 usage or configuration error.
"""


def _help_text() -> str:
    rows = [(name, text) for name, (_, text) in COMMANDS.items()]
    rows += [(name, f"{text} (not implemented yet)") for name, (text, _) in PLACEHOLDERS.items()]
    width = max(len(n) for n, _ in rows)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in rows]
    return _USAGE.format(commands="\n".join(lines))


def _version() -> str:
    from reasonix import __version__

    return __version__


_quick_exit = [False]  # set by _route / _dispatch; read by quick_exit_ok()


def quick_exit_ok() -> bool:
    """True when the command that ran closes everything it opens (``QUICK_EXIT`` in its
    module, or an answer printed by the router itself): the process may then end
    without the interpreter's teardown (``reasonix.__main__.leave``)."""
    return _quick_exit[0]


def _dispatch(module_name: str, prog: str, argv: list[str]) -> int:
    import importlib

    module = importlib.import_module(module_name)
    _quick_exit[0] = bool(getattr(module, "QUICK_EXIT", False))
    if not getattr(module, "COLLECTS_AFTER_BUILD", False):
        collect_again()
    table = _FLAG_TABLES.get(module_name)
    if table is not None:  # a plain run or chat command line: no argparse (cli/argspec.py)
        from reasonix.cli.argspec import fast_parse, table_spec
        from reasonix.cli.flags import TABLES

        fast = fast_parse(table_spec(TABLES[table]), argv)
        if fast is not None:
            fast_code: int = module.execute(fast)
            return fast_code
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    module.configure(parser)
    args = parser.parse_args(argv)
    code: int = module.execute(args)
    return code


def collect_again() -> None:
    """Turn cyclic garbage collection back on (``__main__`` turns it off for start-up).

    What start-up made stays for the whole run, so it is frozen out of later sweeps.
    A command module that sets ``COLLECTS_AFTER_BUILD`` calls this itself once its
    runtime is built (the runtime lives as long as the process, too).
    """
    import gc

    if not gc.isenabled():
        gc.freeze()
        # Sweep the young generation every 10,000 new containers, not 700: an agent's
        # turn allocates in bursts (a streamed reply, a tool result) that are mostly
        # garbage-free, and each sweep of them is cost for nothing.
        gc.set_threshold(10_000, 10, 10)
        gc.enable()


def _chat(argv: list[str]) -> int:
    """The chat; on a first start without a usable provider, offer the setup wizard."""
    try:
        return _dispatch(_CHAT_MODULE, "reasonix", argv)
    except Exception as err:
        from reasonix.errors import MissingAPIKey  # loaded by then: whatever raised it did

        if not isinstance(err, MissingAPIKey) or not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise
        from reasonix.cli.setup_cmd import offer_wizard

        if not offer_wizard(str(err)):
            return 2
    return _dispatch(_CHAT_MODULE, "reasonix", argv)


def _route(argv: list[str]) -> int:
    if not argv:
        return _chat([])
    first = argv[0]
    if first in ("-V", "--version"):
        print(f"reasonix {_version()}")
        _quick_exit[0] = True
        return 0
    if first in ("-h", "--help", "help"):
        print(_help_text(), end="")
        _quick_exit[0] = True
        return 0
    if first.startswith("-") and any(a in ("-p", "--print") for a in argv):
        return _dispatch(_RUN_MODULE, "reasonix", argv)
    if first in COMMANDS:
        module_name, _ = COMMANDS[first]
        return _dispatch(module_name, f"reasonix {first}", argv[1:])
    if first in PLACEHOLDERS:
        _, area = PLACEHOLDERS[first]
        print(f"reasonix: not implemented yet: {area}", file=sys.stderr)
        return 2
    if first.startswith("-"):
        return _chat(argv)
    from reasonix.cli.safe_text import printable

    print(
        printable(
            f"reasonix: unknown command {first!r}; run `reasonix --help` for the list "
            f'(to give a task, use `reasonix run "{first} …"` or `reasonix -p …`)'
        ),
        file=sys.stderr,
    )
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: sys.argv[1:]) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _route(args)
    except KeyboardInterrupt:
        print("reasonix: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - the one boundary that turns errors into exit codes
        code = _report(err)
    return _flush_stdout(code)


def _flush_stdout(code: int) -> int:
    """Flush stdout now: a full disk or a closed pipe becomes exit code 1, not a
    shutdown message from the interpreter."""
    stream = sys.stdout
    if stream is None:
        return code
    try:
        stream.flush()
    except (OSError, ValueError):
        import os

        # Nothing more can reach the reader; point fd 1 at /dev/null so the
        # interpreter's own flush at exit stays quiet.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except (OSError, ValueError):
            pass
        return code or 1
    return code


def _report(err: Exception) -> int:
    from reasonix.cli.safe_text import printable
    from reasonix.errors import ConfigError, ReasonixError, UsageError

    # Error texts quote paths, names and server replies: untrusted text.
    if isinstance(err, (ConfigError, UsageError)):
        print(printable(f"reasonix: {err}"), file=sys.stderr)
        return 2
    if isinstance(err, ReasonixError):
        print(printable(f"reasonix: {err}"), file=sys.stderr)
        return 1
    if isinstance(err, BrokenPipeError):
        return 1
    import os

    if os.environ.get("REASONIX_DEBUG"):
        import traceback

        traceback.print_exc()
    if isinstance(err, OSError):
        # The machine said no (a deleted working directory, a full disk, a
        # missing permission): report it as such, not as our bug.
        try:
            os.getcwd()
        except OSError:
            print(
                "reasonix: the current directory no longer exists; cd to one that does",
                file=sys.stderr,
            )
            return 1
        where = f": {err.filename}" if err.filename else ""
        print(printable(f"reasonix: {err.strerror or err}{where}"), file=sys.stderr)
        return 1
    # Anything else is our bug: say so plainly, without a traceback unless the
    # user asked for one.
    print(
        printable(
            f"reasonix: internal error: {type(err).__name__}: {err} "
            "(set REASONIX_DEBUG=1 for a traceback)"
        ),
        file=sys.stderr,
    )
    return 1


def entry() -> None:
    """Console-script entry point (``reasonix`` installed by pip)."""
    sys.exit(main())
