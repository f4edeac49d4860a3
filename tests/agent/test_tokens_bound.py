"""The cheap bounds of reasonix.agent.tokens never fall below the estimate they stand for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.agent.tokens import (
    TokenCounter,
    estimate_message,
    estimate_request,
    estimate_text,
    upper_bound_message,
    upper_bound_request,
    upper_bound_text,
)
from reasonix.provider.types import Message, Role, ToolCall, ToolSchema

_ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 _-.,;:!?()[]{}<>'\"\n\t/\\|+=*&^%$#@~`")
    + list("的一是在不了有和人这中大为上个国我以要他时日本語한국어éüßøπλж😀\u200b")
)


@settings(max_examples=400)
@given(st.text(alphabet=_ALPHABET, max_size=400))
def test_the_text_bound_holds(text: str) -> None:
    assert estimate_text(text) <= upper_bound_text(text)


@settings(max_examples=400)
@given(st.text(max_size=200))
def test_the_text_bound_holds_for_any_code_point(text: str) -> None:
    assert estimate_text(text) <= upper_bound_text(text)


@settings(max_examples=100)
@given(
    st.text(alphabet=_ALPHABET, max_size=300),
    st.lists(st.tuples(st.text(alphabet=_ALPHABET, min_size=1, max_size=20),
                       st.text(alphabet=_ALPHABET, max_size=200)), max_size=5),
)  # fmt: skip
def test_the_request_bound_holds(system: str, tools: list[tuple[str, str]]) -> None:
    schemas = [
        ToolSchema(
            name,
            desc,
            {"type": "object", "properties": {"x": {"type": "string", "description": desc}}},
        )
        for name, desc in tools
    ]
    assert estimate_request(system, [], schemas) <= upper_bound_request(system, schemas)


@settings(max_examples=200)
@given(
    st.text(max_size=300),
    st.lists(st.tuples(st.text(max_size=20), st.text(max_size=200)), max_size=3),
    st.text(max_size=100),
)
def test_the_message_bound_holds(
    content: str, calls: list[tuple[str, str]], reasoning: str
) -> None:
    msg = Message(
        Role.ASSISTANT,
        content,
        tool_calls=[ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(calls)],
        reasoning=reasoning,
    )
    assert estimate_message(msg) <= upper_bound_message(msg)


@settings(max_examples=150)
@given(
    st.lists(st.text(alphabet=_ALPHABET, max_size=200), min_size=1, max_size=4),
    st.lists(st.text(alphabet=_ALPHABET, max_size=300), max_size=4),
    st.integers(min_value=1, max_value=50_000),
)
def test_the_anchored_bound_holds_at_any_ratio(
    sent_texts: list[str], tail_texts: list[str], reported: int
) -> None:
    """After a usage report, the counter's bound of an extending request is never
    below its estimate, whatever ratio the report implies."""
    counter = TokenCounter()
    sent = [Message(Role.USER, t) for t in sent_texts]
    counter.note_sent("system", sent, [])
    counter.observe(reported)
    request = [*sent, *(Message(Role.TOOL, t, tool_call_id="c") for t in tail_texts)]
    bound = counter.upper_bound(request)
    assert bound is not None
    assert counter.estimate("system", request, []) <= bound


def test_a_message_read_back_equal_still_extends_the_anchor() -> None:
    """The user message a request carried comes back from the transcript as an equal
    copy: the next request still counts from the report, not from scratch."""
    counter = TokenCounter()
    sent = [Message(Role.USER, "fix add() in calc.py")]
    counter.note_sent("system prompt " * 50, sent, [])
    counter.observe(7)  # far below any raw estimate of that system prompt
    again = [Message(Role.USER, "fix add() in calc.py"), Message(Role.ASSISTANT, "done")]
    assert again[0] is not sent[0]
    assert counter.upper_bound(again) is not None
    estimate = counter.estimate("system prompt " * 50, again, [])
    assert estimate < estimate_request("system prompt " * 50, again, [])
    assert counter.upper_bound([Message(Role.USER, "another question")]) is None


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=3), st.sampled_from(["a", "é 1", "的", "x_y.z ", "😀"]))
def test_the_admission_bound_holds_for_huge_sampled_texts(scale: int, unit: str) -> None:
    """Admission compares a cheap bound first; the sampled estimate of a huge text
    (what admission falls back to) must never be above it."""
    from reasonix.agent.tokens import message_bound, message_size

    text = unit * (70_000 * (scale + 1) // len(unit))
    message = Message(Role.USER, text)
    assert message_size(message) <= message_bound(message)
