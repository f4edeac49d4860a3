"""``Protocol`` and ``runtime_checkable`` at run time, without importing :mod:`typing`.

Importing ``typing`` costs a clean interpreter 2.5–3 ms (its body builds a few
hundred objects), and a run's first request needs nothing from it: every
annotation is a string (``from __future__ import annotations``) and the type
checker reads ``typing`` itself. The interfaces of the first-request path are
written as::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import Protocol
    else:
        from reasonix.protocols import Protocol

so mypy checks them as real protocols, while at run time they are classes
that behave as ``typing.Protocol`` classes do in what this code base uses
(``tests/test_protocols.py`` holds the two to the same answers): a class that
names :class:`Protocol` among its bases is a protocol and cannot be
instantiated; a class that inherits a protocol without naming ``Protocol`` is
an ordinary class that keeps the protocol's methods; ``isinstance`` against a
protocol is structural when it is :func:`runtime_checkable` (every member
present, a method not set to None) and a ``TypeError`` when it is not.
"""

from __future__ import annotations

__all__ = ["Protocol", "runtime_checkable"]

# Names every class has or that typing's own machinery adds: never protocol members.
_NOT_MEMBERS = frozenset(
    {
        "__abstractmethods__", "__annotations__", "__dict__", "__doc__", "__init__",
        "__module__", "__new__", "__slots__", "__subclasshook__", "__weakref__",
        "__class_getitem__", "__qualname__", "__init_subclass__", "__parameters__",
        "__orig_bases__", "__protocol_attrs__", "__firstlineno__", "__static_attributes__",
        "__match_args__", "_is_protocol", "_is_runtime_protocol",
    }
)  # fmt: skip


def _members(cls: type) -> list[str]:
    """The protocol's attributes and methods, its protocol bases' included."""
    names: set[str] = set()
    for base in cls.__mro__[:-1]:  # not object
        if base.__name__ == "Protocol" or not base.__dict__.get("_is_protocol", False):
            continue
        # the class's own annotations; inspect.get_annotations would import inspect
        names.update(base.__dict__.get("__annotations__", {}))  # noqa: RUF063
        names.update(base.__dict__)
    return sorted(n for n in names if n not in _NOT_MEMBERS and not n.startswith("_abc_"))


class _ProtocolMeta(type):
    def __call__(cls, *args: object, **kwargs: object) -> object:
        if cls.__dict__.get("_is_protocol", False):
            raise TypeError("Protocols cannot be instantiated")
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, instance: object) -> bool:
        if not cls.__dict__.get("_is_protocol", False):
            return super().__instancecheck__(instance)
        if not cls.__dict__.get("_is_runtime_protocol", False):
            raise TypeError(
                "Instance and class checks can only be used with @runtime_checkable protocols"
            )
        if super().__instancecheck__(instance):
            return True
        return all(
            hasattr(instance, name)
            and (not callable(getattr(cls, name, None)) or getattr(instance, name) is not None)
            for name in _members(cls)
        )


class Protocol(metaclass=_ProtocolMeta):
    """The base of an interface: see the module docstring."""

    __slots__ = ()
    _is_protocol = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # A protocol names Protocol among its bases; inheriting one makes a plain class.
        cls._is_protocol = Protocol in cls.__bases__


def runtime_checkable(cls: type) -> type:
    """Allow ``isinstance`` against the protocol ``cls`` (a structural check)."""
    if not cls.__dict__.get("_is_protocol", False):
        raise TypeError(f"@runtime_checkable can be only applied to protocol classes, got {cls!r}")
    cls._is_runtime_protocol = True  # type: ignore[attr-defined]
    return cls
