"""The flag table (:mod:`reasonix.cli.flags`) on an :mod:`argparse` parser, and back.

:func:`add_flags` declares the rows on a parser (``--help``, errors,
abbreviations: the full reading of a command line); :func:`spec_of` records a
parser's actions as the plain data :func:`reasonix.cli.argspec.table_spec`
builds without argparse (tests/cli/test_argspec.py holds the two equal). Kept
apart from the table and the fast reader, which are on the chat's first-frame
path and import neither argparse nor typing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reasonix.cli.flags import Rows

if TYPE_CHECKING:
    import argparse  # loaded by the caller: ``run`` reads its flags here without it

__all__ = ["add_flags", "spec_of"]


def add_flags(parser: argparse.ArgumentParser, rows: Rows) -> None:
    """Declare ``rows`` on ``parser``, in order (exclusive groups made on first mention)."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for options, declared in rows:
        kwargs: dict[str, Any] = dict(declared)  # argparse's keyword arguments, as declared
        name = kwargs.pop("exclusive", None)
        if name is None:
            parser.add_argument(*options, **kwargs)
            continue
        if name not in groups:
            groups[name] = parser.add_mutually_exclusive_group()
        groups[name].add_argument(*options, **kwargs)


_KINDS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_HelpAction": "help",
}


def spec_of(parser: argparse.ArgumentParser) -> dict[str, object]:
    """The parser's actions as plain data (what :func:`fast_parse` reads)."""
    groups = {id(a): n for n, g in enumerate(parser._mutually_exclusive_groups)
              for a in g._group_actions}  # fmt: skip
    actions: list[dict[str, object]] = []
    for action in parser._actions:
        kind = _KINDS.get(type(action).__name__)
        if kind is None:
            raise ValueError(f"{action.dest}: {type(action).__name__} is not readable as data")
        if action.type not in (None, int) or action.nargs not in (None, "?", 0):
            raise ValueError(f"{action.dest}: type or nargs is not readable as data")
        actions.append({
            "dest": action.dest,
            "options": list(action.option_strings),
            "kind": kind,
            "nargs": action.nargs,
            "const": action.const,
            "default": action.default,
            "type": "int" if action.type is int else None,
            "choices": list(action.choices) if action.choices is not None else None,
            "group": groups.get(id(action)),
            "suppress": action.default == "==SUPPRESS==",  # argparse.SUPPRESS
        })  # fmt: skip
    return {"prefix": parser.prefix_chars, "actions": actions}
