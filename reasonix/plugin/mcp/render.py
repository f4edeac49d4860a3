"""Turn MCP results (tool calls, prompts, resources) into text, with no I/O.

The model reads text, so every content kind gets a faithful textual form:
text as is, ``structuredContent`` as JSON when no text block carries it,
images and audio as a short placeholder naming the type and size, embedded
resources as their text (or a placeholder for blobs), resource links as the URI.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from typing import Any

__all__ = ["render_content", "render_prompt", "render_resource", "render_tool_result", "tool_id"]

_UNSAFE = Pattern(r"[^A-Za-z0-9_-]")


def tool_id(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with spaces (and other characters providers reject) as ``_``."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


def _b64_size(data: Any) -> int:
    return len(data) * 3 // 4 if isinstance(data, str) else 0


def render_content(block: Any) -> str:
    """One content block as text."""
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        mime = block.get("mimeType") or kind
        return f"[{kind} {mime}, {_b64_size(block.get('data'))} bytes]"
    if kind == "resource":
        return render_resource_contents(block.get("resource") or {})
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        label = f" {name}" if name else ""
        return f"[resource link{label}: {block.get('uri', '')}]"
    return json.dumps(block, ensure_ascii=False)


def render_resource_contents(item: Any) -> str:
    """One entry of ``contents`` (text or blob) as text."""
    if not isinstance(item, dict):
        return str(item)
    if "text" in item:
        return str(item["text"])
    mime = item.get("mimeType") or "application/octet-stream"
    return f"[binary resource {item.get('uri', '')} {mime}, {_b64_size(item.get('blob'))} bytes]"


def render_tool_result(result: dict[str, Any]) -> tuple[str, bool]:
    """A ``tools/call`` result as (text, is_error)."""
    blocks = result.get("content")
    parts = [render_content(b) for b in blocks] if isinstance(blocks, list) else []
    structured = result.get("structuredContent")
    if structured is not None and not any(p.strip() for p in parts):
        # The spec asks servers to mirror structured output into a text block;
        # when they did, the text is the representation, so it is said once.
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(p for p in parts if p != "")
    return text, bool(result.get("isError"))


def render_resource(result: dict[str, Any]) -> str:
    """A ``resources/read`` result as text (several contents joined)."""
    contents = result.get("contents")
    if not isinstance(contents, list):
        return ""
    return "\n".join(render_resource_contents(c) for c in contents)


def render_prompt(result: dict[str, Any]) -> str:
    """A ``prompts/get`` result as the text of its messages, one block per message."""
    messages = result.get("messages")
    if not isinstance(messages, list):
        return ""
    out = []
    for msg in messages:
        if isinstance(msg, dict):
            out.append(render_content(msg.get("content")))
    return "\n\n".join(out)
