"""delete_symbol: Python symbols by ast span, decorators and comments included."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.delete_symbol import TOOL

SOURCE = '''\
import functools


# helper comment
@functools.cache
def helper(x):
    return x * 2


class Parser:
    """Parses things."""

    limit = 10

    @staticmethod
    def parse(line):
        return line.split()

    def other(self):
        return 1


class Lone:
    def only(self):
        pass


VALUE = 3
'''


def delete(ctx: ToolContext, name: str, path: str = "m.py") -> ToolResult:
    return TOOL.execute(json.dumps({"path": path, "name": name}), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "m.py").write_text(SOURCE)
    return ToolContext(workspace=tmp_path)


def _module(tmp_path: Path) -> str:
    text = (tmp_path / "m.py").read_text()
    ast.parse(text)  # the result always still parses
    return text


def test_function_with_decorator_and_comment(ctx: ToolContext, tmp_path: Path) -> None:
    res = delete(ctx, "helper")
    assert not res.is_error, res.content
    text = _module(tmp_path)
    assert "helper" not in text and "functools.cache" not in text
    assert "# helper comment" not in text
    assert text.startswith("import functools\n\n\nclass Parser:")
    assert "Deleted helper (lines 4-7)" in res.content


def test_method_by_dotted_name(ctx: ToolContext, tmp_path: Path) -> None:
    res = delete(ctx, "Parser.parse")
    assert not res.is_error, res.content
    text = _module(tmp_path)
    assert "def parse" not in text and "@staticmethod" not in text
    assert "def other(self):" in text and "limit = 10" in text


def test_class_attribute_and_module_variable(ctx: ToolContext, tmp_path: Path) -> None:
    assert not delete(ctx, "Parser.limit").is_error
    assert not delete(ctx, "VALUE").is_error
    text = _module(tmp_path)
    assert "limit" not in text and "VALUE" not in text


def test_only_member_becomes_pass(ctx: ToolContext, tmp_path: Path) -> None:
    assert not delete(ctx, "Lone.only").is_error
    assert "class Lone:\n    pass\n" in _module(tmp_path)


def test_whole_class(ctx: ToolContext, tmp_path: Path) -> None:
    assert not delete(ctx, "Parser").is_error
    text = _module(tmp_path)
    assert "Parser" not in text and "class Lone" in text


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("missing", "no symbol 'missing' at module level"),
        ("Parser.missing", "names there:"),
        ("VALUE.x", "no symbol 'VALUE'"),
        ("bad name", "invalid symbol name"),
    ],
)
def test_errors(ctx: ToolContext, tmp_path: Path, name: str, needle: str) -> None:
    res = delete(ctx, name)
    assert res.is_error and needle in res.content
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_duplicate_definitions_are_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "d.py").write_text("def f():\n    pass\n\n\ndef f():\n    pass\n")
    res = delete(ToolContext(workspace=tmp_path), "f", path="d.py")
    assert res.is_error and "defined 2 times (lines 1, 5)" in res.content


def test_non_python_file_suggests_delete_range(tmp_path: Path) -> None:
    (tmp_path / "x.go").write_text("package x\nfunc A() {}\n")
    res = delete(ToolContext(workspace=tmp_path), "A", path="x.go")
    assert res.is_error and "delete_range" in res.content


def test_unparsable_file(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def (:\n")
    res = delete(ToolContext(workspace=tmp_path), "x", path="bad.py")
    assert res.is_error and "does not parse" in res.content


def test_crlf_async_and_nested(tmp_path: Path) -> None:
    src = (
        "class A:\r\n    class B:\r\n        async def go(self):\r\n"
        "            pass\r\n\r\n    x = 1\r\n"
    )
    (tmp_path / "c.py").write_bytes(src.encode())
    ctx = ToolContext(workspace=tmp_path)
    res = delete(ctx, "A.B.go", path="c.py")
    assert not res.is_error, res.content
    assert (tmp_path / "c.py").read_bytes() == (
        b"class A:\r\n    class B:\r\n        pass\r\n\r\n    x = 1\r\n"
    )
