"""reasonix.lazy: dataclasses built on first use (by dataclasses itself), a regular
expression compiled on first use, and lazy package exports."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonix.lazy import Pattern, dataclass, field

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Point:
    """A frozen class with a default factory."""

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
    """A plain subclass of a deferred dataclass."""


def test_nothing_is_built_or_imported_until_used() -> None:
    code = (
        "from __future__ import annotations\n"
        "import sys\n"
        "from reasonix.lazy import dataclass, field\n"
        "@dataclass(frozen=True)\n"
        "class A:\n"
        "    x: int = field(default=1)\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
        "print(A(), A.__init__.__qualname__)\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:3] == ["False _Pending", "A(x=1) A.__init__", "True dict"]


def _twin(deferred: bool, **options: Any) -> type:
    """The same class body made by reasonix.lazy or by dataclasses."""
    deco = dataclass if deferred else dataclasses.dataclass
    fld = field if deferred else dataclasses.field

    @deco(**options)
    class Twin:
        a: float
        b: list[int] = fld(default_factory=list, compare=False)
        c: str = fld(default="c", repr=False)
        d: float = fld(default=0.5, hash=False)

    return Twin


@pytest.mark.parametrize(
    "options",
    [{}, {"frozen": True}, {"eq": False}, {"unsafe_hash": True}, {"repr": False},
     {"frozen": True, "eq": False}, {"order": True}, {"frozen": True, "order": True},
     {"kw_only": True}],
)  # fmt: skip
def test_a_deferred_class_is_the_class_dataclasses_makes(options: dict[str, Any]) -> None:
    ours, real = _twin(True, **options), _twin(False, **options)
    nan = float("nan")
    make = (lambda cls, a: cls(a=a)) if options.get("kw_only") else (lambda cls, a: cls(a))
    for a1, a2 in ((nan, nan), (1.0, 1.0), (1.0, 2.0)):
        o1, o2, r1, r2 = make(ours, a1), make(ours, a2), make(real, a1), make(real, a2)
        if options.get("repr", True):
            assert repr(o1) == repr(r1)
        assert (o1 == o2) == (r1 == r2)
        if options.get("order"):
            assert (o1 < o2) == (r1 < r2)
    assert (ours.__hash__ is None) == (real.__hash__ is None)
    if options.get("eq", True) and (options.get("frozen") or options.get("unsafe_hash")):
        assert hash(make(ours, 1.0)) == hash(make(real, 1.0))
    assert repr(ours.__dataclass_params__) == repr(real.__dataclass_params__)
    assert [(f.name, f.compare, f.repr, f.hash) for f in dataclasses.fields(ours)] == [
        (f.name, f.compare, f.repr, f.hash) for f in dataclasses.fields(real)
    ]
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            make(ours, 1.0).a = 2.0  # type: ignore[misc]


def test_inheritance_slots_pickle_and_plain_subclasses() -> None:
    child = Child(1, "x")
    assert repr(child) == "Child(a=1, b='x', c=1.5)"
    assert "__slots__" in vars(Child)  # built at once (its base has a __dict__, as usual)
    assert Plain(2).b == "b" and isinstance(Plain(2), Base)
    point = Point(1, tags=["t"])
    assert pickle.loads(pickle.dumps(point)) == point
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        Point()  # type: ignore[call-arg]


def _construct_at_once(cls: type, count: int) -> tuple[list[Any], list[BaseException]]:
    """``count`` threads released together, each making ``cls(n)``."""
    start, made, errors = threading.Barrier(count), [], []

    def construct(n: int) -> None:
        start.wait()
        try:
            made.append(cls(n))
        except TypeError as exc:  # what the race raised: "takes no arguments"
            errors.append(exc)

    threads = [threading.Thread(target=construct, args=(n,)) for n in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return made, errors


def test_threads_that_meet_an_unbuilt_class_all_get_instances() -> None:
    """The old deferral removed the stand-in __init__ before the real one was in: a thread
    constructing in that window got object.__init__ ("takes no arguments")."""
    for _ in range(30):

        @dataclass
        class Fresh:
            a: int
            b: str = "b"

        made, errors = _construct_at_once(Fresh, 8)
        assert errors == [] and sorted(m.a for m in made) == list(range(8))


def test_pattern_compiles_on_first_use() -> None:
    pat = Pattern(r"(?P<word>[a-z]+)(\d)", 0)
    assert pat._compiled is None
    m = pat.search("xx abc1")
    assert m is not None and m.group("word") == "abc"
    assert pat.sub("-", "ab1 cd2") == "- -"
    assert pat.compiled() is pat.compiled()


def test_lazy_exports_import_a_name_on_first_access_and_keep_it() -> None:
    import sys
    import types

    from reasonix.lazy import lazy_exports

    package = types.ModuleType("_lazy_exports_probe")
    setattr(package, "__getattr__", lazy_exports("_lazy_exports_probe", {"dedent": "textwrap"}))  # noqa: B010
    sys.modules["_lazy_exports_probe"] = package
    try:
        import textwrap

        assert package.dedent is textwrap.dedent  # type: ignore[attr-defined]
        assert "dedent" in vars(package)  # kept: the next look-up is a plain attribute
        with pytest.raises(AttributeError, match="no attribute 'indent'"):
            _ = package.indent  # type: ignore[attr-defined]
    finally:
        del sys.modules["_lazy_exports_probe"]


@given(st.text(alphabet="ab={}, .\n"))
def test_a_pattern_with_needs_answers_as_the_compiled_one(text: str) -> None:
    import re

    from reasonix.lazy import Pattern

    for regex, needs in ((r"[ab]+=", ("=",)), (r"\{[^{}]*(?:,|\.\.)[^{}]*\}", ("{",))):
        lazy, real = Pattern(regex, needs=needs), re.compile(regex)
        for method in ("match", "fullmatch", "search"):
            got, want = getattr(lazy, method)(text), getattr(real, method)(text)
            assert (got and got.span()) == (want and want.span())
        assert lazy.sub("X", text) == real.sub("X", text)


def test_a_pattern_with_needs_compiles_only_for_a_string_that_holds_one() -> None:
    from reasonix.lazy import Pattern

    p = Pattern(r"[a-z]+=", needs=("=",))
    assert p.match("plain words") is None and p.sub("-", "plain") == "plain"
    assert p._compiled is None
    assert p.match("x=1") is not None and p._compiled is not None
