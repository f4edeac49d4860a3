"""reasonix.lazy: deferred dataclasses behave exactly like eager ones once used."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
        "from __future__ import annotations\n"
        "import sys\n"
        "from reasonix.lazy import dataclass, field\n"
        "@dataclass(frozen=True)\n"
        "class A:\n"
        "    x: int = field(default=1)\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
        "A()\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
        "import dataclasses; dataclasses.fields(A)\n"
        "print('dataclasses' in sys.modules, type(A.__dict__['__dataclass_fields__']).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    # an instance needs only the light build; asking for the fields makes the real one
    assert out.stdout.split("\n")[:3] == ["False _Pending", "False _Pending", "True dict"]


def test_pattern_compiles_on_first_use() -> None:
    pat = Pattern(r"(?P<word>[a-z]+)(\d)", 0)
    assert pat._compiled is None
    m = pat.search("xx abc1")
    assert m is not None and m.group("word") == "abc"
    assert pat.sub("-", "ab1 cd2") == "- -"
    assert pat.compiled() is pat.compiled()


def _twins(**options: object) -> tuple[type, type]:
    """The same class body made by dataclasses and by reasonix.lazy."""

    def body(deco: Any) -> type:
        @deco(**options)
        class Twin:
            a: int
            b: list[int] = dataclasses.field(default_factory=list, compare=False)
            c: str = dataclasses.field(default="c", repr=False)
            d: float = dataclasses.field(default=0.5, hash=False)

        return Twin

    return body(dataclasses.dataclass), body(dataclass)


@pytest.mark.parametrize(
    "options",
    [{}, {"frozen": True}, {"eq": False}, {"unsafe_hash": True}, {"repr": False},
     {"frozen": True, "eq": False}, {"order": True}, {"frozen": True, "order": True}],
)  # fmt: skip
def test_the_shared_methods_match_the_generated_ones(options: dict[str, object]) -> None:
    real, ours = _twins(**options)
    r1, r2 = real(1, [2], "x", 1.5), real(1, [3], "x", 1.5)
    o1, o2 = ours(1, [2], "x", 1.5), ours(1, [3], "x", 1.5)
    assert (r1 == r2) == (o1 == o2)
    assert (r1 == real(2)) == (o1 == ours(2))
    if options.get("repr", True):
        assert repr(r1) == repr(o1)
    else:
        assert repr(o1).startswith("<") and repr(r1).startswith("<")
    assert (real.__hash__ is None) == (ours.__hash__ is None)
    if real.__hash__ is not None and "__hash__" in real.__dict__:
        # the hash covers a and c only (b is not compared, d says hash=False), as dataclasses'
        assert hash(o1) == hash(r1) == hash((1, "x"))
        assert hash(ours(1, [], "x", 9.0)) == hash(o1)
        assert hash(ours(1, [2], "y", 1.5)) == hash(real(1, [2], "y", 1.5)) != hash(o1)
    assert (o1 == object()) is False


def test_methods_written_in_the_class_win() -> None:
    @dataclass(frozen=True)
    class Custom:
        a: int

        def __repr__(self) -> str:
            return "custom"

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

    assert repr(Custom(1)) == "custom" and Custom(1) == Custom(2) and hash(Custom(1)) == 7


def test_a_recursive_repr_is_cut_short() -> None:
    @dataclass
    class Node:
        child: Any = None

    n = Node()
    n.child = n
    assert repr(n) == "test_a_recursive_repr_is_cut_short.<locals>.Node(child=...)"


# -- the light build (no dataclasses module until fields are asked for) ---------------


def _pair(body: str, deco_args: str = "") -> tuple[type, type]:
    """The same class source made by dataclasses and by reasonix.lazy."""
    made = []
    for deco in ("dataclasses.dataclass", "lazy_dataclass"):
        ns: dict[str, Any] = {}
        code = (
            "from __future__ import annotations\n"
            "import dataclasses\n"
            "from typing import ClassVar\n"
            "from reasonix.lazy import dataclass as lazy_dataclass, field as lazy_field\n"
            f"@{deco}({deco_args})\n"
            "class Shape:\n" + body
        )
        if deco == "dataclasses.dataclass":
            code = code.replace("lazy_field(", "dataclasses.field(")
        exec(compile(code, "<shape>", "exec"), ns)
        made.append(ns["Shape"])
    return made[0], made[1]


_BODY = (
    "    a: int\n"
    "    b: str = 'b'\n"
    "    c: list[int] = lazy_field(default_factory=list)\n"
    "    d: int = lazy_field(default=4, repr=False, compare=False)\n"
    "    e: int = lazy_field(default=0, init=False)\n"
    "    f: list[int] = lazy_field(default_factory=lambda: [1], init=False)\n"
)


def _same_call(real: type, ours: type, *args: Any, **kwargs: Any) -> None:
    try:
        want: Any = real(*args, **kwargs)
    except TypeError as err:
        with pytest.raises(TypeError) as got:
            ours(*args, **kwargs)
        assert str(got.value) == str(err) and type(got.value) is type(err)
        return
    have = ours(*args, **kwargs)
    if not repr(want).startswith("<"):
        assert repr(have) == repr(want)
    assert vars(have) == vars(want)
    assert (have == ours(*args, **kwargs)) == (want == real(*args, **kwargs))


@pytest.mark.parametrize(
    "deco_args", ["", "frozen=True", "eq=False", "repr=False", "unsafe_hash=True"]
)
def test_light_instances_match_real_ones(deco_args: str) -> None:
    real, ours = _pair(_BODY, deco_args)
    for args, kwargs in [
        ((1,), {}), ((1, "x"), {}), ((1, "x", [3], 5), {}), ((), {"a": 2, "d": 1}),
        ((), {}), ((1, "x", [3], 5, 6), {}), ((1,), {"a": 1}), ((1,), {"zz": 1}),
    ]:  # fmt: skip
        _same_call(real, ours, *args, **kwargs)
    assert ours.__match_args__ == real.__match_args__
    assert ours.b == "b" and ours.d == 4
    assert ("c" in ours.__dict__) == ("c" in real.__dict__)
    assert (ours.__hash__ is None) == (real.__hash__ is None)


@pytest.mark.parametrize(
    "body",
    [
        "    a: int\n    b: int\n",
        "    a: int = 1\n",
        "    e: int = lazy_field(default=0, init=False)\n",
    ],
)
def test_a_wrong_call_fails_with_the_words_of_dataclasses(body: str) -> None:
    real, ours = _pair(body)
    for args, kwargs in [((1, 2, 3), {}), ((1,), {"zz": 1}), ((), {})]:
        _same_call(real, ours, *args, **kwargs)


def test_light_build_imports_no_dataclasses_module() -> None:
    code = (
        "from __future__ import annotations\n"
        "import sys\n"
        "from reasonix.lazy import dataclass, field\n"
        "@dataclass(frozen=True)\n"
        "class A:\n"
        "    x: int = 1\n"
        "    y: list = field(default_factory=list)\n"
        "@dataclass\n"
        "class B(A):\n"
        "    z: str = 'z'\n"
        "b = B(2, [1], 'q')\n"
        "same = hash(A(1, ())) == hash(A(1, ()))\n"
        "print('dataclasses' in sys.modules, repr(b), b == B(2, [1], 'q'), same)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    # B is not frozen over a frozen A: dataclasses refuses, so the real build runs (and raises)
    assert "TypeError" in out.stderr and "cannot inherit non-frozen" in out.stderr
    ok = code.replace("@dataclass\nclass B", "@dataclass(frozen=True)\nclass B")
    out = subprocess.run(
        [sys.executable, "-c", ok], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False B(x=2, y=[1], z='q') True True"


def test_frozen_light_instances_refuse_assignment() -> None:
    _real, ours = _pair(_BODY, "frozen=True")
    obj = ours(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        obj.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'a'"):
        del obj.a


def test_post_init_runs_and_a_light_class_upgrades_on_fields() -> None:
    @dataclass
    class WithPost:
        n: int
        doubled: int = field(default=0, init=False)

        def __post_init__(self) -> None:
            self.doubled = self.n * 2

    first = WithPost(3)
    assert first.doubled == 6
    names = [f.name for f in dataclasses.fields(WithPost)]  # the real build now
    assert names == ["n", "doubled"]
    assert WithPost(3) == first
    assert repr(first).endswith(".<locals>.WithPost(n=3, doubled=6)")


def test_replace_keeps_light_classes_light() -> None:
    from reasonix.lazy import _pending, replace

    @dataclass(frozen=True)
    class Ctx:
        a: int
        tags: list[str] = field(default_factory=list)

    c = Ctx(1, ["x"])
    d = replace(c, a=2)
    assert d == Ctx(2, ["x"]) and d.tags is c.tags
    pending = _pending(Ctx)
    assert pending is not None and pending.light is not None
    assert dataclasses.replace(c, a=2) == d


def test_every_deferred_class_in_reasonix_is_a_valid_dataclass() -> None:
    """The light build checks less than dataclasses do: run the real build on each one."""
    import importlib
    import inspect
    import pkgutil

    import reasonix
    from reasonix.lazy import _FieldSpec, _Pending

    checked = 0
    for info in pkgutil.walk_packages(reasonix.__path__, "reasonix."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in list(vars(module).values()):
            if isinstance(value, type) and isinstance(
                value.__dict__.get("__dataclass_fields__"), _Pending
            ):
                names = [f.name for f in dataclasses.fields(value)]
                # built in place: the stand-in is gone and every field() became a real Field
                assert type(value.__dict__["__dataclass_fields__"]) is dict, value
                assert not any(isinstance(v, _FieldSpec) for v in vars(value).values()), value
                # and every annotated name of the body is a field (ClassVars excepted)
                own = inspect.get_annotations(value)  # the body's own, not its bases'
                wanted = [n for n, t in own.items() if "ClassVar" not in str(t)]
                assert set(wanted) <= set(names), value
                checked += 1
    assert checked > 100


@dataclass
class WithClassVar:
    """A ClassVar is no field, in the light build as in dataclasses."""

    LIMIT: ClassVar[int] = 3
    n: int = 1


def test_a_class_var_is_no_field() -> None:
    assert repr(WithClassVar()) == "WithClassVar(n=1)"
    assert WithClassVar.__match_args__ == ("n",)
    assert [f.name for f in dataclasses.fields(WithClassVar)] == ["n"]


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
