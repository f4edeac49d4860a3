"""The light build of a deferred dataclass: instance methods without the dataclasses module.

:mod:`reasonix.lazy` defers a class's dataclass processing to its first use.
For the first *instance* only ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__match_args__`` and (frozen) ``__setattr__``/``__delattr__``
are needed. This module makes them as closures over the class's field list,
read from its annotations the way :mod:`dataclasses` reads them, so a run's
first request does not import :mod:`dataclasses` (and the ``inspect``, ``ast``,
``dis`` and ``tokenize`` modules it pulls in, about a tenth of the start-up).

Only plain shapes are built here; anything else (``order``, ``kw_only``,
``InitVar``, ``KW_ONLY``, a real :class:`dataclasses.Field`, a mutable or
misplaced default, a base built by :mod:`dataclasses`) returns None and the
caller runs the real :func:`dataclasses.dataclass` instead. The first look at
``__dataclass_fields__`` (``fields``, ``asdict``, ``replace``, ``is_dataclass``)
replaces the light methods with the real ones, which behave the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "LightField",
    "LightInfo",
    "eq_fn",
    "hash_fn",
    "light_build",
    "repr_fn",
    "shared_methods",
    "undo",
]

_LIGHT_OPTIONS = frozenset({"frozen", "eq", "repr", "init", "unsafe_hash", "slots"})
_FIELD_KEYS = frozenset(
    {"default", "default_factory", "init", "repr", "compare", "hash", "metadata"}
)
_NO_DEFAULT = object()
_NO_HASH = object()
_CLASSVAR = ("ClassVar", "typing.ClassVar", "t.ClassVar")


class LightField:
    """One field as the light methods need it (name, default, flags)."""

    __slots__ = ("compare", "default", "factory", "hash", "init", "name", "repr")

    def __init__(self, name: str, default: Any, factory: Any, flags: dict[str, Any]) -> None:
        self.name, self.default, self.factory = name, default, factory
        self.init: bool = flags.get("init", True)
        self.repr: bool = flags.get("repr", True)
        self.compare: bool = flags.get("compare", True)
        self.hash: bool | None = flags.get("hash")

    @property
    def required(self) -> bool:
        """True when the field has neither a default nor a factory."""
        return self.default is _NO_DEFAULT and self.factory is None


def light_fields(cls: type, spec_type: type, light_of: Callable[[type], Any]) -> Any:
    """The class's fields (bases first), or None when the shape is not a plain one."""
    fields: dict[str, LightField] = {}
    for base in reversed(cls.__mro__[1:-1]):
        if "__dataclass_fields__" not in base.__dict__:
            continue
        info = light_of(base)
        if info is None:
            return None
        fields.update((f.name, f) for f in info.fields)
    own = cls.__dict__
    for name, ann in own.get("__annotations__", {}).items():
        if not isinstance(ann, str):
            return None
        text = ann.strip()
        if text.startswith(_CLASSVAR):
            continue
        if "InitVar" in text or "KW_ONLY" in text:
            return None
        value = own.get(name, _NO_DEFAULT)
        if isinstance(value, spec_type):
            kwargs: dict[str, Any] = value.kwargs  # type: ignore[attr-defined]
            if not kwargs.keys() <= _FIELD_KEYS or (
                "default" in kwargs and "default_factory" in kwargs
            ):
                return None
            fields[name] = LightField(
                name, kwargs.get("default", _NO_DEFAULT), kwargs.get("default_factory"), kwargs
            )
            continue
        if type(value).__name__ == "Field" or isinstance(value, (list, dict, set)):
            return None  # a real dataclasses.Field, or the mutable default dataclasses refuses
        fields[name] = LightField(name, value, None, {})
    seen_default = False
    for f in fields.values():
        if not f.init:
            continue
        if f.required and seen_default:
            return None  # dataclasses' "non-default argument follows default argument"
        seen_default = seen_default or not f.required
    return list(fields.values())


class LightInfo:
    """What a light build installed, so the real build can take it back."""

    __slots__ = ("fields", "frozen", "installed", "originals")

    def __init__(self, fields: list[LightField], frozen: bool) -> None:
        self.fields, self.frozen = fields, frozen
        self.installed: list[str] = []
        self.originals: dict[str, Any] = {}


def light_build(
    cls: type, options: dict[str, Any], spec_type: type, light_of: Callable[[type], Any]
) -> LightInfo | None:
    """Install the light methods on ``cls``; None when its shape needs the real build."""
    if not options.keys() <= _LIGHT_OPTIONS:
        return None
    fields = light_fields(cls, spec_type, light_of)
    if fields is None:
        return None
    frozen = bool(options.get("frozen", False))
    for base in cls.__mro__[1:-1]:
        if "__dataclass_fields__" in base.__dict__ and light_of(base).frozen != frozen:
            return None  # dataclasses refuses to mix frozen and non-frozen
    own = cls.__dict__
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        return None
    info = LightInfo(fields, frozen)
    names = {f.name for f in fields}
    for name, value in list(own.items()):  # class attributes as dataclasses leaves them
        if isinstance(value, spec_type) and name in names:
            info.originals[name] = value
            default = value.kwargs.get("default", _NO_DEFAULT)  # type: ignore[attr-defined]
            if default is _NO_DEFAULT:
                type.__delattr__(cls, name)
            else:
                type.__setattr__(cls, name, default)
    shared = shared_methods(own, options, fields)
    if shared is None:  # dataclasses raises here: let it
        undo(cls, info)
        return None
    match_args = "__match_args__" not in own
    if options.get("init", True) and "__init__" not in own:  # a hand-written one stays
        _install(cls, info, "__init__", _init_fn(cls, fields, frozen))
    for name, value in shared:
        _install(cls, info, name, value)
    if match_args:
        _install(cls, info, "__match_args__", tuple(f.name for f in fields if f.init))
    if frozen:
        _install(cls, info, "__setattr__", _frozen_fn(cls, names, "assign to"))
        _install(cls, info, "__delattr__", _frozen_fn(cls, names, "delete"))
    return info


def shared_methods(
    own: Mapping[str, Any], options: Mapping[str, Any], fields: Sequence[Any]
) -> list[tuple[str, Any]] | None:
    """The ``__repr__``, ``__eq__`` and ``__hash__`` dataclasses would add, as closures.

    ``own`` is the class body as written (a method there wins), ``fields``
    anything with ``name``, ``repr``, ``compare`` and ``hash``; the hash follows
    dataclasses' table. None where dataclasses refuses (``unsafe_hash`` over a
    hand-written ``__hash__``).
    """
    class_hash = own.get("__hash__", _NO_HASH)
    explicit_hash = not (class_hash is _NO_HASH or (class_hash is None and "__eq__" in own))
    eq = options.get("eq", True)
    out: list[tuple[str, Any]] = []
    if options.get("repr", True) and "__repr__" not in own:
        out.append(("__repr__", repr_fn(tuple(f.name for f in fields if f.repr))))
    if eq and "__eq__" not in own:
        out.append(("__eq__", eq_fn(tuple(f.name for f in fields if f.compare))))
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    if options.get("unsafe_hash", False):
        if explicit_hash:
            return None
        out.append(("__hash__", hash_fn(hashed)))
    elif eq and not explicit_hash:
        out.append(("__hash__", hash_fn(hashed) if options.get("frozen", False) else None))
    return out


def _install(cls: type, info: LightInfo, name: str, value: Any) -> None:
    if callable(value):
        value.__qualname__ = f"{cls.__qualname__}.{name}"
    type.__setattr__(cls, name, value)
    info.installed.append(name)


def undo(cls: type, info: LightInfo) -> None:
    """Take back what :func:`light_build` installed (before the real build)."""
    for name in info.installed:
        if name in cls.__dict__:
            type.__delattr__(cls, name)
    info.installed.clear()
    for name, value in info.originals.items():
        type.__setattr__(cls, name, value)


def _wrong_call(where: str, names: tuple[str, ...], required: int) -> Any:
    """A do-nothing function with the signature of the light ``__init__``: called with the
    arguments the light one refused, Python itself raises the TypeError dataclasses' would
    (same words, same order of checks). Compiled only on that error path."""
    me = "__dataclass_self__" if "self" in names else "self"  # as dataclasses names it
    params = ", ".join([me, *names[:required], *(f"{n}=None" for n in names[required:])])
    ns: dict[str, Any] = {}
    exec(f"def __init__({params}):\n    pass\n", ns)  # names are identifiers, values are None
    stub = ns["__init__"]
    stub.__qualname__ = where
    return stub


def _init_fn(cls: type, fields: list[LightField], frozen: bool) -> Any:
    params = [f for f in fields if f.init]
    names = tuple(f.name for f in params)
    defaults = tuple((f.default, f.factory) for f in params)
    later = tuple((f.name, f.factory) for f in fields if not f.init and f.factory is not None)
    post_init = hasattr(cls, "__post_init__")
    put = object.__setattr__ if frozen else setattr
    count = len(names)
    where = f"{cls.__qualname__}.__init__"
    # fields without a default come first (light_build refuses anything else)
    required = sum(1 for default, factory in defaults if default is _NO_DEFAULT and factory is None)

    def refuse(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _wrong_call(where, names, required)(self, *args, **kwargs)
        raise TypeError(f"{where}() got arguments it cannot take")  # not reached

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = len(args)
        if given > count:
            refuse(self, args, kwargs)
        taken = 0
        for i in range(count):
            name = names[i]
            if i < given:
                if kwargs and name in kwargs:
                    refuse(self, args, kwargs)
                value = args[i]
            elif name in kwargs:
                value = kwargs[name]
                taken += 1
            else:
                default, factory = defaults[i]
                if factory is not None:
                    value = factory()
                elif default is _NO_DEFAULT:
                    refuse(self, args, kwargs)
                else:
                    value = default
            put(self, name, value)
        if len(kwargs) > taken:
            refuse(self, args, kwargs)
        for name, factory in later:
            put(self, name, factory())
        if post_init:
            self.__post_init__()

    return __init__


def _frozen_fn(cls: type, names: set[str], verb: str) -> Any:
    owner: Any = cls

    def frozen(self: Any, name: str, *value: Any) -> None:
        if type(self) is cls or name in names:
            import dataclasses  # only to raise the error dataclasses' own classes raise

            raise dataclasses.FrozenInstanceError(f"cannot {verb} field {name!r}")
        parent: Any = super(owner, self)
        if value:
            parent.__setattr__(name, *value)
        else:
            parent.__delattr__(name)

    return frozen


def repr_fn(names: tuple[str, ...]) -> Any:
    """``__repr__`` as dataclasses writes it, recursion guard included."""
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), threading.get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            body = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({body})"

    return __repr__


def eq_fn(names: tuple[str, ...]) -> Any:
    """``__eq__`` as dataclasses writes it: same class, then the compared fields in order."""

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            mine = tuple(getattr(self, n) for n in names)
            return mine == tuple(getattr(other, n) for n in names)
        return NotImplemented

    return __eq__


def hash_fn(names: tuple[str, ...]) -> Any:
    """``__hash__`` over the hashed fields, as dataclasses writes it."""

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return __hash__
