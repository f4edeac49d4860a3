"""A ``session/prompt`` content list as the text of one user turn.

- ``text`` blocks are the user's words; ``@`` references in them get the same
  handling as in the chat (the command layer's ``expand_references``, once it
  is there);
- an embedded ``resource`` carries the editor's own copy of a file (unsaved
  edits included) and is inlined as it came;
- a ``resource_link`` to a local file is read the way ``read_file`` reads it —
  through the editor when it lends its file system, and never past
  ``[sandbox].forbid_read``; other links are named, not fetched;
- images and audio are not advertised; a client that sends them anyway gets a
  note in the turn instead of an error.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from reasonix.errors import ReasonixError
from reasonix.tool import ToolContext

from .rpc import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ReadResource", "prompt_text"]

ReadResource = Callable[[str, str], str]

_LINK_LIMIT = 256 * 1024  # characters of a linked file inlined into one turn


def _bad(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"invalid params: {message}")


def _file_path(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return Path(path) if os.path.isabs(path) and "\x00" not in path else None


def _shown(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _block(label: str, text: str) -> str:
    return f'<file path="{label}">\n{text}\n</file>'


def _resource(block: dict[str, Any], workspace: Path) -> str:
    res = block.get("resource")
    if not isinstance(res, dict) or not isinstance(res.get("uri"), str):
        raise _bad("resource.uri must be a string")
    uri = res["uri"]
    path = _file_path(uri)
    label = _shown(path, workspace) if path is not None else uri
    if isinstance(res.get("text"), str):
        return _block(label, res["text"])
    mime = res.get("mimeType") or "binary data"
    return f"[attached {label} ({mime}) is not text; it was not included]"


def _link(block: dict[str, Any], ctx: ToolContext) -> str:
    uri, name = block.get("uri"), block.get("name")
    if not isinstance(uri, str):
        raise _bad("resource_link.uri must be a string")
    path = _file_path(uri)
    label = name if isinstance(name, str) and name else uri
    if path is None:
        return f"[link: {label} <{uri}>]"
    shown = _shown(path, Path(ctx.workspace))
    try:
        return _block(shown, _read_linked(path, ctx))
    except (ReasonixError, OSError) as err:
        return f"[linked file {shown} could not be read: {err}]"


def _read_linked(path: Path, ctx: ToolContext) -> str:
    """A linked file's text, after the same checks ``read_file`` makes."""
    from reasonix.tool.builtin._preview import file_text

    text = file_text(path, ctx)
    if len(text) > _LINK_LIMIT:
        text = text[:_LINK_LIMIT] + f"\n[… {len(text) - _LINK_LIMIT} more characters not shown]"
    return text


def _expand(
    text: str, ctx: ToolContext, read_resource: ReadResource | None
) -> tuple[str, list[str]]:
    """The chat's ``@`` handling (``@path``, ``@server:uri``), when the command layer has it."""
    if "@" not in text:
        return text, []
    try:
        refs = importlib.import_module("reasonix.command.refs")
    except ImportError:
        return text, []
    out: tuple[str, list[str]] = refs.expand_references(
        text,
        workspace=Path(ctx.workspace),
        forbid_read=list(ctx.forbid_read),
        read_resource=read_resource,
    )
    return out


def prompt_text(
    blocks: Any, ctx: ToolContext, read_resource: ReadResource | None = None
) -> tuple[str, list[str]]:
    """The user turn for ``blocks`` and notices to show (raises invalid params on bad shapes).

    ``read_resource(server, uri)`` reads ``@server:uri`` references (MCP resources).
    """
    if not isinstance(blocks, list) or not blocks:
        raise _bad("prompt must be a non-empty array of content blocks")
    parts: list[str] = []
    notices: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _bad("every content block needs a type")
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise _bad("text block without text")
            text, notes = _expand(block["text"], ctx, read_resource)
            parts.append(text)
            notices.extend(notes)
        elif kind == "resource":
            parts.append(_resource(block, Path(ctx.workspace)))
        elif kind == "resource_link":
            parts.append(_link(block, ctx))
        elif kind in ("image", "audio"):
            notices.append(f"{kind} content is not supported by this agent; it was left out")
        else:
            notices.append(f"unknown content type {kind!r}; it was left out")
    text = "\n\n".join(p for p in parts if p)
    if not text.strip():
        raise _bad("the prompt holds no text")
    return text, notices
