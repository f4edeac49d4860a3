"""Two structural deferrals for module bodies on the start-up path.

* :class:`Pattern` is a regular expression compiled the first time it is used,
  so a module that holds a few patterns does not import :mod:`re` (with
  :mod:`enum` behind it) before the chat view's first frame.
* :func:`lazy_exports` is a package ``__getattr__`` (PEP 562) that imports a
  re-exported name's submodule on first access, so importing one submodule of
  a package does not load all of them.

Everything else is plain Python: classes are real :mod:`dataclasses`, and
subsystems are imported where they are first used (docs/SPEC.md, "How
start-up stays fast").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import re
    from typing import Any

__all__ = ["Pattern", "lazy_exports"]


class Pattern:
    """A ``str`` regular expression compiled on first use, with the methods of ``re.Pattern``.

    ``needs`` names strings of which every match contains at least one (``"="``
    for an assignment, ``"{"`` for a brace expansion): ``match``, ``fullmatch``,
    ``search`` and ``sub`` of a whole string that holds none of them answer
    "no match" without compiling anything.
    """

    __slots__ = ("_compiled", "flags", "needs", "pattern")

    def __init__(self, pattern: str, flags: int = 0, *, needs: tuple[str, ...] = ()) -> None:
        self.pattern, self.flags, self.needs = pattern, flags, needs
        self._compiled: re.Pattern[str] | None = None

    def _hopeless(self, string: str, span: tuple[int, ...]) -> bool:
        """True when no match can exist: ``needs`` given, the whole string, none in it."""
        needs = self.needs
        return bool(needs) and not span and not any(n in string for n in needs)

    def compiled(self) -> re.Pattern[str]:
        """The ``re.Pattern`` (compiled now if it was not yet)."""
        got = self._compiled
        if got is None:
            import re

            got = self._compiled = re.compile(self.pattern, self.flags)
        return got

    def match(self, string: str, *span: int) -> re.Match[str] | None:
        """``re.Pattern.match``."""
        if self._hopeless(string, span):
            return None
        return self.compiled().match(string, *span)

    def fullmatch(self, string: str, *span: int) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        if self._hopeless(string, span):
            return None
        return self.compiled().fullmatch(string, *span)

    def search(self, string: str, *span: int) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        if self._hopeless(string, span):
            return None
        return self.compiled().search(string, *span)

    def findall(self, string: str, *span: int) -> list[Any]:
        """``re.Pattern.findall``."""
        return self.compiled().findall(string, *span)

    def finditer(self, string: str, *span: int) -> Iterator[re.Match[str]]:
        """``re.Pattern.finditer``."""
        return self.compiled().finditer(string, *span)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """``re.Pattern.split``."""
        return self.compiled().split(string, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """``re.Pattern.sub``."""
        if self._hopeless(string, ()):
            return string
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        """``re.Pattern.subn``."""
        return self.compiled().subn(repl, string, count)


def lazy_exports(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``table``
    (name -> the submodule defining it) on first access and keeps it.

    A package re-exports this way so that importing one of its submodules (for
    a constant, say) does not load every other one before the first request.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib
        import sys

        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next look-up is a plain attribute
        return value

    return __getattr__
