"""Deferred construction for module bodies on the start-up path (issue 20).

Python's :func:`dataclasses.dataclass` writes and compiles the source of
``__init__``, ``__repr__``, ``__eq__`` (and ``__setattr__``/``__hash__`` when
frozen) for every class the moment its module is imported: a few hundred
microseconds each, and a run imports close to two hundred of them while only
a fraction is ever instantiated. :func:`dataclass` here records the options
and leaves the class as it is; the real :func:`dataclasses.dataclass` runs on
that class, in place, the first time anything needs it:

* the first instance (a small stand-in ``__init__`` builds the class, then
  calls the real one);
* the first look at ``__dataclass_fields__``, which is what
  :func:`dataclasses.fields`, :func:`dataclasses.is_dataclass`,
  :func:`dataclasses.asdict` and :func:`dataclasses.replace` read (a
  class-level descriptor builds it), including a subclass's processing of
  its bases.

So every instance is a finished dataclass with the same ``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ordering and frozenness as before.
One option is not kept: ``slots=True`` makes a *new* class, which cannot be
done in place, so lazily built classes have a ``__dict__``.

:func:`field` takes the same arguments as :func:`dataclasses.field`, so the
dataclasses module (and the ``inspect`` module it imports) is not loaded
before the first class is built. :class:`Pattern` defers ``re.compile`` the
same way. Type checkers see the real :mod:`dataclasses` API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    import re
    from typing import Any, TypeVar

    _T = TypeVar("_T")

__all__ = ["Pattern", "asdict", "build", "dataclass", "field", "lazy_exports", "ready", "replace"]

_LOCK = threading.RLock()  # a class is built once, whichever thread gets there first
_FIELDS = "__dataclass_fields__"


class _FieldSpec:
    """The arguments of a :func:`field` call, turned into a real field at build time."""

    __slots__ = ("kwargs",)

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs


class _Pending:
    """Stands in for ``__dataclass_fields__`` until the class is built."""

    __slots__ = ("light", "options", "own_init", "owner", "tried")

    def __init__(self, owner: type, options: dict[str, Any], own_init: Any) -> None:
        self.owner, self.options, self.own_init = owner, options, own_init
        self.light: Any = None  # the LightInfo once the light methods are in
        self.tried = False  # the light build was attempted

    def __get__(self, obj: object, cls: type | None = None) -> Any:
        build(self.owner)
        return self.owner.__dict__[_FIELDS]


def _pending(cls: type) -> _Pending | None:
    got = cls.__dict__.get(_FIELDS)
    return got if isinstance(got, _Pending) else None


def ready(cls: type) -> None:
    """Make ``cls`` able to make instances: the light methods, else the real dataclass."""
    pending = _pending(cls)
    if pending is None or pending.tried:
        return
    with _LOCK:
        if pending.tried or _pending(cls) is not pending:
            return
        pending.tried = True
        from reasonix.lazy_light import light_build

        _restore_init(cls, pending)
        pending.light = light_build(cls, dict(pending.options), _FieldSpec, _light_of)
        if pending.light is None:
            build(cls)


def _light_of(base: type) -> Any:
    """A base's light info (built now if needed); None when it is a real dataclass."""
    ready(base)
    pending = _pending(base)
    return pending.light if pending is not None else None


def _restore_init(cls: type, pending: _Pending) -> None:
    if "__init__" in cls.__dict__:
        delattr(cls, "__init__")  # the stand-in
    if pending.own_init is not None:
        type.__setattr__(cls, "__init__", pending.own_init)


def build(cls: type) -> type:
    """Run the deferred :func:`dataclasses.dataclass` on ``cls`` now (idempotent)."""
    pending = _pending(cls)
    if pending is None:
        return cls
    with _LOCK:
        pending = _pending(cls)
        if pending is None:
            return cls
        import dataclasses

        for base in cls.__mro__[1:]:  # bases first: their fields are inherited
            build(base)
        if pending.light is not None:
            from reasonix.lazy_light import undo

            undo(cls, pending.light)
        pending.tried = True
        delattr(cls, _FIELDS)
        _restore_init(cls, pending)
        specs = [(k, v) for k, v in cls.__dict__.items() if isinstance(v, _FieldSpec)]
        for name, spec in specs:
            type.__setattr__(cls, name, dataclasses.field(**spec.kwargs))
        options = dict(pending.options)
        if options.get("order"):  # ordering needs the generated __eq__ too: all as usual
            dataclasses.dataclass(cls, **options)
        else:
            _build_with_shared_methods(cls, options)
    return cls


def replace(obj: _T, /, **changes: Any) -> _T:
    """:func:`dataclasses.replace`, without building the real dataclass for a light one."""
    pending = _pending(type(obj))
    light = pending.light if pending is not None else None
    if light is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for f in light.fields:
        if not f.init and f.name in changes:
            raise ValueError(f"field {f.name} is declared with init=False, it cannot be "
                             "specified with replace()")  # fmt: skip
    values = {f.name: getattr(obj, f.name) for f in light.fields if f.init}
    values.update(changes)
    return type(obj)(**values)


def asdict(obj: Any) -> dict[str, Any]:
    """:func:`dataclasses.asdict` (the dataclasses module is imported only now)."""
    import dataclasses

    return dataclasses.asdict(obj)


def _build_with_shared_methods(cls: type, options: dict[str, Any]) -> None:
    """The dataclass with ``__repr__``, ``__eq__`` and ``__hash__`` as closures, not compiled
    source: the same results and the same rules, at a fraction of the cost."""
    import dataclasses

    from reasonix.lazy_light import shared_methods

    own = dict(cls.__dict__)  # the body as written, before dataclasses adds to it
    plain = {**options, "repr": False, "eq": False, "unsafe_hash": False}
    dataclasses.dataclass(cls, **plain)
    shared = shared_methods(own, options, dataclasses.fields(cls))  # regular fields only
    if shared is None:
        raise TypeError(f"Cannot overwrite attribute __hash__ in class {cls.__name__}")
    for name, value in shared:
        _set(cls, name, value)


def _set(cls: type, name: str, value: Any) -> None:
    if value is not None:
        value.__qualname__ = f"{cls.__qualname__}.{name}"
    type.__setattr__(cls, name, value)


def _defer(cls: type, options: dict[str, Any]) -> type:
    options = {k: v for k, v in options.items() if k != "slots"}  # see the module docstring
    own_init = cls.__dict__.get("__init__")  # a hand-written one wins, as with dataclasses

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        ready(cls)
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", __init__)
    type.__setattr__(cls, _FIELDS, _Pending(cls, options, own_init))
    return cls


if TYPE_CHECKING:
    from dataclasses import dataclass, field
else:

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """:func:`dataclasses.dataclass`, built on first use (see the module docstring)."""
        if cls is None:
            return lambda c: _defer(c, options)
        return _defer(cls, options)

    def field(**kwargs: Any) -> Any:
        """:func:`dataclasses.field` for a class made with :func:`dataclass` above."""
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
