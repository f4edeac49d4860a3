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

from reasonix.lazy import Pattern
from reasonix.permission.bash.classify import segments_of
from reasonix.permission.bash.model import BashAnalysis, Kind, Segment

__all__ = ["BashAnalysis", "Kind", "Segment", "analyze"]

_MAX_LEN = 100_000
_CONTROL_RE = Pattern(r"[\x00-\x08\x0b-\x1f\x7f]")


def analyze(command: str) -> BashAnalysis:
    """Split ``command`` into classified segments; never raises (unparseable → one NESTED)."""
    if len(command) > _MAX_LEN:
        seg = Segment((command[:80],), command, Kind.NESTED, ("unparseable: command too long",))
        return BashAnalysis(command, (seg,))
    # (a printable command holds none: the pattern is compiled only for the others)
    if not command.isprintable() and _CONTROL_RE.search(command):
        seg = Segment((command,), command, Kind.NESTED, ("unparseable: control characters",))
        return BashAnalysis(command, (seg,))
    return BashAnalysis(command, tuple(segments_of(command, 0, "")))
