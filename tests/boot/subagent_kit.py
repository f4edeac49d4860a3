"""Helpers for the sub-agent tests: projects over loopback fakes, calls, transcripts.

One fake server can serve a parent and its children in order (a child runs
inside the parent's tool call); concurrent children get a provider (and a
server) each, picked with the call's ``model``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakes import RecordedRequest, ToolSpec, Turn

from reasonix.agent.events import Event
from reasonix.cancel import Cancel
from reasonix.config.paths import sessions_dir


def project(ws: Path, providers: dict[str, str], default: str = "p", extra: str = "") -> None:
    """``reasonix.toml`` with one openai-kind provider per fake server (model ``m``)."""
    lines = [f'default_model = "{default}"']
    for name, url in providers.items():
        lines += [
            "[[providers]]", f'name = "{name}"', 'kind = "openai"', f'base_url = "{url}"',
            'models = ["m"]', 'api_key_env = "FAKE_PROVIDER_KEY"',
        ]  # fmt: skip
    (ws / "reasonix.toml").write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")


def call(tool: str, /, **args: Any) -> ToolSpec:
    """One tool call with JSON arguments."""
    return ToolSpec(tool, json.dumps(args))


def calls(*specs: ToolSpec) -> Turn:
    """A turn made of tool calls."""
    return Turn.tools(list(specs))


def report(status: str, *criteria: dict[str, Any], summary: str = "did it") -> ToolSpec:
    """A complete_subtask call."""
    return call("complete_subtask", status=status, summary=summary,
                acceptance_criteria=list(criteria))  # fmt: skip


def run(rt: Any, text: str) -> list[Event]:
    """One turn of a runtime, every event."""
    return list(rt.runner.run(text, Cancel()))


def children(ws: Path) -> list[Path]:
    """The kept child transcripts of ``ws``, oldest first."""
    root = sessions_dir(ws) / "subagents"
    return sorted(root.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)


def sidecar(transcript: Path) -> dict[str, Any]:
    """The ContextCapsule sidecar of a child transcript."""
    data: dict[str, Any] = json.loads(transcript.with_suffix(".capsule.json").read_text())
    return data


def tool_results(request: RecordedRequest) -> list[str]:
    """The tool-result messages of a recorded request, in order."""
    return [m["content"] for m in request.json["messages"] if m["role"] == "tool"]


def first_user(request: RecordedRequest) -> str:
    """The first user message of a recorded request."""
    return next(m["content"] for m in request.json["messages"] if m["role"] == "user")


def system(request: RecordedRequest) -> str:
    """The system message of a recorded request."""
    return next(m["content"] for m in request.json["messages"] if m["role"] == "system")


def tool_names(request: RecordedRequest) -> list[str]:
    """The tools a recorded request offered."""
    return sorted(t["function"]["name"] for t in request.json.get("tools", []))
