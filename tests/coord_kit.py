"""Helpers for the Coordinator tests: two fake models on one loopback server."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fakes import ToolSpec, Turn

EXEC, PLAN = "exec-model", "plan-model"

PLAN_TEXT = (
    "<plan>\n# Fix add()\n## Verified touchpoints\n- calc.py:2 — add subtracts\n"
    "## Candidate touchpoints\n- test_calc.py\n## Steps\n- make add return a + b\n"
    "## Verification\n- `python test_calc.py`\n</plan>"
)


def project(ws: Path, url: str, *, planner: bool = True, agent: str = "") -> None:
    """``ws/reasonix.toml``: one provider listing both models; the planner set or not."""
    ws.mkdir(parents=True, exist_ok=True)
    lines = [f'default_model = "fake/{EXEC}"', "[agent]"]
    if planner:
        lines.append(f'planner_model = "fake/{PLAN}"')
    if agent:
        lines.append(agent)
    lines += [
        "[[providers]]", 'name = "fake"', 'kind = "openai"', f'base_url = "{url}"',
        f'models = ["{EXEC}", "{PLAN}"]', 'api_key_env = "FAKE_PROVIDER_KEY"',
    ]  # fmt: skip
    (ws / "reasonix.toml").write_text("\n".join(lines) + "\n")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")


def research(n: int = 1) -> list[Turn]:
    """``n`` planner research rounds (each reads calc.py)."""
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}', id=f"r{i}")]) for i in range(n)
    ]


def bodies(requests: Iterable[Any], model: str) -> list[dict[str, Any]]:
    """The parsed bodies of the requests sent for ``model``, in order."""
    return [r.json for r in requests if r.json and r.json.get("model") == model]


def raw_bodies(requests: Iterable[Any], model: str) -> list[bytes]:
    """The recorded bytes of the requests sent for ``model``, in order."""
    return [r.body for r in requests if r.json and r.json.get("model") == model]


def _array(raw: bytes, key: bytes) -> tuple[int, int]:
    """Where the JSON array under ``key`` starts and ends in a raw body."""
    text = raw.decode("utf-8")
    start = text.index(key.decode()) + len(key)
    while text[start] in " :":
        start += 1
    _, end = json.JSONDecoder().raw_decode(text, start)
    return len(text[:start].encode()), len(text[:end].encode())


def assert_byte_extensions(seq: list[bytes]) -> None:
    """Byte for byte: each request's messages array starts with the previous one's
    messages (its bytes up to the closing bracket), and its tools array is identical."""
    for before, after in itertools.pairwise(seq):
        b0, b1 = _array(before, b'"messages"')
        a0, a1 = _array(after, b'"messages"')
        assert after[a0:a1].startswith(before[b0 : b1 - 1]), "messages are not an extension"
        t0, t1 = _array(before, b'"tools"')
        u0, u1 = _array(after, b'"tools"')
        assert before[t0:t1] == after[u0:u1], "tools changed"


def split(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(system, tools, messages) of an openai body, as canonical JSON text."""
    msgs = body["messages"]
    tools = json.dumps(body.get("tools"), sort_keys=True)
    return (
        json.dumps(msgs[0], sort_keys=True),
        tools,
        [json.dumps(m, sort_keys=True) for m in msgs[1:]],
    )


def assert_extensions(seq: list[dict[str, Any]]) -> None:
    """Every request is a byte-for-byte extension of the previous one (same system, tools)."""
    for before, after in itertools.pairwise(seq):
        s0, t0, m0 = split(before)
        s1, t1, m1 = split(after)
        assert s0 == s1 and t0 == t1
        assert m1[: len(m0)] == m0 and len(m1) > len(m0)


def users(body: dict[str, Any]) -> list[str]:
    """The user messages of one body (without the host's skill index, which leads the
    executor's first turn: docs/SUBAGENT_PROFILES.md)."""
    texts = [str(m.get("content")) for m in body["messages"] if m["role"] == "user"]
    return [t.split("</skills>\n\n", 1)[-1] if t.startswith("<skills>") else t for t in texts]
