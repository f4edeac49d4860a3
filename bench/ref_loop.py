"""A minimal stdlib agent loop: the reference bench/task.py measures Reasonix against.

Usage: ``python bench/ref_loop.py URL PROMPT`` in the task's workspace. It
speaks OpenAI chat completions (streamed), offers three tools with the same
names and arguments as Reasonix's (read_file, edit_file, bash), runs the
model's calls in order and loops until the model answers without tools, then
prints the answer. No config, no sessions, no permissions, no sandbox: the
least any agent has to do, so the ratio shows what Reasonix's extras cost.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "edit_file",
            "description": "Replace old_string with new_string in a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                },
                "required": ["path", "old_string", "new_string"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
]


def run_tool(name: str, args: dict[str, Any]) -> str:
    """Execute one tool call; errors become text for the model."""
    try:
        if name == "read_file":
            return Path(args["path"]).read_text()
        if name == "edit_file":
            path = Path(args["path"])
            text = path.read_text()
            if args["old_string"] not in text:
                return "error: old_string not found"
            path.write_text(text.replace(args["old_string"], args["new_string"], 1))
            return "ok"
        if name == "bash":
            done = subprocess.run(
                ["bash", "-c", args["command"]], capture_output=True, text=True, timeout=120
            )
            return done.stdout + done.stderr + f"\n[exit code {done.returncode}]"
    except (OSError, KeyError, subprocess.SubprocessError) as err:
        return f"error: {err}"
    return f"error: unknown tool {name}"


def stream(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """POST one streamed chat completion and fold it into an assistant message."""
    body = {"model": "fake-model", "stream": True, "messages": messages, "tools": TOOLS}
    req = urllib.request.Request(
        url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-fake"},
    )
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    with urllib.request.urlopen(req, timeout=60) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                for tc in delta.get("tool_calls") or []:
                    slot = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
                    slot["id"] = tc.get("id") or slot["id"]
                    fn = tc.get("function") or {}
                    slot["name"] = fn.get("name") or slot["name"]
                    slot["args"] += fn.get("arguments") or ""
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        msg["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["args"]},
            }
            for _, c in sorted(calls.items())
        ]
    return msg


def main(url: str, prompt: str) -> int:
    """Loop until the model answers without tools; print the answer."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": prompt},
    ]
    for _ in range(50):
        reply = stream(url, messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            print(reply["content"])
            return 0
        for call in reply["tool_calls"]:
            fn = call["function"]
            result = run_tool(fn["name"], json.loads(fn["arguments"] or "{}"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
