"""reasonix.protocols: the run-time Protocol gives the answers typing.Protocol gives."""

from __future__ import annotations

import typing
from types import ModuleType

import pytest

from reasonix import protocols


def _kit(mod: ModuleType | type) -> dict[str, type]:
    """The same protocol shapes, built on ``typing`` or on ``reasonix.protocols``."""
    Protocol = mod.Protocol  # type: ignore[union-attr]
    checkable = mod.runtime_checkable  # type: ignore[union-attr]

    @checkable
    class Tool(Protocol):  # type: ignore[misc, valid-type]
        name: str

        def execute(self, args: str) -> str: ...

    @checkable
    class Named(Protocol):  # type: ignore[misc, valid-type]
        name: str

    @checkable
    class Both(Tool, Protocol):  # type: ignore[misc, valid-type]
        def close(self) -> None: ...

    class Plain(Protocol):  # type: ignore[misc, valid-type]
        def run(self) -> None: ...

    class Impl(Tool):  # explicit: an ordinary class that keeps the methods
        def __init__(self) -> None:
            self.name = "impl"

    return {"Tool": Tool, "Named": Named, "Both": Both, "Plain": Plain, "Impl": Impl}


class _Shaped:
    name = "x"

    def execute(self, args: str) -> str:
        return args


class _Closable(_Shaped):
    def close(self) -> None:
        pass


class _Blocked(_Shaped):
    execute = None  # type: ignore[assignment]  # a method set to None is absent


class _Nameless:
    def execute(self, args: str) -> str:
        return args


SUBJECTS = [_Shaped(), _Closable(), _Blocked(), _Nameless(), object(), 3, "s"]


def _answers(kit: dict[str, type]) -> list[object]:
    out: list[object] = []
    for proto in ("Tool", "Named", "Both", "Plain"):
        for subject in SUBJECTS:
            try:
                out.append(isinstance(subject, kit[proto]))
            except TypeError:
                out.append("TypeError")
        try:
            kit[proto]()
            out.append("made")
        except TypeError:
            out.append("TypeError")
    impl = kit["Impl"]()
    out += [impl.name, isinstance(impl, kit["Tool"]), isinstance(impl, kit["Impl"])]
    out += [isinstance(_Shaped(), kit["Impl"]), hasattr(impl, "execute")]
    return out


def test_the_answers_are_typings() -> None:
    assert _answers(_kit(protocols)) == _answers(_kit(typing))  # type: ignore[arg-type]


def test_only_a_protocol_can_be_made_runtime_checkable() -> None:
    class Ordinary:
        pass

    with pytest.raises(TypeError):
        protocols.runtime_checkable(Ordinary)
