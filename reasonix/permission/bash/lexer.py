"""The hand-written lexer/parser: command text → builders of simple commands.

One cursor walks the string; ``$( )``, ``<( )`` and ``${ }`` recurse on the same
cursor, backquotes on their unescaped text. Heredoc bodies are read at the next
newline. Anything outside the supported subset raises :class:`Unparseable`,
which the classifier turns into a NESTED segment (fail closed).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from reasonix.lazy import Pattern
from reasonix.permission.bash.model import Kind

__all__ = ["ASSIGN_RE", "MAX_DEPTH", "Builder", "Parser", "Unparseable", "Word"]

MAX_DEPTH = 48
_WORD_END = frozenset(" \t\n;&|()<>")
ASSIGN_RE = Pattern(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=", needs=("=",))
_BRACE_RE = Pattern(r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}", needs=("{",))
_SKIP_KEYWORDS = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{"})
_END_KEYWORDS = frozenset({"fi", "done", "}", "esac"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


class Unparseable(Exception):
    """Internal: the command is outside what we understand; callers fail closed."""


class Word(NamedTuple):
    """A lexed word: its value after quote removal and what made it non-literal.

    A named tuple (never changed once lexed): every bash command's check builds words.
    """

    value: str
    source: str
    dynamic: bool = False
    glob: bool = False
    nested: bool = False
    quoted: bool = False
    unquoted: str = ""  # value with quoted characters replaced by NUL (assignment/brace checks)


class Builder:
    """A simple command being collected; classification reasons accumulate here.

    ``start``/``end`` index its text in the command (``src``); ``via`` names the wrapper
    ("timeout", "bash -c" …) when it is a wrapped command.
    """

    __slots__ = ("end", "reasons", "src", "start", "via", "words")

    def __init__(
        self,
        words: list[Word] | None = None,
        start: int = 0,
        end: int = 0,
        reasons: list[tuple[Kind, str]] | None = None,
        via: str = "",
        src: str = "",
    ) -> None:
        self.words: list[Word] = [] if words is None else words
        self.start = start
        self.end = end
        self.reasons: list[tuple[Kind, str]] = [] if reasons is None else reasons
        self.via = via
        self.src = src

    def flag(self, kind: Kind, reason: str) -> None:
        """Record why this command is DYNAMIC/NESTED (deduplicated)."""
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


class Parser:
    """Recursive-descent parser over one command string (one cursor, shared by ``$( )``)."""

    def __init__(self, src: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise Unparseable("nesting too deep")
        self.s = src
        self.n = len(src)
        self.i = 0
        self.depth = depth
        self.builders: list[Builder] = []
        self.extra: list[Builder] = []  # segments found inside substitutions / wrappers
        self.heredocs: list[tuple[str, bool, bool, Builder]] = []
        self.pipeline_start = 0

    # ---------------------------------------------------------------- lists
    def parse_all(self) -> None:
        """Parse the whole string, including trailing heredoc bodies."""
        self.parse_list(stop_paren=False)
        self.read_heredocs()

    def parse_list(self, stop_paren: bool) -> None:
        """Parse commands joined by ; & && || | and newlines, until EOF or ``)``."""
        depth = 0
        while True:
            self.skip_blanks(newlines=False)
            if self.i >= self.n:
                if stop_paren or depth:
                    raise Unparseable("unterminated parenthesis")
                return
            c = self.s[self.i]
            two = self.s[self.i : self.i + 2]
            if c == "\n":
                self.i += 1
                self.read_heredocs()
                self.pipeline_start = len(self.builders)
            elif two == ";;" or two == ";&":
                raise Unparseable("case clauses are not supported")
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
                    raise Unparseable("unbalanced ')'")
            else:
                self.simple_command()

    def skip_blanks(self, newlines: bool) -> None:
        """Skip blanks, line continuations and comments."""
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
        """An ``(( … ))`` arithmetic command: one DYNAMIC segment."""
        b = Builder(start=self.i)
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
        """Collect words and redirections of one simple command."""
        b = Builder(start=self.i)
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
                    raise Unparseable("function definition")
                raise Unparseable("unexpected '('")
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
                    raise Unparseable(f"'{word.source}' is not supported")
                if word.source == "for":
                    b.flag(Kind.DYNAMIC, "for loop header")
            first = False
            b.words.append(word)
        b.end = self.i
        b.src = self.s[b.start : b.end].strip()
        if b.words or b.reasons:
            self.builders.append(b)

    def redirection(self, b: Builder, fd: str | None) -> None:
        """Parse one redirection operator and its target, flagging file writes."""
        s = self.s
        for op in ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">"):
            if s.startswith(op, self.i):
                break
        else:  # pragma: no cover - callers only call us at < > or &>
            raise Unparseable("bad redirection")
        self.i += len(op)
        self.skip_blanks(newlines=False)
        if self.i >= self.n or s[self.i] in _WORD_END:
            raise Unparseable(f"redirection {op!r} without a target")
        target = self.read_word()
        if target.nested:
            b.flag(Kind.NESTED, "command substitution in a redirection")
        if op in ("<<", "<<-"):
            self.heredocs.append((target.value, op == "<<-", target.quoted, b))
            b.flag(Kind.DYNAMIC, "heredoc")
            return
        if target.value.startswith(("/dev/tcp/", "/dev/udp/")):
            b.flag(Kind.DYNAMIC, f"opens a network connection via {target.value!r}")
        if target.dynamic or target.glob:
            b.flag(Kind.DYNAMIC, f"redirection target {target.source!r} is dynamic")
        if op in ("<&", ">&") and (target.value.isdigit() or target.value == "-"):
            return  # fd duplication / close: no file touched
        if op in ("<", "<<<"):
            return  # reading a file is what the command's own arguments could do too
        if target.value not in _HARMLESS_TARGETS:
            b.flag(Kind.DYNAMIC, f"redirects output to {target.value!r}")

    def read_heredocs(self) -> None:
        """Consume pending heredoc bodies (they start after a newline)."""
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
    def read_word(self) -> Word:
        """Lex one word with quoting, escapes and expansions."""
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
                    raise Unparseable("unterminated single quote")
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
        if s.startswith("~", start):
            acc.dynamic = True  # tilde expansion: `ls ~/.ssh` is not the literal `ls ~/.ssh`
        return Word(value, s[start : self.i], acc.dynamic, acc.glob, acc.nested, acc.quoted, unq)

    def dquote(self, acc: _Acc) -> None:
        """The inside of ``"…"`` (after the opening quote)."""
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
        raise Unparseable("unterminated double quote")

    def dollar(self, acc: _Acc, in_dquote: bool) -> None:
        """``$`` forms: ``$'…'``, ``$"…"``, ``$((…))``, ``$(…)``, ``${…}``, ``$NAME``."""
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
            if s[start : self.i].endswith("@P}"):
                acc.nested = True  # prompt expansion runs command substitutions in the value
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
        """Decode the body of ``$'…'`` (after the opening quote)."""
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
        raise Unparseable("unterminated $'...'")

    def scan_arith(self, acc: _Acc, b: Builder | None) -> None:
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
                    raise Unparseable("bad arithmetic expression")
                depth -= 1
            self.i += 1
        raise Unparseable("unterminated arithmetic expression")

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
                    raise Unparseable("unterminated single quote")
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
        raise Unparseable("unterminated ${...}")

    def substitution(self) -> None:
        """Parse ``$( ... )`` / ``<( ... )`` contents in place; their commands become segments."""
        sub = Parser(self.s, self.depth + 1)
        sub.i = self.i
        sub.parse_list(stop_paren=True)
        self.i = sub.i
        self.heredocs.extend(sub.heredocs)
        self.extra.extend(sub.builders)
        self.extra.extend(sub.extra)

    def proc_subst(self) -> Word:
        """A ``<(…)`` / ``>(…)`` word; its commands become segments."""
        start = self.i
        self.i += 2
        self.substitution()
        return Word(self.s[start : self.i], self.s[start : self.i], nested=True, dynamic=True)

    def backtick(self, acc: _Acc) -> None:
        """A backquote substitution, parsed from its unescaped text."""
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
            raise Unparseable("unterminated backquote")
        sub = Parser("".join(inner), self.depth + 1)
        sub.parse_all()
        self.extra.extend(sub.builders)
        self.extra.extend(sub.extra)
        acc.nested = acc.dynamic = True
        acc.lit(s[self.i : j + 1], False)
        self.i = j + 1
