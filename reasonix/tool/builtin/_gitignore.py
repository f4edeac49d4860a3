"""Gitignore-style matching for the walking tools (grep, glob).

Semantics follow git's and ripgrep's (the ``ignore`` crate), because the grep
tool must give the same answer whether ripgrep or the pure-Python engine runs:

* one rule per line; blank lines and ``#`` comments skipped; ``\\#``/``\\!``
  escape; trailing spaces dropped unless escaped;
* ``!`` negates (re-includes); the LAST matching rule of a file wins;
* a trailing ``/`` matches directories only;
* a rule with a ``/`` at the start or in the middle is anchored to the
  directory holding the ignore file; otherwise it matches at any depth;
* ``**/``, ``/**`` and ``/**/`` cross directories; ``*``/``?``/``[...]`` do not.

Between files (:class:`IgnoreStack`): ``.rgignore`` beats ``.ignore`` beats
``.gitignore``; within one kind the deepest directory that has a matching rule
wins. ``.gitignore`` files above the directory holding ``.git`` are not read.
A whitelist match also overrides the "hidden file" rule (ripgrep does so).
"""

from __future__ import annotations

import os
import re

from reasonix.errors import ToolError
from reasonix.lazy import dataclass, field
from reasonix.tool.builtin._regular import open_regular

__all__ = [
    "IGNORE_FILES",
    "MAX_BRACE_GLOBS",
    "IgnoreFile",
    "IgnoreStack",
    "expand_braces",
    "glob_to_regex",
    "parse_rules",
]

# Highest precedence first (ripgrep: custom .rgignore, then .ignore, then .gitignore).
IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
_GITIGNORE_KIND = 2  # index of ".gitignore" in IGNORE_FILES
_IGNORE_FILE_CAP = 4 << 20  # a real ignore file is a few KiB; a huge one is not read whole


def glob_to_regex(glob: str) -> str:
    """Translate one glob (``/``-separated) into a regex body (no anchors).

    ``**`` as a whole component crosses directories; elsewhere it acts like
    ``*``. ``*``, ``?`` and classes never match ``/``. ``\\x`` is a literal x.
    """
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                at_start = i == 0 or glob[i - 1] == "/"
                after = i + 2
                if at_start and after == n:
                    out.append(".*")
                    i = after
                    continue
                if at_start and glob[after] == "/":
                    out.append("(?:.*/)?")
                    i = after + 1
                    continue
                i = after
                out.append("[^/]*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


MAX_BRACE_GLOBS = 1024  # `{a,b}` twenty times would be a million regexes


def expand_braces(glob: str, origin: str = "") -> list[str]:
    """Expand ``{a,b}`` alternatives (nesting allowed): ``*.{ts,tsx}`` -> two globs.

    Raises :class:`ToolError` past :data:`MAX_BRACE_GLOBS` alternatives.
    """
    origin = origin or glob
    depth = 0
    start = -1
    for i, c in enumerate(glob):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                parts: list[str] = []
                cur: list[str] = []
                level = 0
                for ch in glob[start + 1 : i]:
                    if ch == "," and level == 0:
                        parts.append("".join(cur))
                        cur = []
                        continue
                    level += ch == "{"
                    level -= ch == "}"
                    cur.append(ch)
                parts.append("".join(cur))
                if len(parts) == 1:
                    continue
                head, tail = glob[:start], glob[i + 1 :]
                out: list[str] = []
                for p in parts:
                    out.extend(expand_braces(head + p + tail, origin))
                    if len(out) > MAX_BRACE_GLOBS:
                        raise ToolError(
                            f"glob {origin!r} expands to more than {MAX_BRACE_GLOBS} patterns; "
                            "use fewer {a,b} alternatives"
                        )
                return out
    return [glob]


@dataclass(frozen=True)
class _Rule:
    regex: str
    negated: bool
    dir_only: bool


def parse_rules(text: str) -> list[_Rule]:
    """Parse ignore-file text into rules, in file order."""
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # Trailing spaces are dropped unless backslash-escaped.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negated = False
        if line.startswith("!"):
            negated, line = True, line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        if negated and not line:
            rules.append(_Rule(".*", True, False))  # a bare "!": ripgrep whitelists everything
            continue
        dir_only = line.endswith("/")
        if dir_only:
            line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        if not anchored and not line.startswith("**/"):
            line = "**/" + line
        rules.append(_Rule(glob_to_regex(line), negated, dir_only))
    return rules


@dataclass
class IgnoreFile:
    """The rules of one ignore file, matched against paths relative to ``base``."""

    base: str
    rules: list[_Rule]
    _any: re.Pattern[str] | None = field(default=None, repr=False)
    _dirs: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # One alternation per kind, LAST rule first: the first alternative that
        # fullmatches is then the last matching rule, so one regex call decides.
        self._any = self._compile([r for r in self.rules if not r.dir_only], len(self.rules))
        self._dirs = self._compile(self.rules, len(self.rules))

    def _compile(self, rules: list[_Rule], _n: int) -> re.Pattern[str] | None:
        if not rules:
            return None
        alts = []
        for idx in range(len(rules) - 1, -1, -1):
            tag = "w" if rules[idx].negated else "i"
            alts.append(f"(?P<{tag}{idx}>{rules[idx].regex})")
        return re.compile("|".join(alts), re.DOTALL)

    @classmethod
    def load(cls, directory: str, name: str) -> IgnoreFile | None:
        """Read ``directory/name``; None when absent, unreadable or empty."""
        try:
            # A planted FIFO or device under the name must not hang or flood the walk.
            with open_regular(os.path.join(directory, name)) as fh:
                rules = parse_rules(fh.read(_IGNORE_FILE_CAP).decode("utf-8", "replace"))
        except OSError:
            return None
        return cls(directory, rules) if rules else None

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = whitelisted, None = no rule matched."""
        rx = self._dirs if is_dir else self._any
        if rx is None:
            return None
        m = rx.fullmatch(rel)
        if m is None:
            return None
        return (m.lastgroup or "i")[0] == "i"


@dataclass
class _Layer:
    directory: str
    files: tuple[IgnoreFile | None, ...]  # indexed like IGNORE_FILES
    has_git: bool


class IgnoreStack:
    """The ignore files that apply to one directory, plus its ancestors'.

    Build the root with :meth:`for_root`; :meth:`child` adds a directory while
    walking down. :meth:`match` answers for an entry of the newest directory.
    """

    def __init__(self, layers: list[_Layer], parents: list[_Layer]) -> None:
        self._layers = layers  # walked directories, root first
        self._parents = parents  # ancestors of the root, nearest first
        # Flatten once per directory: the ignore files in precedence order, so
        # matching an entry is a short loop (usually zero or one file).
        chain: list[IgnoreFile] = []
        for kind in range(len(IGNORE_FILES)):
            saw_git = False
            for layer in (*reversed(layers), *parents):
                if kind == _GITIGNORE_KIND and saw_git:
                    break  # git does not read .gitignore files above the repo root
                ig = layer.files[kind]
                if ig is not None:
                    chain.append(ig)
                saw_git = saw_git or layer.has_git
        self._chain = chain

    @classmethod
    def for_root(cls, root: str) -> IgnoreStack:
        """The stack for a walk rooted at ``root`` (an absolute, real directory)."""
        parents: list[_Layer] = []
        cur = os.path.dirname(root)
        while True:
            parents.append(_load_layer(cur))
            nxt = os.path.dirname(cur)
            if nxt == cur:
                break
            cur = nxt
        return cls([_load_layer(root)], parents)

    @property
    def empty(self) -> bool:
        """True when no ignore file applies (the walk can skip matching)."""
        return not self._chain

    def child(self, directory: str) -> IgnoreStack:
        """The stack for ``directory``, a subdirectory of the newest layer."""
        layer = _load_layer(directory)
        if not any(layer.files) and not layer.has_git:
            return self  # nothing new here: share the parent's chain
        return IgnoreStack([*self._layers, layer], self._parents)

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True = ignored, False = whitelisted, None = no ignore file says anything."""
        for ig in self._chain:
            rel = _relative(path, ig.base)
            if rel is not None:
                result = ig.match(rel, is_dir)
                if result is not None:
                    return result
        return None


def _load_layer(directory: str) -> _Layer:
    files = tuple(IgnoreFile.load(directory, name) for name in IGNORE_FILES)
    has_git = os.path.exists(os.path.join(directory, ".git"))
    return _Layer(directory, files, has_git)


def _relative(path: str, base: str) -> str | None:
    if base == "/":
        return path[1:]
    if path.startswith(base) and path[len(base) : len(base) + 1] == "/":
        return path[len(base) + 1 :]
    return None
