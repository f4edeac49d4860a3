"""A static classifier for bash commands (D13, PERM-11, PERM-12).

It never runs anything. A hand-written lexer/parser for the POSIX sh subset
(plus the bash forms models actually write) splits a command line into
simple-command *segments* and classifies each one:

* ``STATIC``  — every word is literal text after quote removal: prefix and glob
  allow rules may match it.
* ``DYNAMIC`` — parameter/arithmetic expansion, assignments, heredocs, output
  redirection to files, globs, brace expansion, background jobs, non-ASCII
  command names. Only ``Bash=<literal>`` or the mode fallback can allow it.
* ``NESTED``  — indirect execution: command/process substitution, dynamic
  command names, ``eval``/``source``/``exec``, ``sh -c``, inline interpreter
  code, wrappers that run another command (``xargs``, ``find -exec``, ``env``,
  ``sudo``, ``timeout`` …), git's command-running options, and anything the
  parser cannot understand. It needs fresh human approval or a literal grant.

Wrapped commands (``timeout 5 rm x`` → ``rm x``) and static ``sh -c``/``eval``
strings are also emitted as their own segments so deny rules see them.
When in doubt the parser fails *closed*: an error becomes one NESTED segment.
"""

from __future__ import annotations

import enum
import posixpath
import re
from dataclasses import dataclass, field

__all__ = ["BashAnalysis", "Kind", "Segment", "analyze"]

_MAX_DEPTH = 48
_MAX_LEN = 100_000
_WORD_END = frozenset(" \t\n;&|()<>")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_BRACE_RE = re.compile(r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}")
_SKIP_KEYWORDS = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{"})
_END_KEYWORDS = frozenset({"fi", "done", "}", "esac"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_STATE_BUILTINS = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "alias", "hash", "enable", "shopt"}
    | {"let", "unset", "ulimit"}
)


class Kind(enum.IntEnum):
    """How much a segment hides; the max over segments classifies the command."""

    STATIC = 0
    DYNAMIC = 1
    NESTED = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Segment:
    """One simple command. ``argv`` holds literal words (dynamic ones keep their source text)."""

    argv: tuple[str, ...]
    source: str
    kind: Kind
    reasons: tuple[str, ...] = ()
    via: str = ""  # the wrapper ("timeout", "bash -c" …) when this is a wrapped command

    @property
    def text(self) -> str:
        """The command words joined by single spaces: what prefix/glob rules see."""
        return " ".join(self.argv)

    @property
    def name(self) -> str:
        """Basename of the command word ("" for a bare assignment/redirection)."""
        return posixpath.basename(self.argv[0]) if self.argv else ""


@dataclass(frozen=True)
class BashAnalysis:
    """The parsed command: its segments and overall class."""

    command: str
    segments: tuple[Segment, ...]

    @property
    def kind(self) -> Kind:
        """The most hiding class among the segments (STATIC for an empty command)."""
        return max((s.kind for s in self.segments), default=Kind.STATIC)


class _Unparseable(Exception):
    """Internal: the command is outside what we understand; callers fail closed."""


@dataclass
class _Word:
    value: str
    source: str
    dynamic: bool = False
    glob: bool = False
    nested: bool = False
    quoted: bool = False
    unquoted: str = ""  # value with quoted characters replaced by NUL (assignment/brace checks)


@dataclass
class _Builder:
    words: list[_Word] = field(default_factory=list)
    start: int = 0
    end: int = 0
    reasons: list[tuple[Kind, str]] = field(default_factory=list)
    via: str = ""
    src: str = ""

    def flag(self, kind: Kind, reason: str) -> None:
        if (kind, reason) not in self.reasons:
            self.reasons.append((kind, reason))


class _Acc:
    """Accumulates one word while it is lexed."""

    def __init__(self) -> None:
        self.value: list[str] = []
        self.unq: list[str] = []
        self.dynamic = self.glob = self.nested = self.quoted = False

    def lit(self, text: str, quoted: bool) -> None:
        self.value.append(text)
        self.unq.append("\0" * len(text) if quoted else text)
        self.quoted = self.quoted or quoted


class _Parser:
    def __init__(self, src: str, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise _Unparseable("nesting too deep")
        self.s = src
        self.n = len(src)
        self.i = 0
        self.depth = depth
        self.builders: list[_Builder] = []
        self.extra: list[_Builder] = []  # segments found inside substitutions / wrappers
        self.heredocs: list[tuple[str, bool, bool, _Builder]] = []
        self.pipeline_start = 0

    # ---------------------------------------------------------------- lists
    def parse_all(self) -> None:
        self.parse_list(stop_paren=False)
        self.read_heredocs()

    def parse_list(self, stop_paren: bool) -> None:
        depth = 0
        while True:
            self.skip_blanks(newlines=False)
            if self.i >= self.n:
                if stop_paren or depth:
                    raise _Unparseable("unterminated parenthesis")
                return
            c = self.s[self.i]
            two = self.s[self.i : self.i + 2]
            if c == "\n":
                self.i += 1
                self.read_heredocs()
                self.pipeline_start = len(self.builders)
            elif two == ";;" or two == ";&":
                raise _Unparseable("case clauses are not supported")
            elif c == ";":
                self.i += 1
                self.pipeline_start = len(self.builders)
            elif two in ("&&", "||"):
                self.i += 2
                self.pipeline_start = len(self.builders)
            elif c == "&" and two != "&>":
                self.i += 1
                for b in self.builders[self.pipeline_start :]:
                    b.flag(Kind.DYNAMIC, "runs in the background (&)")
                self.pipeline_start = len(self.builders)
            elif c == "|":
                self.i += 2 if two == "|&" else 1
            elif two == "((":
                self.arith_command()
            elif c == "(":
                depth += 1
                self.i += 1
            elif c == ")":
                self.i += 1
                if depth:
                    depth -= 1
                elif stop_paren:
                    return
                else:
                    raise _Unparseable("unbalanced ')'")
            else:
                self.simple_command()

    def skip_blanks(self, newlines: bool) -> None:
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c in " \t" or (newlines and c == "\n"):
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                nl = s.find("\n", self.i)
                self.i = self.n if nl < 0 else nl
            else:
                return

    def arith_command(self) -> None:
        b = _Builder(start=self.i)
        acc = _Acc()
        self.i += 2
        self.scan_arith(acc, b)
        b.end = self.i
        b.src = self.s[b.start : b.end].strip()
        b.flag(Kind.DYNAMIC, "arithmetic command (( ))")
        if acc.nested:
            b.flag(Kind.NESTED, "command substitution")
        self.builders.append(b)

    # ------------------------------------------------------ simple commands
    def simple_command(self) -> None:
        b = _Builder(start=self.i)
        first = True
        while True:
            self.skip_blanks(newlines=False)
            if self.i >= self.n:
                break
            c = self.s[self.i]
            two = self.s[self.i : self.i + 2]
            if c in "\n;|)" or (c == "&" and two != "&>"):
                break
            if c == "(" and not b.words:
                break  # `if (…)`, `while ((…))`: the list level handles the parenthesis
            if c == "(":
                if len(b.words) == 1 and self.s[self.i + 1 : self.i + 2] == ")":
                    raise _Unparseable("function definition")
                raise _Unparseable("unexpected '('")
            if c in "<>" and two in ("<(", ">("):
                b.words.append(self.proc_subst())
                first = False
                continue
            if c in "<>&":
                self.redirection(b, None)
                continue
            word = self.read_word()
            if (
                self.i < self.n
                and self.s[self.i] in "<>"
                and self.s[self.i : self.i + 2] not in ("<(", ">(")
            ):
                if word.source.isdigit():
                    self.redirection(b, word.source)
                    continue
                if re.fullmatch(r"\{[A-Za-z_][A-Za-z0-9_]*\}", word.source):
                    b.flag(Kind.DYNAMIC, "named file descriptor")
                    self.redirection(b, word.source)
                    continue
            if first and not word.quoted:
                if word.source in _SKIP_KEYWORDS:
                    b.start = self.i
                    continue
                if word.source in _END_KEYWORDS:
                    b.start = self.i
                    continue
                if word.source in ("case", "function", "coproc", "select"):
                    raise _Unparseable(f"'{word.source}' is not supported")
                if word.source == "for":
                    b.flag(Kind.DYNAMIC, "for loop header")
            first = False
            b.words.append(word)
        b.end = self.i
        b.src = self.s[b.start : b.end].strip()
        if b.words or b.reasons:
            self.builders.append(b)

    def redirection(self, b: _Builder, fd: str | None) -> None:
        s = self.s
        for op in ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">"):
            if s.startswith(op, self.i):
                break
        else:  # pragma: no cover - callers only call us at < > or &>
            raise _Unparseable("bad redirection")
        self.i += len(op)
        self.skip_blanks(newlines=False)
        if self.i >= self.n or s[self.i] in _WORD_END:
            raise _Unparseable(f"redirection {op!r} without a target")
        target = self.read_word()
        if target.nested:
            b.flag(Kind.NESTED, "command substitution in a redirection")
        if op in ("<<", "<<-"):
            self.heredocs.append((target.value, op == "<<-", target.quoted, b))
            b.flag(Kind.DYNAMIC, "heredoc")
            return
        if target.dynamic or target.glob:
            b.flag(Kind.DYNAMIC, f"redirection target {target.source!r} is dynamic")
        if op in ("<&", ">&") and (target.value.isdigit() or target.value == "-"):
            return  # fd duplication / close: no file touched
        if op in ("<", "<<<"):
            return  # reading a file is what the command's own arguments could do too
        if target.value not in _HARMLESS_TARGETS:
            b.flag(Kind.DYNAMIC, f"redirects output to {target.value!r}")

    def read_heredocs(self) -> None:
        pending, self.heredocs = self.heredocs, []
        for delim, strip, quoted, b in pending:
            body: list[str] = []
            while self.i < self.n:
                nl = self.s.find("\n", self.i)
                end = self.n if nl < 0 else nl
                line = self.s[self.i : end]
                self.i = end + 1 if nl >= 0 else self.n
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                body.append(line)
            text = "\n".join(body)
            if not quoted and ("$(" in text or "`" in text):
                b.flag(Kind.NESTED, "command substitution in a heredoc")
            elif not quoted and "$" in text:
                b.flag(Kind.DYNAMIC, "expansion in a heredoc")

    # ---------------------------------------------------------------- words
    def read_word(self) -> _Word:
        s = self.s
        start = self.i
        acc = _Acc()
        while self.i < self.n:
            c = s[self.i]
            if c in _WORD_END:
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                elif self.i + 1 < self.n:
                    acc.lit(s[self.i + 1], True)
                    self.i += 2
                else:
                    acc.lit("\\", False)
                    self.i += 1
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise _Unparseable("unterminated single quote")
                acc.lit(s[self.i + 1 : end], True)
                self.i = end + 1
            elif c == '"':
                self.i += 1
                self.dquote(acc)
            elif c == "$":
                self.dollar(acc, in_dquote=False)
            elif c == "`":
                self.backtick(acc)
            else:
                if c in "*?":
                    acc.glob = True
                acc.lit(c, False)
                self.i += 1
        unq = "".join(acc.unq)
        value = "".join(acc.value)
        lb = unq.find("[")
        if lb >= 0 and unq.find("]", lb + 1) > lb:
            acc.glob = True
        if _BRACE_RE.search(unq):
            acc.dynamic = True
        return _Word(value, s[start : self.i], acc.dynamic, acc.glob, acc.nested, acc.quoted, unq)

    def dquote(self, acc: _Acc) -> None:
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                acc.quoted = True
                return
            if c == "\\" and self.i + 1 < self.n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    acc.lit(s[self.i + 1], True)
                self.i += 2
            elif c == "$":
                self.dollar(acc, in_dquote=True)
            elif c == "`":
                self.backtick(acc)
            else:
                acc.lit(c, True)
                self.i += 1
        raise _Unparseable("unterminated double quote")

    def dollar(self, acc: _Acc, in_dquote: bool) -> None:
        s = self.s
        start = self.i
        nxt = s[self.i + 1 : self.i + 2]
        if nxt == "'" and not in_dquote:
            self.i += 2
            acc.lit(self.ansi_c(), True)
            return
        if nxt == '"' and not in_dquote:
            self.i += 2
            self.dquote(acc)
            return
        if s.startswith("$((", self.i):
            self.i += 3
            self.scan_arith(acc, None)
        elif nxt == "(":
            self.i += 2
            self.substitution()
            acc.nested = True
        elif nxt == "{":
            self.i += 2
            self.scan_braced(acc)
        elif nxt and (nxt.isalpha() or nxt == "_"):
            self.i += 1
            while self.i < self.n and (s[self.i].isalnum() or s[self.i] == "_"):
                self.i += 1
        elif nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
            self.i += 2
        else:
            acc.lit("$", in_dquote)
            self.i += 1
            return
        acc.dynamic = True
        acc.lit(s[start : self.i], False)

    def ansi_c(self) -> str:
        s = self.s
        out: list[str] = []
        simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
        simple.update({"e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"})
        while self.i < self.n:
            c = s[self.i]
            if c == "'":
                self.i += 1
                return "".join(out)
            if c != "\\" or self.i + 1 >= self.n:
                out.append(c)
                self.i += 1
                continue
            e = s[self.i + 1]
            self.i += 2
            if e in simple:
                out.append(simple[e])
            elif e in "xuU01234567":
                width = {"x": 2, "u": 4, "U": 8}.get(e, 3)
                digits_from = self.i if e in "xuU" else self.i - 1
                base = 8 if e not in "xuU" else 16
                j = digits_from
                ok = "01234567" if base == 8 else "0123456789abcdefABCDEF"
                while j < self.n and j - digits_from < width and s[j] in ok:
                    j += 1
                try:
                    out.append(chr(int(s[digits_from:j], base)))
                except ValueError:
                    out.append("\\" + e)
                self.i = j
            else:
                out.append("\\" + e)
        raise _Unparseable("unterminated $'...'")

    def scan_arith(self, acc: _Acc, b: _Builder | None) -> None:
        """Skip to the ``))`` closing ``$((`` / ``((``; note substitutions inside."""
        depth = 0
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == "$" or c == "`":
                sub = _Acc()
                if c == "$":
                    self.dollar(sub, in_dquote=False)
                else:
                    self.backtick(sub)
                acc.nested = acc.nested or sub.nested
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if s.startswith("))", self.i):
                        self.i += 2
                        return
                    raise _Unparseable("bad arithmetic expression")
                depth -= 1
            self.i += 1
        raise _Unparseable("unterminated arithmetic expression")

    def scan_braced(self, acc: _Acc) -> None:
        """Skip a ``${...}`` body (after ``${``), recursing into nested expansions."""
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == "}":
                self.i += 1
                return
            if c == "\\":
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise _Unparseable("unterminated single quote")
                self.i = end + 1
            elif c == '"':
                self.i += 1
                self.dquote(acc)
            elif c == "$":
                self.dollar(acc, in_dquote=True)
            elif c == "`":
                self.backtick(acc)
            else:
                self.i += 1
        raise _Unparseable("unterminated ${...}")

    def substitution(self) -> None:
        """Parse ``$( ... )`` / ``<( ... )`` contents in place; their commands become segments."""
        sub = _Parser(self.s, self.depth + 1)
        sub.i = self.i
        sub.parse_list(stop_paren=True)
        self.i = sub.i
        self.heredocs.extend(sub.heredocs)
        self.extra.extend(sub.builders)
        self.extra.extend(sub.extra)

    def proc_subst(self) -> _Word:
        start = self.i
        self.i += 2
        self.substitution()
        return _Word(self.s[start : self.i], self.s[start : self.i], nested=True, dynamic=True)

    def backtick(self, acc: _Acc) -> None:
        s = self.s
        j = self.i + 1
        inner: list[str] = []
        while j < self.n and s[j] != "`":
            if s[j] == "\\" and j + 1 < self.n and s[j + 1] in "`$\\":
                inner.append(s[j + 1])
                j += 2
            else:
                inner.append(s[j])
                j += 1
        if j >= self.n:
            raise _Unparseable("unterminated backquote")
        sub = _Parser("".join(inner), self.depth + 1)
        sub.parse_all()
        self.extra.extend(sub.builders)
        self.extra.extend(sub.extra)
        acc.nested = acc.dynamic = True
        acc.lit(s[self.i : j + 1], False)
        self.i = j + 1


# ---------------------------------------------------------------- classification


def _segments_of(command: str, depth: int, via: str) -> list[Segment]:
    """Parse ``command`` into classified segments; errors become one NESTED segment."""
    try:
        p = _Parser(command, depth)
        p.parse_all()
        builders = p.builders + p.extra
    except (_Unparseable, RecursionError, IndexError, ValueError) as exc:
        reason = str(exc) or "too deeply nested"
        return [Segment((command,), command, Kind.NESTED, (f"unparseable: {reason}",), via)]
    out: list[Segment] = []
    for b in builders:
        if via and not b.via:
            b.via = via
        out.extend(_finish(b, depth))
    return out


def _finish(b: _Builder, depth: int) -> list[Segment]:
    words = b.words
    k = 0
    while k < len(words) and _ASSIGN_RE.match(words[k].unquoted):
        w = words[k]
        b.flag(Kind.NESTED if w.nested else Kind.DYNAMIC, f"assignment {w.source!r}")
        k += 1
    cmd = words[k:]
    for w in cmd:
        if w.nested:
            b.flag(Kind.NESTED, f"command substitution in {w.source!r}")
        elif w.dynamic:
            b.flag(Kind.DYNAMIC, f"expansion in {w.source!r}")
        elif w.glob:
            b.flag(Kind.DYNAMIC, f"glob in {w.source!r}")
    inner: list[Segment] = []
    if cmd:
        name = cmd[0]
        if name.dynamic or name.glob or name.nested:
            b.flag(Kind.NESTED, f"dynamic command name {name.source!r}")
        elif not name.value.isascii() or not name.value.isprintable():
            b.flag(Kind.DYNAMIC, f"non-ASCII or non-printable command name {name.value!r}")
        else:
            inner = _inspect(b, cmd, depth)
    source = b.src
    kind = max((kd for kd, _ in b.reasons), default=Kind.STATIC)
    argv = tuple(w.value if not (w.dynamic or w.nested) else w.source for w in cmd)
    seg = Segment(argv, source, kind, tuple(r for _, r in b.reasons), b.via)
    return [seg, *inner]


def _wrapped(b: _Builder, words: list[_Word], wrapper: str, depth: int) -> list[Segment]:
    """Emit the command a wrapper runs as its own segment (so deny rules see it)."""
    if not words and wrapper != "xargs":
        return []  # `exec 2>&1`, bare `env`/`nohup`: nothing is run indirectly
    b.flag(Kind.NESTED, f"'{wrapper}' runs another command")
    if not words:
        return []
    inner = _Builder(words=list(words), via=wrapper, src=" ".join(w.source for w in words))
    return _finish(inner, depth + 1)


def _parse_string(b: _Builder, word: _Word | None, via: str, depth: int) -> list[Segment]:
    """A static command string (``sh -c '…'``, ``eval …``) is parsed for its segments too."""
    if word is None or word.dynamic or word.nested or depth > _MAX_DEPTH:
        return []
    return _segments_of(word.value, depth + 1, via)


_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"}
)
_WIN_SHELLS = frozenset({"pwsh", "powershell", "pwsh.exe", "powershell.exe", "cmd", "cmd.exe"})
_INTERP_RE = re.compile(r"(python|pypy|ruby|perl|php|lua|luajit|node|nodejs|julia)[0-9.]*")
# Flags whose next argument is inline code, per interpreter family.
_INLINE_FLAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "pypy": frozenset({"-c"}),
    "ruby": frozenset({"-e"}),
    "perl": frozenset({"-e", "-E"}),
    "php": frozenset({"-r", "-R", "-B", "-E", "-F"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print", "-pe"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print", "-pe"}),
    "julia": frozenset({"-e", "--eval", "-E", "--print"}),
    "deno": frozenset({"eval"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "osascript": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
}
_INFO_FLAGS = frozenset({"--version", "-V", "-v", "--help", "-h", "-version"})
# wrapper -> (options that take a value, positional arguments before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-o", "-f", "--output", "--format"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "sudo": (
        frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"})
        | frozenset({"--user", "--group", "--chdir", "--prompt", "--role", "--type", "--host"})
        | frozenset({"--other-user", "--close-from", "--command-timeout"}),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "xargs": (
        frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file"})
        | frozenset({"--delimiter", "--eof", "--replace", "--max-lines", "--max-args"})
        | frozenset({"--max-procs", "--max-chars", "--process-slot-var"}),
        0,
    ),
    "watch": (frozenset({"-n", "--interval", "-q", "--equexit"}), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "unshare": (frozenset({"-S", "-G", "--setuid", "--setgid", "-R", "-w"}), 0),
    "taskset": (frozenset(), 1),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "strace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-E", "-I", "-b", "-a", "-X", "-P"}), 0),
    "ltrace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-n", "-a"}), 0),
    "runuser": (frozenset({"-u", "-g", "-G", "--user", "--group"}), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "firejail": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
    "torsocks": (frozenset(), 0),
    "parallel": (frozenset({"-j", "--jobs", "-S", "--sshlogin"}), 0),
    "busybox": (frozenset(), 0),
    "systemd-run": (frozenset({"-u", "--unit", "-p", "--property"}), 0),
    "xvfb-run": (frozenset({"-n", "-s", "-f", "-e"}), 0),
    "dbus-run-session": (frozenset(), 0),
}
_GIT_GLOBAL_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"})
_GIT_NESTED_OPTS = (
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--open-files-in-pager",
    "--ext-diff",
    "--extcmd",
    "--config-env",
    "--to-command",
)
_GIT_RUNNERS = {("submodule", "foreach"), ("bisect", "run")}
_GIT_CONFIG_RE = re.compile(
    r"(core\.(pager|editor|sshcommand|fsmonitor|hookspath|gitproxy|askpass)"
    r"|sequence\.editor|diff\.external|gpg\..*program|alias\..*|pager\..*"
    r"|(diff|merge|filter|credential|remote)\..*\.(command|textconv|driver|clean|smudge|process"
    r"|helper|uploadpack|receivepack|proxy)|credential\.helper|include.*|.*\.(cmd|program))",
    re.IGNORECASE,
)


# Options of ordinary tools that make them run an arbitrary command.
_RUNNER_OPTS: dict[str, tuple[str, ...]] = {
    "go": ("-exec", "-toolexec", "-vettool", "--exec", "--toolexec", "--vettool"),
    "cargo": ("--config", "-Zhost-config", "--target-runner"),
    "npm": ("--script-shell",),
    "pnpm": ("--script-shell",),
    "yarn": ("--script-shell",),
    "make": ("SHELL=", ".SHELLFLAGS="),
    "man": ("-P", "--pager", "-H", "--html"),
    "git": (),
}


def _runner_opt(name: str, vals: list[str]) -> str:
    for opt in _RUNNER_OPTS.get(name, ()):
        for v in vals:
            if v == opt or v.startswith(opt if opt.endswith("=") else opt + "="):
                return v
    return ""


def _inspect(b: _Builder, cmd: list[_Word], depth: int) -> list[Segment]:
    """Command-specific rules for indirect execution; returns wrapped-command segments."""
    name = posixpath.basename(cmd[0].value)
    args = cmd[1:]
    vals = [w.value for w in args]
    if name in ("eval", "source", ".", "fc", "trap"):
        if name == "trap" and (not vals or vals[0] in ("-l", "-p")):
            return []
        b.flag(Kind.NESTED, f"'{name}' executes code from its arguments")
        if name == "eval" and args and not any(w.dynamic or w.nested for w in args):
            joined = _Word(" ".join(vals), " ".join(w.source for w in args))
            return _parse_string(b, joined, "eval", depth)
        return []
    if name in _STATE_BUILTINS:
        b.flag(Kind.DYNAMIC, f"'{name}' changes shell state")
        return []
    if name == "command" and any(v in ("-v", "-V") for v in vals[:2]):
        return []
    if name in _SHELLS:
        return _shell(b, name, args, depth)
    if name.lower() in _WIN_SHELLS:
        b.flag(Kind.NESTED, f"'{name}' runs a command string")
        return []
    interp = _interpreter(name)
    if interp:
        _interp_code(b, name, interp, vals)
        return []
    if name in _WRAPPERS:
        return _wrapper(b, name, args, depth)
    if name == "find":
        return _find(b, args, depth)
    hit = _runner_opt(name, vals)
    if hit:
        b.flag(Kind.NESTED, f"'{name} {hit}' runs another command")
    elif name == "git":
        _git(b, vals)
    elif name == "tar" and any(
        v.startswith(("--to-command", "--checkpoint-action", "--use-compress-program"))
        or v.startswith(("--info-script", "--new-volume-script"))
        or v == "-I"
        for v in vals
    ):
        b.flag(Kind.NESTED, "tar option runs a command")
    elif name in ("ssh", "scp", "sftp") and any(
        "proxycommand" in v.lower() or "localcommand" in v.lower() for v in vals
    ):
        b.flag(Kind.NESTED, f"'{name}' option runs a local command")
    elif name == "rsync" and any(v in ("-e", "--rsh") or v.startswith("--rsh=") for v in vals):
        b.flag(Kind.NESTED, "rsync --rsh runs a command")
    elif name in ("su", "script", "flock", "nix-shell") and any(
        v in ("-c", "--command", "--run") for v in vals
    ):
        b.flag(Kind.NESTED, f"'{name}' runs a command string")
    return []


def _interpreter(name: str) -> str:
    low = name.lower()
    m = _INTERP_RE.fullmatch(low)
    if m:
        return m.group(1)
    return low if low in _INLINE_FLAGS else ""


def _interp_code(b: _Builder, name: str, interp: str, vals: list[str]) -> None:
    flags = _INLINE_FLAGS[interp]
    for v in vals:
        if v in flags or (v.startswith("--") and v.split("=", 1)[0] in flags):
            b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
            return
        # clustered short flags: python -Sc, perl -ne / -pie
        if v.startswith("-") and not v.startswith("--") and len(v) > 2:
            if interp in ("python", "pypy") and "c" in v[1:]:
                b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
                return
            if interp in ("perl", "ruby") and ("e" in v[1:] or "E" in v[1:]):
                b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
                return
        if not v.startswith("-") or v == "-":
            if v == "-":
                b.flag(Kind.NESTED, f"'{name}' reads code from stdin")
            return  # a script file / module operand: what follows are its arguments
        if v in ("-m",):
            return
    if not any(v in _INFO_FLAGS for v in vals):
        b.flag(Kind.NESTED, f"'{name}' without a script reads code from stdin")


def _shell(b: _Builder, name: str, args: list[_Word], depth: int) -> list[Segment]:
    skip = False
    for k, w in enumerate(args):
        v = w.value
        if skip or v == "--":
            skip = False
            continue
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            skip = True
            continue
        if not v.startswith(("-", "+")):
            return []  # a script file operand
        if v.startswith("-") and not v.startswith("--") and ("c" in v[1:] or "s" in v[1:]):
            b.flag(Kind.NESTED, f"'{name} {v}' runs a command string")
            code = args[k + 1] if k + 1 < len(args) and "c" in v[1:] else None
            return _parse_string(b, code, f"{name} -c", depth)
        if v in _INFO_FLAGS:
            return []
    b.flag(Kind.NESTED, f"'{name}' without a script reads commands from stdin")
    return []


def _wrapper(b: _Builder, name: str, args: list[_Word], depth: int) -> list[Segment]:
    valued, positional = _WRAPPERS[name]
    k = 0
    while k < len(args):
        v = args[k].value
        if v == "--":
            k += 1
            break
        if name == "env" and _ASSIGN_RE.match(args[k].unquoted):
            k += 1
            continue
        if (name == "env" and v in ("-S", "--split-string")) or v.startswith("--split-string="):
            b.flag(Kind.NESTED, "'env -S' splits a command string")
            return []
        if not v.startswith("-") or v == "-":
            break
        k += 2 if v in valued else 1
    k += positional
    inner = args[k:] if k <= len(args) else []
    if name == "xargs" and not inner:
        return _wrapped(b, [], name, depth)
    return _wrapped(b, inner, name, depth)


def _find(b: _Builder, args: list[_Word], depth: int) -> list[Segment]:
    out: list[Segment] = []
    k = 0
    while k < len(args):
        v = args[k].value
        if v in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k + 1
            while j < len(args) and args[j].value not in (";", "+"):
                j += 1
            out.extend(_wrapped(b, args[k + 1 : j], f"find {v}", depth))
            k = j
        k += 1
    return out


def _git(b: _Builder, vals: list[str]) -> None:
    k = 0
    while k < len(vals):
        v = vals[k]
        if v in ("-c",) or v.startswith("--exec-path="):
            b.flag(Kind.NESTED, f"git option {v!r} can run commands")
            return
        if v in _GIT_GLOBAL_VALUE:
            k += 2
            continue
        if not v.startswith("-"):
            break
        if v.startswith(_GIT_NESTED_OPTS):
            b.flag(Kind.NESTED, f"git option {v!r} can run commands")
            return
        k += 1
    sub = vals[k] if k < len(vals) else ""
    rest = vals[k + 1 :]
    if (sub, rest[0] if rest else "") in _GIT_RUNNERS or sub == "filter-branch":
        b.flag(Kind.NESTED, f"'git {sub}' runs commands")
    elif sub in ("rebase",) and any(r in ("-x", "--exec") or r.startswith("--exec=") for r in rest):
        b.flag(Kind.NESTED, "'git rebase --exec' runs commands")
    elif sub in ("grep",) and any(r == "-O" or r.startswith("-O") for r in rest):
        b.flag(Kind.NESTED, "'git grep -O' runs a pager command")
    elif sub == "difftool" and any(r in ("-x", "--extcmd") for r in rest):
        b.flag(Kind.NESTED, "'git difftool --extcmd' runs commands")
    elif any(r.startswith(_GIT_NESTED_OPTS) for r in rest):
        b.flag(Kind.NESTED, f"'git {sub}' option can run commands")
    elif sub == "config" and any(_GIT_CONFIG_RE.fullmatch(r) for r in rest):
        b.flag(Kind.NESTED, "git config key that runs commands")


def analyze(command: str) -> BashAnalysis:
    """Split ``command`` into classified segments; never raises (unparseable → one NESTED)."""
    if len(command) > _MAX_LEN:
        seg = Segment((command[:80],), command, Kind.NESTED, ("unparseable: command too long",))
        return BashAnalysis(command, (seg,))
    if _CONTROL_RE.search(command):
        seg = Segment((command,), command, Kind.NESTED, ("unparseable: control characters",))
        return BashAnalysis(command, (seg,))
    return BashAnalysis(command, tuple(_segments_of(command, 0, "")))
