"""reasonix.lazy: deferred dataclasses behave exactly like eager ones once used."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from reasonix.lazy import Pattern, build, dataclass, field

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@dataclass
class Base:
    a: int
    b: str = "b"


@dataclass(slots=True)
class Child(Base):
    c: float = 1.5


class Plain(Base):
    """A plain subclass: it inherits the stand-in __init__."""


@dataclass(init=False)
class OwnInit:
    value: int

    def __init__(self, raw: str) -> None:
        self.value = int(raw)


@dataclass(order=True)
class Ordered:
    rank: int
    name: str = field(default="", compare=False)


def test_instances_are_full_dataclasses() -> None:
    p = Point(1, tags=["t"])
    assert p == Point(1, 0, ["t"]) and p != Point(2)
    assert repr(p) == "Point(x=1, y=0, tags=['t'])"
    assert hash(Point(1, 2, ())) == hash(Point(1, 2, ()))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        hash(Base(1))  # eq without frozen: unhashable, as with dataclasses
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    assert Point(1).tags is not Point(1).tags  # the factory runs per instance
    assert dataclasses.asdict(p) == {"x": 1, "y": 0, "tags": ["t"]}
    assert dataclasses.replace(p, y=5).y == 5


def test_missing_arguments_fail_as_with_dataclasses() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)  # type: ignore[call-arg]


def test_inheritance_builds_the_bases_first() -> None:
    c = Child(1, "x", 2.5)
    assert (c.a, c.b, c.c) == (1, "x", 2.5)
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b", "c"]
    assert Plain(3).a == 3 and Plain(3) == Plain(3)


def test_fields_of_an_unused_class_build_it() -> None:
    @dataclass
    class Fresh:
        n: int = 1

    assert dataclasses.is_dataclass(Fresh)
    assert [f.name for f in dataclasses.fields(Fresh)] == ["n"]
    assert Fresh() == Fresh(1)


def test_an_eager_subclass_of_a_lazy_base() -> None:
    @dataclass
    class LazyBase:
        a: int

    @dataclasses.dataclass
    class Eager(LazyBase):
        b: int = 2

    assert Eager(1) == Eager(1, 2) and Eager(1).a == 1


def test_a_hand_written_init_is_kept() -> None:
    assert OwnInit("7").value == 7
    assert repr(OwnInit("7")) == "OwnInit(value=7)"


def test_order_and_compare_options_hold() -> None:
    assert Ordered(1, "z") < Ordered(2, "a")
    assert Ordered(1, "a") == Ordered(1, "b")


def test_instances_pickle() -> None:
    p = Point(4, 5)
    assert pickle.loads(pickle.dumps(p)) == p


def test_build_is_idempotent_and_thread_safe() -> None:
    @dataclass
    class Racy:
        n: int = 0

    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(Racy(1))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [Racy(1)] * 8
    assert build(Racy) is Racy


def test_nothing_is_built_or_imported_until_used() -> None:
    code = (
        "import sys\n"
        "from reasonix.lazy import dataclass, field\n"
        "@dataclass(frozen=True)\n"
        "class A:\n"
        "    x: int = field(default=1)\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
        "A()\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:2] == ["False _Pending", "True dict"]


def test_pattern_compiles_on_first_use() -> None:
    pat = Pattern(r"(?P<word>[a-z]+)(\d)", 0)
    assert pat._compiled is None
    m = pat.search("xx abc1")
    assert m is not None and m.group("word") == "abc"
    assert pat.sub("-", "ab1 cd2") == "- -"
    assert pat.compiled() is pat.compiled()
