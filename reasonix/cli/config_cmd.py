"""``reasonix config``: show or change settings.

``reasonix config compact-ratio [--local] [VALUE]`` prints the effective
compaction threshold and where it came from, or writes a new one into
``<home>/config.toml`` (``--local``: ``./reasonix.toml``). A value outside
0.65–0.85 is refused, never clamped (D8).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["configure", "execute"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the ``config`` sub-subcommands."""
    parser.description = "Show or change Reasonix settings."
    sub = parser.add_subparsers(dest="config_command", metavar="SETTING")
    ratio = sub.add_parser(
        "compact-ratio",
        help="show or set agent.compact_ratio (0.65-0.85)",
        description=(
            "Show the effective compaction threshold and its source, or set it. "
            "Valid values: 0.65 to 0.85 inclusive (presets 0.70, 0.80, 0.85)."
        ),
    )
    ratio.add_argument(
        "--local", action="store_true", help="write to ./reasonix.toml instead of the user config"
    )
    ratio.add_argument("value", nargs="?", metavar="VALUE", help="new ratio, e.g. 0.70")


def _describe_source(source: str) -> str:
    if source == "default":
        return "default"
    if source == "flag":
        return "from a command-line flag"
    return f"from {source}"


def _compact_ratio(args: argparse.Namespace) -> int:
    from reasonix.config import load, paths
    from reasonix.config.legacy import save_setting
    from reasonix.config.schema import compact_ratio_error
    from reasonix.errors import UsageError

    cwd = Path.cwd()
    if args.value is None:
        cfg = load(cwd)
        source = cfg.sources.get("agent.compact_ratio", "default")
        print(f"{cfg.agent.compact_ratio:.2f} ({_describe_source(source)})")
        return 0
    try:
        value = float(args.value)
    except ValueError:
        raise UsageError(
            f"compact-ratio: {args.value!r} is not a number; expected 0.65 to 0.85 inclusive"
        ) from None
    problem = compact_ratio_error(value)
    if problem:
        raise UsageError(f"compact-ratio: {problem}")
    target = paths.project_config_path(cwd) if args.local else paths.user_config_path()
    # Writing must work even when the current file holds a bad value: that is
    # how a user repairs it, so nothing is loaded before the write.
    save_setting(target, "agent", "compact_ratio", value)
    print(f"compact_ratio = {value:.2f} written to {target}")
    effective = load(cwd)
    source = effective.sources.get("agent.compact_ratio", "default")
    if source != str(target):
        print(
            f"note: the effective value is {effective.agent.compact_ratio:.2f} "
            f"({_describe_source(source)}), which takes precedence",
            file=sys.stderr,
        )
    return 0


def execute(args: argparse.Namespace) -> int:
    """Run the chosen ``config`` sub-subcommand."""
    from reasonix.errors import UsageError

    if args.config_command == "compact-ratio":
        return _compact_ratio(args)
    raise UsageError("usage: reasonix config compact-ratio [--local] [VALUE]")
