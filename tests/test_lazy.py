"""reasonix.lazy: a regular expression compiled on first use, and lazy package exports."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonix.lazy import Pattern


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
