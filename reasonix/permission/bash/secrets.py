"""Does a bash command name one of Reasonix's secret files? (issue 32)

The jail masks the secrets (bubblewrap, Seatbelt), but with ``[sandbox] bash =
"off"`` or no sandbox on the platform this check is what stands between ``-y``
and ``cat ~/.reasonix/.env``. It never runs anything. It reads the command's
words (quote-removed by the parser) and its raw text (redirections, inline
``python -c`` code), expands ``~`` and the variables the shell would
(``$HOME``, ``$REASONIX_HOME``, ``${VAR:-default}``) from the environment
bash inherits, cuts the text at characters no path here contains, and judges
each piece. A piece names a secret when it is

* at or below a secret, as written or after symlinks (a link planted in the
  workspace, a symlinked parent directory); relative pieces join the workspace;
* the directory holding a secret (``cd ~/.reasonix && cat .env``,
  ``grep -r sk- ~/.reasonix``), unless that is the workspace, one of its
  parents or the user's home;
* a glob or brace pattern that matches one of those (``~/.reasonix/.e*``);
* a path that ends in a secret's last two parts but cannot be resolved here
  (``$SOMEWHERE/.reasonix/.env``): asking is the safe side.

What it cannot see — a path computed or decoded at run time, a recursive walk
of a parent directory (``grep -r sk- ~``) — is left to the jail.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from reasonix.lazy import Pattern

if TYPE_CHECKING:
    import re

    from reasonix.permission.bash.model import BashAnalysis

__all__ = ["secret_mention"]

# ${NAME}, ${NAME:-default} (and the -, =, ?, + forms), $NAME
_VAR_RE = Pattern(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=?+]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
    needs=("$",),
)
# Cut points (besides whitespace): shell operators for whole words, and more for the
# pieces of code strings. str.translate + split, not a regular expression: this runs
# on every bash call, and compiling a pattern would cost more than the cutting.
_COARSE = str.maketrans(dict.fromkeys(";&|()<>`", " "))
_FINE = str.maketrans(dict.fromkeys(";&|()<>`'\"{},=:", " "))
_BRACE_RE = Pattern(r"\{[^{}]*\}", needs=("{",))
_GLOB = frozenset("*?[")
_MAX_RESOLVED = 2000  # pieces given to realpath per command; the rest are judged as written


def secret_mention(
    command: str,
    analysis: BashAnalysis,
    secrets: Iterable[str | os.PathLike[str]],
    *,
    cwd: str | None,
    home: str,
    env: Mapping[str, str],
) -> str:
    """The secret ``command`` names (or may name), as a path; "" when it names none."""
    targets = _Targets(secrets, cwd, home)
    if not targets.secrets:
        return ""
    texts = [command]
    texts += [word for seg in analysis.segments for word in seg.argv]
    pieces: dict[str, None] = {}  # ordered and unique
    for text in texts:
        expanded = _expand(text, env, home, cwd)
        # quote removal, roughly: `~/'.rea'"sonix"/.e\nv` is the path bash opens
        unquoted = expanded.replace('"', "").replace("'", "").replace("\\", "")
        for piece in unquoted.translate(_COARSE).split():
            pieces[piece] = None
        for piece in expanded.translate(_FINE).split():
            pieces[piece] = None
    for k, piece in enumerate(pieces):
        hit = targets.judge(_tilde(piece, home), resolve=k < _MAX_RESOLVED)
        if hit:
            return hit
    return ""


def _expand(text: str, env: Mapping[str, str], home: str, cwd: str | None) -> str:
    """``text`` with the variables bash would know replaced (unknown ones stay as written)."""
    if "$" not in text:
        return text

    def value(name: str) -> str | None:
        if name == "PWD" and cwd:
            return cwd  # bash runs in the workspace, not where Reasonix started
        if name == "HOME":
            return env.get("HOME") or home
        return env.get(name)

    def sub(m: re.Match[str]) -> str:
        got = value(m.group(1) or m.group(3))
        if got is None and m.group(2) is not None:
            return _tilde(m.group(2), home)  # ${VAR:-~/default}
        return got if got is not None else m.group(0)

    return _VAR_RE.sub(sub, text)


def _tilde(piece: str, home: str) -> str:
    if piece == "~" or piece.startswith("~/"):
        return home + piece[1:]
    if piece.startswith("~"):
        return os.path.expanduser(piece)  # ~user
    return piece


class _Targets:
    """The secrets in both spellings, the directories holding them, their short tails."""

    def __init__(self, secrets: Iterable[str | os.PathLike[str]], cwd: str | None, home: str):
        self.cwd = cwd
        self.real_cwd = _realpath(cwd) if cwd else None
        self.secrets: dict[str, str] = {}  # a spelling -> the secret as configured
        self.tails: dict[str, str] = {}
        holders: dict[str, str] = {}
        for raw in secrets:
            lexical = posixpath.normpath(os.path.expanduser(os.fspath(raw)))
            for form in (lexical, _realpath(lexical)):
                self.secrets.setdefault(form, lexical)
                holders.setdefault(posixpath.dirname(form), posixpath.dirname(lexical))
            parts = lexical.strip("/").split("/")
            if len(parts) >= 2:
                self.tails["/".join(parts[-2:])] = lexical
        # A secret's directory counts too, unless mentioning it is ordinary work: the
        # workspace (a token file kept there), its parents, the user's home, the root.
        ordinary: set[str] = {"/", home, _realpath(home)}
        if cwd:
            for base in (cwd, _realpath(cwd)):
                while base not in ordinary:
                    ordinary.add(base)
                    base = posixpath.dirname(base)
        self.holders = {d: s for d, s in holders.items() if d not in ordinary}
        # one C-level test per piece first; the loops below run only on a likely hit
        self.below = tuple(spelling.rstrip("/") + "/" for spelling in self.secrets)
        self.endings = tuple("/" + tail for tail in self.tails)

    def judge(self, piece: str, resolve: bool) -> str:
        """The secret ``piece`` names, or ""."""
        absolute = piece.startswith("/")
        if not absolute and self.cwd is None:
            return self._tail(piece)
        joined = piece if absolute else posixpath.join(self.cwd or "/", piece)
        lexical = posixpath.normpath(joined)
        pattern = _BRACE_RE.sub("*", lexical) if "{" in lexical else lexical
        if not _GLOB.isdisjoint(pattern):
            return self._glob(pattern) or self._tail(piece)
        forms = [lexical]
        if resolve and "\x00" not in joined:
            forms.append(self._real(piece, joined))
        for form in forms:
            hit = self._at(form)
            if hit:
                return hit
        return self._tail(piece)

    def _at(self, form: str) -> str:
        """The secret at or above ``form``, or the one whose directory ``form`` is."""
        if form in self.secrets:
            return self.secrets[form]
        if form.startswith(self.below):
            for spelling, secret in self.secrets.items():
                if form.startswith(spelling.rstrip("/") + "/"):
                    return secret
        return self.holders.get(form, "")

    def _real(self, piece: str, joined: str) -> str:
        """``joined`` after symlinks; a plain name in the workspace costs one ``lstat``.

        Most pieces of a long command (a heredoc, inline code) are words that name
        no file at all: walking every component of the workspace path for each of
        them would make a big command slow to judge.
        """
        if "/" in piece or piece in (".", "..") or self.real_cwd is None:
            return _realpath(joined)
        try:
            info = os.lstat(joined)
        except (OSError, ValueError):
            return posixpath.join(self.real_cwd, piece)  # no such file: nothing to follow
        if stat.S_ISLNK(info.st_mode):
            return _realpath(joined)
        return posixpath.join(self.real_cwd, piece)

    def _glob(self, pattern: str) -> str:
        """A pattern that matches a secret or its directory, part by part (``*`` stops at ``/``)."""
        import fnmatch  # here only: few commands hold a glob

        want = pattern.split("/")
        for name, secret in [*self.secrets.items(), *self.holders.items()]:
            have = name.split("/")
            if "**" in pattern:
                if fnmatch.fnmatchcase(name, pattern.replace("**", "*")):
                    return secret
            elif len(have) == len(want) and all(
                fnmatch.fnmatchcase(h, w) for h, w in zip(have, want, strict=True)
            ):
                return secret
        return ""

    def _tail(self, piece: str) -> str:
        text = posixpath.normpath(piece)
        if text in self.tails:
            return self.tails[text]
        if text.endswith(self.endings):
            for tail, secret in self.tails.items():
                if text.endswith("/" + tail):
                    return secret
        return ""


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path
