"""The plain-TOML parser gives what tomllib gives, or gives up; never a different value."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.config.tomlsimple import parse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib


def _typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type (True is not 1 here)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _agrees(text: str) -> bool:
    """Assert the two parsers agree on ``text``; True when the plain parser took it."""
    got = parse(text)
    if got is None:
        return False
    assert _typed(tomllib.loads(text)) == _typed(got), text  # it must not raise either
    return True


CONFIG = """\
# a project config
default_model = "fake/fake-model"   # trailing comment

[[providers]]
name = "fake"
kind = 'openai'
base_url = "http://127.0.0.1:8080/v1"
models = ["fake-model", 'other', ]
api_key_env = "FAKE_PROVIDER_KEY"
probe_window = false
context_window = 32768

[[providers]]
name = "second"
models = []

[sandbox]
bash = "off"
allow_write = ["/tmp/x"]

[tools.bash]
timeout = -0
"""


def test_a_typical_config_is_read_exactly() -> None:
    assert _agrees(CONFIG)
    assert _agrees(CONFIG.replace("\n", "\r\n"))


@pytest.mark.parametrize(
    "text",
    [
        'a = "x\\ty"',  # an escape
        "a = 1.5",  # a float
        "a = 1979-05-27",  # a date
        "a = { b = 1 }",  # an inline table
        'a = """x"""',  # a multi-line string
        '"quoted" = 1',  # a quoted key
        "a.b = 1",  # a dotted key
        "a = [[1], [2]]",  # a nested array
        "a = [\n1]",  # a multi-line array
        "a = 0x10",  # hex
        "a = 1_000",  # an underscore
        "a = +1",
        "a = 1234567890123456789",  # long
    ],
)
def test_what_it_does_not_take_it_leaves_to_tomllib(text: str) -> None:
    assert parse(text) is None
    tomllib.loads(text)  # still valid TOML: the caller's tomllib reads it


@pytest.mark.parametrize(
    "text",
    [
        "a = 1\na = 2",  # a key twice
        "[t]\n[t]",  # a table twice
        "[t]\nx = 1\n[t.x]",  # a value used as a table
        "[t]\n[[t]]",  # a table used as an array of tables
        "a = [1]\n[[a]]",  # a static array extended
        "a = [1]\n[a.b]",
        "a = 007",  # a leading zero
        "a = 1 2",
        'a = "x" "y"',
        "a = 1\r",  # a lone carriage return
        "a = 'x\x01'",  # a control character
        "# bad \x7f comment",
        "[a.]",
        "[]",
        "[[a]",
        "[a]]",
        "= 1",
        "a =",
        "a = [1,,2]",
        "a = [,]",
        "[t.b]\n[t]\nb = 1",  # a key that is already a sub-table
    ],
)
def test_invalid_toml_is_never_taken(text: str) -> None:
    assert parse(text) is None
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)


def test_tables_may_be_defined_after_their_sub_tables_and_per_array_element() -> None:
    assert _agrees("[a.b]\nx = 1\n[a]\ny = 2")
    assert _agrees("[[x]]\n[x.y]\nv = 1\n[[x]]\n[x.y]\nv = 2")
    assert _agrees("[[a.b]]\nk = 'v'\n[[a.b]]\n[a.c]\n")


_KEYS = st.sampled_from(["a", "b", "name", "t", "x-y", "k_2", "7"])
_SCALARS = st.one_of(
    st.integers(min_value=-(10**15), max_value=10**15).map(str),
    st.sampled_from(["true", "false", "0", "-0", "007", "1.0", "+3", "1_0", "truex"]),
    st.text(alphabet=st.sampled_from(list("ab #=[]{}.\\'\t\x01é中")), max_size=6).map(
        lambda s: '"' + s + '"'
    ),
    st.text(alphabet=st.sampled_from(list('ab #=[]"\\\t\x7fé')), max_size=6).map(
        lambda s: "'" + s + "'"
    ),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    st.lists(_SCALARS, min_size=1, max_size=3).map(lambda xs: "[" + ",".join(xs) + ",]"),
)
_LINES = st.one_of(
    st.tuples(_KEYS, st.sampled_from([" = ", "=", " =\t"]), _VALUES).map("".join),
    st.lists(_KEYS, min_size=1, max_size=3).map(lambda ks: "[" + ".".join(ks) + "]"),
    st.lists(_KEYS, min_size=1, max_size=2).map(lambda ks: "[[" + ".".join(ks) + "]]"),
    st.sampled_from(["", "# comment", "  # note [x]", "\t", "x = 1 # c", "[ a . b ]", "\r"]),
    st.text(alphabet=st.sampled_from(list("ab =[]\"'#.\t\r1")), max_size=8),
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_LINES, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_it_agrees_with_tomllib_on_any_mix(lines: list[str], newline: str) -> None:
    text = newline.join(lines)
    got = parse(text)
    if got is None:
        return
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        pytest.fail(f"taken but invalid: {text!r}")
    assert _typed(expected) == _typed(got), text


def test_a_plain_config_is_read_without_importing_tomllib(tmp_path: Any) -> None:
    import os
    import subprocess

    code = (
        "import sys\nfrom reasonix.config import tomlparse\n"
        f"got = tomlparse.loads({CONFIG!r}, 'reasonix.toml')\n"
        "print(got['providers'][0]['name'], 'tomllib' in sys.modules, 'tomli' in sys.modules)\n"
    )
    env = {**os.environ, "REASONIX_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout  # fmt: skip
    assert out.split() == ["fake", "False", "False"]


@settings(max_examples=1500, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_taken_exactly_or_left_to_tomllib(text: str) -> None:
    """Whatever the bytes, the plain parser never raises; what it takes, tomllib agrees on."""
    got = parse(text)
    if got is not None:
        assert _typed(tomllib.loads(text)) == _typed(got)
