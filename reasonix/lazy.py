"""Deferred work for module bodies on the start-up path (docs/SPEC.md, "How start-up
stays fast").

:func:`dataclass` is :func:`dataclasses.dataclass`, run on the class the first
time the class is used rather than when its module is imported. Python's
dataclasses compile the source of ``__init__``, ``__repr__``, ``__eq__`` (and
more) for every class at import: about a millisecond each here, and a run's
first request imports over a hundred such classes while it makes instances of
fewer than half. The class the first use leaves behind is the one
``dataclasses.dataclass`` makes, built by it, in place:

* the first instance: the class's ``__new__`` builds it (under a lock, bases
  first) before it makes the object, so ``type.__call__`` then finds the
  generated ``__init__``; a thread that arrives during a build waits for it
  (no instance ever meets a class without its ``__init__``);
* the first look at ``__dataclass_fields__`` (what ``dataclasses.fields``,
  ``is_dataclass``, ``asdict``, ``replace`` and a subclass's dataclass read).

``slots=True`` makes a new class, which cannot be done in place, so such a
class is built at once, as is a class with a ``__new__`` of its own.
:func:`field` records its arguments until the build, so the dataclasses module
(and ``inspect`` behind it) loads with the first build. ``tests/test_lazy.py``
and ``tests/test_plain_dataclasses.py`` hold every class to what the standard
library makes.

:class:`Pattern` defers ``re.compile`` the same way, and :func:`lazy_exports`
is a package ``__getattr__`` that imports a re-exported name on first access.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import re
    from typing import Any, TypeVar

    _T = TypeVar("_T")

__all__ = ["Pattern", "asdict", "build", "dataclass", "field", "lazy_exports", "replace"]

_LOCK = threading.RLock()  # one build at a time, whichever thread gets there first
_FIELDS = "__dataclass_fields__"


class _FieldSpec:
    """The arguments of a :func:`field` call, turned into a real field at build time."""

    __slots__ = ("kwargs",)

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs


class _Pending:
    """Stands in for ``__dataclass_fields__`` until the class is built."""

    __slots__ = ("options", "owner")

    def __init__(self, owner: type, options: dict[str, Any]) -> None:
        self.owner, self.options = owner, options

    def __get__(self, obj: object, cls: type | None = None) -> Any:
        build(self.owner)
        return self.owner.__dict__[_FIELDS]


def _pending(cls: type) -> _Pending | None:
    got = cls.__dict__.get(_FIELDS)
    return got if isinstance(got, _Pending) else None


def build(cls: type) -> type:
    """Run the deferred :func:`dataclasses.dataclass` on ``cls`` and its bases now
    (idempotent; a class that was never deferred is left as it is)."""
    with _LOCK:
        for base in reversed(cls.__mro__):  # bases first: their fields are inherited
            pending = _pending(base)
            if pending is None:
                continue
            import dataclasses

            type.__delattr__(base, _FIELDS)
            for name, value in list(base.__dict__.items()):
                if isinstance(value, _FieldSpec):
                    type.__setattr__(base, name, dataclasses.field(**value.kwargs))
            dataclasses.dataclass(base, **pending.options)
    return cls


def _new(cls: type, *args: object, **kwargs: object) -> Any:
    """The ``__new__`` of a deferred class: build it (once), then make the object as
    ``object.__new__`` does; ``type.__call__`` looks ``__init__`` up only after this
    returns, so it finds the generated one. It stays after the build: CPython keeps
    calling a deleted Python ``__new__``'s slot, which then refuses the arguments."""
    if type(cls.__dict__.get(_FIELDS)) is not dict:  # not built yet, or a plain subclass
        build(cls)
    return object.__new__(cls)


def _defer(cls: type, options: dict[str, Any]) -> type:
    if options.get("slots") or "__new__" in cls.__dict__:
        import dataclasses

        for name, value in list(cls.__dict__.items()):
            if isinstance(value, _FieldSpec):
                type.__setattr__(cls, name, dataclasses.field(**value.kwargs))
        made: type = dataclasses.dataclass(cls, **options)
        return made
    type.__setattr__(cls, "__new__", staticmethod(_new))
    type.__setattr__(cls, _FIELDS, _Pending(cls, options))
    return cls


def replace(obj: _T, /, **changes: Any) -> _T:
    """:func:`dataclasses.replace` (the dataclasses module is imported only now)."""
    import dataclasses

    return dataclasses.replace(obj, **changes)  # type: ignore[type-var]


def asdict(obj: Any) -> dict[str, Any]:
    """:func:`dataclasses.asdict` (the dataclasses module is imported only now)."""
    import dataclasses

    return dataclasses.asdict(obj)


if TYPE_CHECKING:
    from dataclasses import dataclass, field
else:

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """:func:`dataclasses.dataclass`, run on first use (see the module docstring)."""
        if cls is None:
            return lambda c: _defer(c, options)
        return _defer(cls, options)

    def field(**kwargs: Any) -> Any:
        """:func:`dataclasses.field`'s arguments, for a class made with :func:`dataclass`."""
        return _FieldSpec(kwargs)


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
