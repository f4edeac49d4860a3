"""The run flags shared by ``reasonix run`` and the chat, mapped onto boot options.

:func:`add_run_flags` declares the shared flags (DESIGN §4, the table in
:mod:`reasonix.cli.flags`); :func:`options_from_args`
turns parsed flags into :class:`reasonix.boot.RuntimeOptions`; :func:`build`
asks the composition root for a ready runtime. Nothing here assembles a
runtime itself: that is ``reasonix/boot/``'s job for every frontend.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from reasonix.cli.flags import PERMISSION_MODES, SHARED
from reasonix.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from typing import Any

    from reasonix.boot import Runtime, RuntimeOptions

__all__ = [
    "PERMISSION_MODES",
    "add_run_flags",
    "budget_overrides",
    "build",
    "options_from_args",
    "read_prompt",
]


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags shared by ``run`` and the chat (DESIGN §4; the table is cli/flags.py)."""
    from reasonix.cli.flag_parser import add_flags  # the argparse path only

    add_flags(parser, SHARED)


def options_from_args(args: object, *, interactive: bool) -> RuntimeOptions:
    """Map parsed run flags onto the composition root's typed options."""
    from reasonix.boot import RuntimeOptions

    return RuntimeOptions(
        workspace=getattr(args, "dir", None),
        model=getattr(args, "model", None),
        effort=getattr(args, "effort", None),
        max_steps=getattr(args, "max_steps", None),
        add_dirs=list(getattr(args, "add_dir", None) or []),
        continue_latest=bool(getattr(args, "continue_", False)),
        resume=getattr(args, "resume", None),
        copy=bool(getattr(args, "copy", False)),
        allowed_tools=list(getattr(args, "allowed_tools", None) or []),
        permission_mode=getattr(args, "permission_mode", None),
        yolo=bool(getattr(args, "yolo", False)),
        auto=bool(getattr(args, "auto", False)),
        ablate=getattr(args, "ablate", None),
        mcp_debug=getattr(args, "mcp_debug", None),
        interactive=interactive,
        plan=getattr(args, "plan_route", None),
        goal=getattr(args, "goal", None),
        approve_plan=bool(getattr(args, "approve_plan", False)),
        trust=True if getattr(args, "trust", False) else None,
        overrides=budget_overrides(args),
    )


def budget_overrides(args: object) -> dict[str, Any]:
    """``--max-cost/--max-tokens/--max-time`` as ``[agent]`` keys of the flag layer (issue 36)."""
    out: dict[str, Any] = {}
    cost, tokens, limit = (getattr(args, k, None) for k in ("max_cost", "max_tokens", "max_time"))
    if cost is not None:  # a string: the argument catalogue holds str and int types only
        try:
            amount = float(cost)
        except ValueError:
            raise UsageError(f"--max-cost {cost}: expected an amount, e.g. 0.50") from None
        if not amount > 0 or amount == float("inf"):
            raise UsageError(f"--max-cost {cost}: it must be more than zero")
        out["agent.max_cost"] = amount
    if tokens is not None:
        if tokens <= 0:
            raise UsageError(f"--max-tokens {tokens}: it must be more than zero")
        out["agent.max_tokens"] = int(tokens)
    if limit is not None:
        from reasonix.agent.spend import parse_duration

        out["agent.max_minutes"] = parse_duration(str(limit)) / 60
    return out


def build(args: object, *, interactive: bool) -> Runtime:
    """A ready runtime for these flags (raises ConfigError/UsageError/SessionError)."""
    from reasonix.boot import build_runtime

    return build_runtime(options_from_args(args, interactive=interactive))


def read_prompt(positional: str | None) -> str:
    """The task text: the positional PROMPT, else stdin when it is not a terminal."""
    if positional:
        return positional
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if text.strip():
            return text
    raise UsageError("no prompt: give PROMPT or pipe it on stdin")
