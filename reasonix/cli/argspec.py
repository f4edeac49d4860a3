"""Reading a command line without argparse, for the plain ones a script or a person types.

Importing :mod:`argparse` (and the :mod:`gettext` it pulls in) and building
the ``run`` parser cost a headless run more than a millisecond of every
start. The ``run`` and chat flags are one table (:mod:`reasonix.cli.flags`);
:func:`table_spec` turns its rows into plain data, the same data
:func:`reasonix.cli.flag_parser.spec_of` records from a parser built with
argparse (tests/cli/test_argspec.py holds the two equal), and :func:`fast_parse`
reads an argv against that data: exact long options (``--name`` or
``--name=value``), single short flags, and the one optional positional.
Anything else — an abbreviation, combined short flags, ``--``, a value that
looks like an option, ``-h``, an unknown or repeated-exclusive option, a bad
choice or number, a second positional — returns None, and the caller parses
with argparse, which gives the same result or its error. A
differential test holds the two to the same namespace.
"""

from __future__ import annotations

from types import SimpleNamespace

from reasonix.cli.flags import Rows

__all__ = ["fast_parse", "table_spec"]

_SUPPRESS = "==SUPPRESS=="  # argparse.SUPPRESS
# What argparse sets for an action kind when the declaration does not say: (nargs, const, default).
_IMPLIED: dict[str, tuple[object, object, object]] = {
    "store_true": (0, True, False),
    "store_false": (0, False, True),
    "store_const": (0, None, None),
}


def table_spec(rows: Rows) -> dict[str, object]:
    """The data :func:`~reasonix.cli.flag_parser.spec_of` would record from a parser
    declaring ``rows`` (cli/flags.py) after argparse's own ``-h/--help``, without argparse."""
    help_action = {"dest": "help", "options": ["-h", "--help"], "kind": "help", "nargs": 0,
                   "const": None, "default": _SUPPRESS, "type": None, "choices": None,
                   "group": None, "suppress": True}  # fmt: skip
    actions = [help_action]
    groups: dict[str, int] = {}
    for options, kwargs in rows:
        kind = str(kwargs.get("action", "store"))
        positional = not options[0].startswith("-")
        if positional:
            dest = options[0]
        else:
            long = [o for o in options if o.startswith("--")]
            dest = str(kwargs.get("dest") or (long or options)[0].lstrip("-").replace("-", "_"))
        nargs, const, default = _IMPLIED.get(kind, (kwargs.get("nargs"), None, None))
        const = kwargs.get("const", const)
        default = kwargs.get("default", default)
        choices = kwargs.get("choices")
        exclusive = kwargs.get("exclusive")
        actions.append({
            "dest": dest,
            "options": [] if positional else list(options),
            "kind": kind,
            "nargs": nargs,
            "const": const,
            "default": default,
            "type": "int" if kwargs.get("type") is int else None,
            "choices": list(choices) if isinstance(choices, (list, tuple)) else None,
            "group": None if exclusive is None else groups.setdefault(str(exclusive), len(groups)),
            "suppress": default == _SUPPRESS,
        })  # fmt: skip
    return {"prefix": "-", "actions": actions}


def _looks_like_option(token: str) -> bool:
    return token.startswith("-") and token != "-"


class _Action:
    """One action of a spec as typed attributes, read once from its plain-data dict."""

    def __init__(self, index: int, data: dict[str, object]) -> None:
        self.index = index
        self.dest, self.kind = str(data["dest"]), str(data["kind"])
        options, choices, group = data["options"], data["choices"], data["group"]
        self.options = [str(o) for o in options] if isinstance(options, list) else []
        self.choices = list(choices) if isinstance(choices, list) else None
        self.group = group if isinstance(group, int) else None
        self.nargs, self.const, self.default = data["nargs"], data["const"], data["default"]
        self.type, self.suppress = data["type"], bool(data.get("suppress"))


def fast_parse(spec: dict[str, object], argv: list[str]) -> SimpleNamespace | None:
    """The namespace argparse would give for a plain ``argv``, or None (see the module)."""
    declared = spec.get("actions")
    if spec.get("prefix") != "-" or not isinstance(declared, list):
        return None
    options: dict[str, _Action] = {}
    positionals: list[_Action] = []
    values: dict[str, object] = {}
    for index, data in enumerate(declared):
        action = _Action(index, data)
        for option in action.options:
            options[option] = action
        if action.kind == "help" or action.suppress:
            continue  # argparse sets no attribute for these
        if not action.options:
            positionals.append(action)
        default = action.default
        values[action.dest] = list(default) if isinstance(default, list) else default
    if len(positionals) > 1 or any(p.nargs != "?" for p in positionals):
        return None  # only the one optional positional is read here
    groups: dict[int, int] = {}  # exclusive group -> the action seen in it
    given_positional = False
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if not _looks_like_option(token):
            if given_positional or not positionals or not _plain_value(token):
                return None
            positional = positionals[0]
            value = _convert(positional, token)
            if value is _BAD:
                return None
            values[positional.dest] = value
            given_positional = True
            continue
        name, eq, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        found = options.get(name)
        if found is None or found.kind == "help":
            return None  # unknown, abbreviated, combined or help: argparse's to answer
        if not token.startswith("--") and len(token) != 2:
            return None
        group = found.group  # argparse: two different actions of one group conflict
        if group is not None and groups.setdefault(group, found.index) != found.index:
            return None
        kind, dest = found.kind, found.dest
        if kind in ("store_true", "store_false", "store_const"):
            if eq:
                return None
            values[dest] = True if kind == "store_true" else False if kind == "store_false" \
                else found.const  # fmt: skip
            continue
        if eq:
            raw: str | None = attached
        elif i < len(argv) and _plain_value(argv[i]):
            raw = argv[i]
            i += 1
        elif i < len(argv) and argv[i] == "-":
            return None  # argparse reads a lone "-" as a value
        else:
            raw = None
        if raw is None:
            if found.nargs != "?":
                return None  # "expected one argument": argparse's error
            value = found.const
        else:
            value = _convert(found, raw)
            if value is _BAD:
                return None
        if kind == "append":
            earlier = values[dest]
            values[dest] = [*earlier, value] if isinstance(earlier, list) else [value]
        else:
            values[dest] = value
    return SimpleNamespace(**values)


_BAD = object()


def _plain_value(token: str) -> bool:
    """A token argparse surely reads as an argument (not a prefix-char oddity)."""
    return not token.startswith("-")


def _convert(action: _Action, raw: str) -> object:
    value: object = raw
    if action.type == "int":
        try:
            value = int(raw)
        except ValueError:
            return _BAD
    choices = action.choices
    if choices is not None and value not in choices:
        return _BAD
    return value
