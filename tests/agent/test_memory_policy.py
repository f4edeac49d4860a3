"""Memory write policy (MEM-9…MEM-12, D23) as a table, then through the real tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.facts import FactStore
from reasonix.agent.memory.policy import WriteSurface, decide_memory_write, find_sensitive
from reasonix.agent.memory.tools import memory_tools
from reasonix.permission.modes import Decision, Mode
from reasonix.tool import ToolContext

ALLOW, ASK, DENY = Decision.ALLOW, Decision.ASK, Decision.DENY
SAFE: dict[str, Any] = {
    "scope": "project",
    "fact_type": "reference",
    "content": "x",
    "duplicate": False,
}

HEADLESS = WriteSurface(interactive=False)
HEADLESS_YOLO = WriteSurface(interactive=False, mode=Mode.BYPASS)
ASK_I = WriteSurface(interactive=True)
AUTO_I = WriteSurface(interactive=True, mode=Mode.AUTO)
YOLO_I = WriteSurface(interactive=True, mode=Mode.BYPASS)
SUB = WriteSurface(interactive=True, mode=Mode.BYPASS, subagent=True)
FOREIGN = WriteSurface(interactive=False, owns_store=False)

CASES: list[tuple[str, str, dict[str, Any], WriteSurface, Decision]] = [
    ("safe create headless", "create", {}, HEADLESS, ALLOW),
    ("safe create headless yolo", "create", {}, HEADLESS_YOLO, ALLOW),
    ("safe create ask", "create", {}, ASK_I, ALLOW),
    ("global headless", "create", {"scope": "global"}, HEADLESS, DENY),
    ("global ask", "create", {"scope": "global"}, ASK_I, ASK),
    ("user pref ask", "create", {"fact_type": "user"}, ASK_I, ASK),
    ("feedback ask", "create", {"fact_type": "feedback"}, ASK_I, ASK),
    ("duplicate ask", "create", {"duplicate": True}, ASK_I, ASK),
    ("duplicate headless", "create", {"duplicate": True}, HEADLESS, DENY),
    ("oversize ask", "create", {"content": "x" * 1201}, ASK_I, ASK),
    ("sensitive headless", "create", {"content": "password = hunter22"}, HEADLESS, DENY),
    ("sensitive ask", "create", {"content": "Bearer abcdefghijklmnop1234"}, ASK_I, ASK),
    ("update ask", "update", {}, ASK_I, ASK),
    ("update headless", "update", {}, HEADLESS, DENY),
    ("forget ask", "forget", {}, ASK_I, ASK),
    ("forget headless yolo", "forget", {}, HEADLESS_YOLO, DENY),
    ("forget auto", "forget", {}, AUTO_I, ALLOW),
    ("global yolo", "create", {"scope": "global"}, YOLO_I, ALLOW),
    ("sub-agent", "create", {}, SUB, DENY),
    ("foreign store", "create", {}, FOREIGN, DENY),
    ("dontAsk global", "create", {"scope": "global"}, WriteSurface(True, Mode.DONT_ASK), DENY),
    (
        "explicit deny beats yolo",
        "create",
        {},
        WriteSurface(True, Mode.BYPASS, explicit=DENY),
        DENY,
    ),
    ("explicit ask in auto", "forget", {}, WriteSurface(True, Mode.AUTO, explicit=ASK), ASK),
    ("explicit ask headless", "create", {}, WriteSurface(False, explicit=ASK), DENY),
]


@pytest.mark.parametrize(
    ("name", "op", "change", "surface", "want"), CASES, ids=[c[0] for c in CASES]
)
def test_policy_matrix(
    name: str, op: str, change: dict[str, Any], surface: WriteSurface, want: Decision
) -> None:
    decision, why = decide_memory_write(op, surface=surface, **{**SAFE, **change})
    assert decision is want, why


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nabc", ["private key"]),
        ("-----BEGIN RSA PRIVATE KEY-----", ["private key"]),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc", ["bearer token"]),
        ("key sk-abcdefghijklmnopqrstuv", ["API key"]),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123", ["API key"]),
        ("AKIAABCDEFGHIJKLMNOP", ["API key"]),
        ("password: hunter22", ["credential assignment"]),
        ("DB_PASSWORD=s3cr3t!", ["credential assignment"]),
        ("mypassword=abc12345", []),  # part of a longer word
        ("api_key = 'abcd1234'", ["credential assignment"]),
        ("the password policy requires 12 characters", []),
        ("use bearer auth for the API", []),
    ],
)
def test_sensitive_detector(text: str, found: list[str]) -> None:
    assert find_sensitive(text) == found


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return Memory(FactStore(tmp_path / "g", "global"), FactStore(tmp_path / "p", "project"))


def call(memory: Memory, name: str, args: dict[str, Any], ctx: ToolContext) -> tuple[bool, str]:
    tool = {t.name: t for t in memory_tools(memory)}[name]
    res = tool.execute(json.dumps(args), ctx)
    return res.is_error, res.content


def test_headless_tools_allow_only_bounded_create_only_project_facts(memory: Memory) -> None:
    ctx = ToolContext(headless=True)
    err, out = call(memory, "remember", {"content": "CI uses make test", "type": "project"}, ctx)
    assert not err and out.startswith("remembered ")
    fact_id = out.split()[1]
    err, out = call(memory, "remember", {"content": "password = hunter22", "type": "project"}, ctx)
    assert err and "sensitive" in out
    err, out = call(memory, "remember", {"content": "x", "type": "user"}, ctx)
    assert err and "user fact" in out
    err, out = call(memory, "remember", {"content": "new", "id": fact_id}, ctx)
    assert err and "update" in out
    err, out = call(memory, "forget", {"id": fact_id}, ctx)
    assert err and memory.find(fact_id)
    err, out = call(memory, "remember", {"content": "CI uses make test", "type": "project"}, ctx)
    assert err and "duplicate" in out
    ctx.extra["subagent"] = True
    err, out = call(memory, "remember", {"content": "other fact here", "type": "project"}, ctx)
    assert err and "sub-agents" in out


def test_interactive_ask_requests_fresh_confirmation(memory: Memory) -> None:
    asked: list[tuple[str, str]] = []
    answer = {"value": False}

    def approve(tool: str, question: str) -> bool:
        asked.append((tool, question))
        return answer["value"]

    ctx = ToolContext(headless=False, extra={"approve_memory": approve, "permission_mode": "ask"})
    err, out = call(memory, "remember", {"content": "prefers tabs", "type": "user"}, ctx)
    assert err and asked and asked[-1][0] == "remember"
    answer["value"] = True
    err, out = call(memory, "remember", {"content": "prefers tabs", "type": "user"}, ctx)
    assert not err
    fact_id = out.split()[1]
    n = len(asked)
    err, out = call(memory, "forget", {"id": fact_id}, ctx)
    assert not err and len(asked) == n + 1  # every forget asks
    err, out = call(memory, "memory", {"operation": "search", "query": "tabs"}, ctx)
    assert out == "(no facts)"  # archived facts are not retrievable
