"""The stdlib token estimator (D18) and its provider-reported correction."""

from __future__ import annotations

import pytest

from reasonix.agent.tokens import TokenCounter, estimate_request, estimate_text
from reasonix.provider.types import Message, Role, ToolSchema

# Reference counts are cl100k_base (tiktoken) for each text, recorded once so
# the test needs neither tiktoken nor its downloadable encoding files.
REFERENCE = [
    ("english", "The quick brown fox jumps over the lazy dog. " * 20, 201),
    (
        "code",
        "def parse_json_value(text: str) -> dict[str, Any]:\n    return json.loads(text)\n" * 20,
        400,
    ),
    ("chinese", "上下文管理使用摘要检查点，保持规范记录只追加。" * 20, 460),
    ("json", '{"role": "tool", "content": "ok", "tool_call_id": "call_1"}\n' * 20, 440),
    ("mixed", "Mixed 中文 and English with code_identifiers and 12345 numbers. " * 20, 301),
]


@pytest.mark.parametrize(("name", "text", "reference"), REFERENCE, ids=[r[0] for r in REFERENCE])
def test_estimate_within_fifteen_percent(name: str, text: str, reference: int) -> None:
    assert abs(estimate_text(text) - reference) / reference <= 0.15


def test_edges() -> None:
    assert estimate_text("") == 0
    assert estimate_text("a") == 1
    assert estimate_text("word " * 100) < estimate_text("word " * 200)


def test_request_estimate_counts_system_tools_and_messages() -> None:
    tools = [ToolSchema("read", "read a file", {"type": "object"})]
    msgs = [Message(Role.USER, "hello")]
    assert estimate_request("sys", msgs, tools) > estimate_request("", msgs, ())


def test_counter_anchors_on_the_reported_prefix() -> None:
    counter = TokenCounter()
    msgs = [Message(Role.USER, "alpha " * 100)]
    raw = counter.estimate("s", msgs, ())
    counter.note_sent("s", msgs, ())
    counter.observe(2 * raw)  # the provider counts twice what we guessed
    assert counter.ratio == pytest.approx(2.0, rel=0.05)
    grown = [*msgs, Message(Role.ASSISTANT, "beta " * 50)]
    tail = estimate_request("", grown[1:], ())
    # reported prefix + corrected estimate of only the new message
    assert counter.estimate("s", grown, ()) == pytest.approx(2 * raw + 2 * tail, abs=2)
    # A rewritten projection (new objects) cannot reuse the anchor.
    rewritten = [Message(Role.USER, "alpha " * 100)]
    assert counter.estimate("s", rewritten, ()) == pytest.approx(2 * raw, rel=0.05)


def test_counter_ignores_absurd_reports_and_zero() -> None:
    counter = TokenCounter()
    msgs = [Message(Role.USER, "x " * 100)]
    counter.note_sent("", msgs, ())
    counter.observe(0)
    assert counter.ratio == 1.0
    counter.observe(10**9)
    assert counter.ratio == 4.0  # clamped


def test_bump_ratio_after_overflow() -> None:
    counter = TokenCounter()
    counter.bump_ratio(1.5)
    assert counter.ratio == 1.5
    counter.bump_ratio(1.2)
    assert counter.ratio == 1.5
