"""Checks on the start-up path that replaced a regular expression: each answers as its pattern.

These run on every start (the built-in skills' frontmatter and names, a bash
command's interpreter), where compiling the pattern cost more than the check.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from reasonix.agent.subagent.skills import valid_name
from reasonix.command.frontmatter import key_value
from reasonix.permission.bash.classify import _interpreter

_TEXT = st.text(alphabet=st.sampled_from("aZ9_-.: \t\n\r\u00a0\u2003é#|>") | st.characters())


@given(_TEXT)
@example("name: x")
@example("a :b\n")
@example("a:b\nc")
@example("1a: b")
@example("a b: c")
@example("a\u2003: b")
def test_a_frontmatter_line_is_read_as_the_pattern_reads_it(line: str) -> None:
    m = re.match(r"^([A-Za-z][A-Za-z0-9_-]*)\s*:(.*)$", line)
    assert key_value(line) == (m.groups() if m else None)


@given(_TEXT)
@example("review")
@example("a.b-c_d")
@example("x\n")
@example("x\n\n")
@example("-x")
def test_a_skill_name_is_valid_as_the_pattern_says(name: str) -> None:
    assert valid_name(name) == bool(re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", name))


_NAMES = ("python", "pypy", "ruby", "perl", "php", "lua", "luajit", "node", "nodejs", "julia")


@given(st.sampled_from([*_NAMES, "bash", "py", "lu", ""]), st.text(alphabet="0123456789.ajsx"))
@example("python", "3.12")
@example("luajit", "2")
@example("node", "js18")
def test_an_interpreter_is_named_as_the_pattern_names_it(head: str, tail: str) -> None:
    name = head + tail
    m = re.fullmatch(r"(python|pypy|ruby|perl|php|lua|luajit|node|nodejs|julia)[0-9.]*", name)
    if m:
        assert _interpreter(name) == m.group(1)
    else:
        assert _interpreter(name) in ("", name.lower())  # a name _INLINE_FLAGS knows itself
