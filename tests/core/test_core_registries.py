"""Provider and tool registries, schema canonicalisation (D23), result clipping (D18)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import reasonix.provider as provider
from reasonix.cancel import Cancel
from reasonix.errors import ConfigError
from reasonix.provider.types import Chunk, ChunkKind, Message, Request, Role, ToolCall
from reasonix.tool import (
    CONTENT_LIMIT_BYTES,
    Registry,
    ToolContext,
    ToolResult,
    canonical_json,
    canonicalize_schema,
    clip_content,
    register_builtin,
    unregister_builtin,
)
from reasonix.tool.base import FunctionTool, parse_args


class _Echo:
    name = "echo-test"

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        yield Chunk(ChunkKind.TEXT, text=request.messages[-1].content)
        yield Chunk(ChunkKind.DONE, finish_reason="stop")


def test_provider_registry_builds_registered_kinds_and_names_unknown_ones() -> None:
    provider.register("echo-test", _Echo)
    p = provider.new("echo-test", {"k": 1})
    chunks = list(p.stream(Request("m", [Message(Role.USER, "hi")]), Cancel()))
    assert [c.text for c in chunks] == ["hi", ""]
    with pytest.raises(ConfigError, match="nope"):
        provider.new("nope", {})


def test_message_json_omits_empty_optionals_and_round_trips() -> None:
    m = Message(Role.ASSISTANT, "", tool_calls=[ToolCall("c1", "read_file", '{"path":"a"}')])
    d = m.to_dict()
    assert "tool_call_id" not in d and "name" not in d
    assert Message.from_dict(json.loads(json.dumps(d))) == m
    t = Message(Role.TOOL, "ok", tool_call_id="c1", name="read_file")
    assert Message.from_dict(t.to_dict()) == t


def test_canonicalisation_sorts_keys_and_required() -> None:
    schema = {"type": "object", "required": ["b", "a"], "properties": {"b": {}, "a": {}}}
    canon = canonicalize_schema(schema)
    assert canonical_json(canon) == (
        '{"properties":{"a":{},"b":{}},"required":["a","b"],"type":"object"}'
    )


def _tool(name: str, read_only: bool = True) -> FunctionTool:
    return FunctionTool(
        name=name,
        description=f"{name} tool",
        schema={"type": "object", "properties": {"x": {"type": "integer", "default": 1}}},
        fn=lambda args, ctx: str(args["x"]),
        read_only=read_only,
    )


def test_registry_is_sorted_and_filtered_by_enabled() -> None:
    register_builtin(_tool("zz_probe"))
    register_builtin(_tool("aa_probe"))
    try:
        everything = Registry.from_builtins()
        assert everything.names() == sorted(everything.names())
        assert {"aa_probe", "zz_probe"} <= set(everything.names())
        only = Registry.from_builtins(["zz_probe"])
        assert only.names() == ["zz_probe"]
        with pytest.raises(ConfigError, match="no_such_tool"):
            Registry.from_builtins(["no_such_tool"])
    finally:
        unregister_builtin("zz_probe")
        unregister_builtin("aa_probe")
    assert "zz_probe" not in Registry.from_builtins().names()


def test_schemas_are_byte_identical_across_registries() -> None:
    a, b = Registry(), Registry()
    for name in ("b_t", "a_t"):
        a.add(_tool(name))
    for name in ("a_t", "b_t"):
        b.add(_tool(name))
    assert canonical_json(a.schemas()) == canonical_json(b.schemas())


def test_function_tool_turns_failures_into_results() -> None:
    tool = _tool("t")
    ctx = ToolContext()
    assert tool.execute('{"x": 5}', ctx).content == "5"
    assert tool.execute("{}", ctx).content == "1"
    bad = tool.execute('{"x": "five"}', ctx)
    assert bad.is_error and "integer" in bad.content
    broken = tool.execute("{not json", ctx)
    assert broken.is_error and "JSON" in broken.content


def test_parse_args_rejects_bool_for_integer_and_checks_enum() -> None:
    schema = {
        "type": "object",
        "required": ["n"],
        "properties": {"n": {"type": "integer"}, "m": {"type": "string", "enum": ["a"]}},
    }
    with pytest.raises(Exception, match="integer"):
        parse_args('{"n": true}', schema)
    with pytest.raises(Exception, match="one of"):
        parse_args('{"n": 1, "m": "b"}', schema)
    with pytest.raises(Exception, match="missing"):
        parse_args("{}", schema)


@pytest.mark.parametrize("unit", ["a", "é", "中", "😀"])
def test_clip_keeps_head_and_tail_within_limit(unit: str) -> None:
    text = "HEAD" + unit * 40000 + "TAIL"
    clipped = clip_content(text)
    assert len(clipped.encode()) <= CONTENT_LIMIT_BYTES
    assert clipped.startswith("HEAD") and clipped.endswith("TAIL")
    assert "omitted" in clipped
    result = ToolResult(content=text)
    assert result.raw_content == text and result.content == clipped


def test_short_content_is_untouched() -> None:
    assert clip_content("short") == "short"


def test_lone_surrogates_are_replaced_not_raised() -> None:
    assert clip_content("a\ud800b") == "a?b"
    assert ToolResult(content="x\udcff").content == "x?"
