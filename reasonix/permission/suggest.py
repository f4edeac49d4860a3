"""The rule an approval card offers to save, and the broader scope it offers beside it.

``suggest_rule`` names the call itself (PERM-8): the concrete bash command, the
edited path relative to the workspace, the fetched domain. ``conservative_prefix_rule``
is the optional wider choice (``Bash(git push:*)``). Pure: strings in, a rule out.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from reasonix.permission.rules import EDIT_TOOLS, subjects

if TYPE_CHECKING:
    from typing import Any

    from reasonix.permission.bash import BashAnalysis, Segment

__all__ = ["conservative_prefix_rule", "suggest_rule"]


def _conservative_prefix(seg: Segment) -> str:
    words = list(seg.argv[:2])
    if len(words) == 2 and (words[1].startswith("-") or not words[1].replace("-", "").isalnum()):
        words = words[:1]
    return " ".join(words)


def suggest_rule(
    tool_name: str,
    args: dict[str, Any],
    workspace: str | None = None,
    analysis: BashAnalysis | None = None,
) -> str:
    """The rule an "allow for the session / always" answer saves (PERM-8).

    Bash: the concrete command — ``Bash(<words>)`` for one static segment without glob
    characters, else ``Bash=<literal>``. File tools: ``Edit(<path>)`` (relative to the
    workspace when inside it). ``web_fetch``: ``WebFetch(domain:<host>)``. Others: the tool ID.
    """
    if tool_name == "bash":
        from reasonix.permission.bash import Kind, analyze  # the classifier loads with bash

        command = str(args.get("command", "")).strip()
        analysis = analysis or analyze(command)
        segs = analysis.segments
        if (
            len(segs) == 1
            and segs[0].kind is Kind.STATIC
            and not any(ch in segs[0].text for ch in "*?()\n")
            and not segs[0].text.endswith(":*")
            and segs[0].text == command
        ):
            return f"Bash({command})"
        return f"Bash={command}"
    if tool_name in EDIT_TOOLS:
        paths = subjects("path", args)
        if len(paths) == 1:
            return f"Edit({_rel(paths[0], workspace)})"
        rels = [_rel(p, workspace) for p in paths]
        if len(rels) > 1 and len({r.startswith("/") for r in rels}) == 1:
            # move_file: one rule must cover both paths, so offer their common directory.
            common = posixpath.commonpath(rels)
            return f"Edit({common}/**)" if common not in ("", ".", "/") else "Edit(**)"
        if rels:
            return "Edit(**)"
    if tool_name == "web_fetch":
        try:
            host = urlsplit(str(args.get("url", ""))).hostname or ""
        except ValueError:
            host = ""
        if host:
            return f"WebFetch(domain:{host.lower()})"
    return tool_name


def _rel(path: str, workspace: str | None) -> str:
    path = path.replace("\\", "/")
    if workspace and path.startswith("/"):
        ws = workspace.rstrip("/").replace("\\", "/")
        if path == ws:
            return "."
        if path.startswith(ws + "/"):
            return path[len(ws) + 1 :]
    return posixpath.normpath(path) if path else path


def conservative_prefix_rule(command: str) -> str:
    """The optional broader scope offered next to the concrete command: ``Bash(git push:*)``."""
    from reasonix.permission.bash import Kind, analyze

    analysis = analyze(command)
    if len(analysis.segments) == 1 and analysis.segments[0].kind is Kind.STATIC:
        prefix = _conservative_prefix(analysis.segments[0])
        if prefix and prefix.isascii():
            return f"Bash({prefix}:*)"
    return ""
