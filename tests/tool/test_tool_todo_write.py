"""todo_write: full-list replacement, one in_progress at most, stored in ctx.extra."""

from __future__ import annotations

import json

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.todo_write import TOOL


def todo(ctx: ToolContext, todos: object) -> ToolResult:
    return TOOL.execute(json.dumps({"todos": todos}), ctx)


def test_renders_and_stores_the_list() -> None:
    ctx = ToolContext()
    res = todo(
        ctx,
        [
            {"content": "Write parser", "status": "completed"},
            {"content": "Test parser", "status": "in_progress", "id": "t2"},
            {"content": "Docs", "status": "pending"},
        ],
    )
    assert not res.is_error, res.content
    assert res.content.splitlines() == [
        "Todos (3 total: 1 completed, 1 in progress, 1 pending)",
        "[x] Write parser",
        "[>] Test parser",
        "[ ] Docs",
    ]
    assert ctx.extra["todos"][1] == {"id": "t2", "content": "Test parser", "status": "in_progress"}
    assert ctx.extra["todos"][0]["id"] == "1"
    assert TOOL.read_only is True


def test_each_call_replaces_the_list() -> None:
    ctx = ToolContext()
    todo(ctx, [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}])
    todo(ctx, [{"content": "c", "status": "completed"}])
    assert [t["content"] for t in ctx.extra["todos"]] == ["c"]
    assert todo(ctx, []).content == "Todo list cleared."
    assert ctx.extra["todos"] == []


@pytest.mark.parametrize(
    ("todos", "needle"),
    [
        (
            [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
            "2 items are in_progress",
        ),
        ([{"content": "a", "status": "done"}], "status must be one of"),
        ([{"content": "", "status": "pending"}], "content must be"),
        (["x"], "must be an object"),
        (
            [
                {"content": "a", "status": "pending", "id": "k"},
                {"content": "b", "status": "pending", "id": "k"},
            ],
            "duplicate todo id",
        ),
    ],
)
def test_invalid_lists_are_rejected(todos: object, needle: str) -> None:
    ctx = ToolContext()
    res = todo(ctx, todos)
    assert res.is_error and needle in res.content
    assert "todos" not in ctx.extra
