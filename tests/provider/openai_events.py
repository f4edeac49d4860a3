"""Builders for the openai kind's traffic table (test_traffic_openai.py).

Vendor envelopes (the id/model/fingerprint fields each vendor puts on every
chunk), chunk builders, and the checks on the requests that follow an answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes import Turn
from traffic_kit import Replayed

# -- envelopes -----------------------------------------------------------------


def chunk(
    env: dict[str, Any],
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    **choice_extra: Any,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` in ``env`` (the vendor's id/model/... fields)."""
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, **choice_extra}
    choice["finish_reason"] = finish
    return {**env, "object": "chat.completion.chunk", "choices": [choice]}


def usage_chunk(env: dict[str, Any], usage: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The last chunk of a stream asked for ``include_usage``: no choices, only usage."""
    return {**env, "object": "chat.completion.chunk", "choices": [], "usage": usage, **extra}


def call(index: int, id: str = "", name: str = "", args: str = "") -> dict[str, Any]:
    """A tool-call delta; the first one of a call carries id, type and name."""
    fn: dict[str, Any] = {"arguments": args}
    out: dict[str, Any] = {"index": index}
    if id:
        out.update(id=id, type="function")
    if name:
        fn["name"] = name
    out["function"] = fn
    return out


OPENAI = {
    "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    "created": 1741570283,
    "model": "gpt-4o-2024-08-06",
    "service_tier": "default",
    "system_fingerprint": "fp_eb9dce56a8",
}
DEEPSEEK = {
    "id": "5b4d8c0e-3f7a-4c43-9d3e-2f0b1c9a7d61",
    "created": 1737993123,
    "model": "deepseek-reasoner",
    "system_fingerprint": "fp_7e73fd9a08_prod0225",
}
OPENROUTER = {
    "id": "gen-1741570283-kJz8QeVb3mXn2Rr4aPq1",
    "provider": "DeepInfra",
    "model": "deepseek/deepseek-r1",
    "created": 1741570283,
}
XAI = {
    "id": "a3e1b2c4-5d6e-7f80-9a1b-2c3d4e5f6a7b",
    "created": 1741570283,
    "model": "grok-3-mini",
    "system_fingerprint": "fp_6a0fa1c2b6",
}
MISTRAL = {
    "id": "2c9f1a7b3e6d4f0a8b5c1d2e3f4a5b6c",
    "created": 1741570283,
    "model": "magistral-medium-2509",
}
DASHSCOPE = {
    "id": "chatcmpl-e30f5ae7-3063-93c4-90fe-beb5f900bd57",
    "created": 1735120033,
    "model": "qwen-plus",
    "system_fingerprint": None,
}
MOONSHOT = {"id": "chatcmpl-6810567267ee141b4630dccb", "created": 1745901170, "model": "kimi-k2.5"}
OLLAMA = {
    "id": "chatcmpl-476",
    "created": 1741570283,
    "model": "qwen3:8b",
    "system_fingerprint": "fp_ollama",
}
VLLM = {"id": "chatcmpl-9d2c5f1e8a4b4c7e", "created": 1741570283, "model": "Qwen/QwQ-32B"}
LLAMA_CPP = {
    "id": "chatcmpl-dNaHXNvtiMumXqXykdu8VPuqCSZoLY4U",
    "created": 1762855742,
    "model": "gpt-oss-20b",
    "system_fingerprint": "b7010-c27efd2bd",
}

# the next answer after a tool call, with a usage we can add up
DONE = Turn.text_only("done", usage={"input_tokens": 100, "output_tokens": 20})


# -- checks on the next request -------------------------------------------------


def assistant_calls(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every (id, name, arguments) the request replays from assistant messages."""
    return [
        (tc["id"], tc["function"]["name"], tc["function"]["arguments"])
        for m in body["messages"]
        if m["role"] == "assistant"
        for tc in m.get("tool_calls") or []
    ]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]


def replays_calls(*calls: tuple[str, str, str]) -> Any:
    """The next request carries exactly these calls, each answered by a tool result."""

    def check(got: Replayed) -> None:
        body = got.next_body()
        assert assistant_calls(body) == list(calls), body["messages"]
        assert tool_results(body) == [c[0] for c in calls], body["messages"]

    return check


def never_replays(raw_args: str, path: str = "") -> Any:
    """A truncated call is never run and never sent back altered or verbatim."""

    def check(got: Replayed) -> None:
        for body in got.bodies[1:]:
            assert all(a != raw_args for _, _, a in assistant_calls(body)), body["messages"]
            assert not tool_results(body), body["messages"]
        if path:
            assert not Path(path).exists()

    return check


def failed_with(got: Replayed, message: str) -> None:
    """The run failed on the vendor's error, and said the vendor's words."""
    assert got.result["is_error"] is True, got.result
    assert message in got.result.get("error", {}).get("message", ""), got.result


def all_of(*checks: Any) -> Any:
    def check(got: Replayed) -> None:
        for c in checks:
            c(got)

    return check


def later(check: Any) -> Any:
    """``check`` applied one request later (the request after the next)."""
    return lambda got: check(Replayed(got.code, got.result, got.bodies[1:], got.stderr))


def reasoning_replayed(reasoning: str) -> Any:
    def check(got: Replayed) -> None:
        msgs = [m for m in got.next_body()["messages"] if m["role"] == "assistant"]
        assert msgs and msgs[0].get("reasoning_content") == reasoning, msgs

    return check
