"""The classifier's result types: segment classes, segments, the whole analysis."""

from __future__ import annotations

import enum
import posixpath
from typing import NamedTuple

__all__ = ["BashAnalysis", "Kind", "Segment"]


class Kind(enum.IntEnum):
    """How much a segment hides; the max over segments classifies the command."""

    STATIC = 0
    DYNAMIC = 1
    NESTED = 2

    def __str__(self) -> str:
        return self.name.lower()


class Segment(NamedTuple):
    """One simple command. ``argv`` holds literal words (dynamic ones keep their source text).

    Named tuples, this and :class:`BashAnalysis`: a run's first bash call builds them
    (issue 39), and a tuple class costs a tenth of a dataclass to define.
    """

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


class BashAnalysis(NamedTuple):
    """The parsed command: its segments and overall class."""

    command: str
    segments: tuple[Segment, ...]

    @property
    def kind(self) -> Kind:
        """The most hiding class among the segments (STATIC for an empty command)."""
        return max((s.kind for s in self.segments), default=Kind.STATIC)
