"""Table tests of the I/O-free compaction planner (STYLE h11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.agent import compaction as cp
from reasonix.agent.session import read_records
from reasonix.provider.types import Message, Role, ToolCall

U, A, T = Role.USER, Role.ASSISTANT, Role.TOOL


@pytest.mark.parametrize(
    ("window", "ratio", "expected"),
    [
        (1_000_000, 0.80, 800_000),
        (128_000, 0.70, 89_600),
        (8000, 0.85, 6800),
        (8001, 0.65, 5200),  # floor
        (0, 0.80, 0),  # unknown window: disabled (PROV-10)
    ],
)
def test_trigger_formula(window: int, ratio: float, expected: int) -> None:
    assert cp.trigger_tokens(window, ratio) == expected


def test_keep_budget_is_sixteen_percent_of_the_window() -> None:
    assert cp.keep_budget(8000) == 1280
    assert cp.keep_budget(1_000_000) == 160_000


@pytest.mark.parametrize(
    ("text", "pruned"),
    [
        ("a" * 8192, False),
        ("a" * 8193, True),
        ("😀" * 8192, False),
        ("😀" * 9000, True),
    ],
)
def test_prune_threshold_counts_code_points(text: str, pruned: bool) -> None:
    assert (cp.prune_text(text) is not None) == pruned


def test_prune_keeps_exact_head_and_tail_without_splitting_characters() -> None:
    text = "".join(chr(0x1F600 + i % 50) for i in range(9000))  # astral: 4 UTF-8 bytes each
    out = cp.prune_text(text)
    assert out is not None
    head, marker, tail = out.split("\n")
    assert marker == cp.PRUNE_MARKER
    assert head == text[:4096] and tail == text[-1024:]
    out.encode("utf-8")  # no lone surrogates


# (roles, sizes, budget) -> cut
CUT_CASES: list[tuple[list[Role], list[int], int, int]] = [
    ([U, A, U, A], [10, 10, 10, 10], 20, 2),  # exactly the last two fit
    ([U, A, U, A], [10, 10, 10, 10], 25, 2),
    ([U, A, U, A], [10, 10, 10, 10], 100, 0),  # everything fits: nothing to summarise
    ([U, A, T, T, A], [10, 10, 10, 10, 10], 25, 4),  # would start on a tool: moves later
    ([U, A, T, T, A], [10, 10, 10, 10, 10], 35, 4),  # still inside the group
    ([U, A, T, T, A], [10, 10, 10, 10, 10], 40, 1),  # whole group fits with its call
    ([U, A, T], [10, 10, 99], 50, 3),  # newest group alone too big: summarise all
    ([], [], 10, 0),
]


@pytest.mark.parametrize(("roles", "sizes", "budget", "cut"), CUT_CASES)
def test_select_cut_never_splits_a_tool_group(
    roles: list[Role], sizes: list[int], budget: int, cut: int
) -> None:
    got = cp.select_cut(roles, sizes, budget)
    assert got == cut
    assert got == len(roles) or roles[got] is not Role.TOOL


A_ = cp.Action
# tokens, target, hard, done, max, blocked -> action
ACTION_CASES = [
    (100, 200, 300, 0, 2, False, A_.SEND),
    (200, 200, 300, 0, 2, False, A_.SUMMARISE),  # at the trigger counts
    (250, 200, 300, 1, 2, False, A_.SUMMARISE),
    (250, 200, 300, 2, 2, False, A_.SEND_OVER),  # two done: no third
    (300, 200, 300, 2, 2, False, A_.REQUIRED),
    (250, 200, 300, 0, 2, True, A_.SEND_OVER),  # blocked generation pays nothing
    (350, 200, 300, 0, 2, True, A_.REQUIRED),
    (350, 200, 0, 0, 2, True, A_.SEND_OVER),  # unknown hard limit
]


@pytest.mark.parametrize(
    ("tokens", "target", "hard", "done", "most", "blocked", "want"), ACTION_CASES
)
def test_next_action_table(
    tokens: int, target: int, hard: int, done: int, most: int, blocked: bool, want: cp.Action
) -> None:
    got = cp.next_action(
        tokens,
        target=target,
        hard_limit=hard,
        summaries_done=done,
        max_summaries=most,
        blocked=blocked,
    )
    assert got is want


def msg(role: Role, content: str, **kw: Any) -> dict[str, Any]:
    return {"type": "message", "message": Message(role, content, **kw).to_dict()}


def transcript() -> list[dict[str, Any]]:
    call = ToolCall("c1", "read", "{}")
    return [
        {"type": "meta", "id": "s"},
        msg(U, "first question"),  # 1
        msg(A, "", tool_calls=[call]),  # 2
        {**msg(T, "x" * 9000, tool_call_id="c1", name="read"), "raw_content": "y" * 90000},  # 3
        msg(A, "first answer"),  # 4
        msg(U, "second question"),  # 5
    ]


def test_projection_without_checkpoint_is_the_canonical_messages() -> None:
    recs = transcript()
    msgs = cp.project(recs)
    assert [m.content[:5] for m in msgs] == ["first", "", "xxxxx", "first", "secon"]
    assert all("y" not in m.content for m in msgs)  # raw_content never projected


def test_prune_checkpoint_applies_to_listed_results_only() -> None:
    recs = transcript()
    recs.append(cp.checkpoint_record(cp.Checkpoint(0, -1, "", frozenset({3}))))
    msgs = cp.project(recs)
    assert cp.PRUNE_MARKER in msgs[2].content and len(msgs) == 5
    assert recs[3]["message"]["content"] == "x" * 9000  # canonical untouched


def test_summary_checkpoint_replaces_covered_records() -> None:
    recs = transcript()
    recs.append(cp.checkpoint_record(cp.Checkpoint(1, 3, "DIGEST", frozenset())))
    recs.append(msg(A, "after the checkpoint"))
    msgs = cp.project(recs)
    assert msgs[0].role is Role.USER and msgs[0].content.endswith("DIGEST")
    assert [m.content for m in msgs[1:]] == [
        "first answer",
        "second question",
        "after the checkpoint",
    ]


def test_invalid_checkpoint_records_are_ignored() -> None:
    recs = transcript()
    good = cp.checkpoint_record(cp.Checkpoint(1, 3, "GOOD", frozenset()))
    recs.append(good)
    for bad in (
        {**good, "generation": "2"},
        {**good, "covers_through": True},
        {**good, "summary": None},
        {**good, "pruned": {"records": ["x"]}},
    ):
        recs.append(bad)
    assert cp.project(recs)[0].content.endswith("GOOD")


def test_failure_records_block_only_their_generation() -> None:
    recs = transcript()
    recs.append(cp.failure_record(0, "failed", "timeout"))
    view = cp.load_projection(recs)
    assert view.blocked
    recs.append(cp.checkpoint_record(cp.Checkpoint(1, 3, "D", frozenset())))
    assert not cp.load_projection(recs).blocked


def test_extend_keeps_message_objects_and_asks_reload_on_checkpoint() -> None:
    recs = transcript()
    view = cp.load_projection(recs[:3])
    first = view.entries[0].message
    assert view.extend(recs)
    assert view.entries[0].message is first and len(view.entries) == 5
    recs.append(cp.checkpoint_record(cp.Checkpoint(1, 3, "D", frozenset())))
    assert not view.extend(recs)


def test_kill_during_checkpoint_write_gives_old_or_new_never_a_mix(tmp_path: Path) -> None:
    """Truncate the transcript at every byte of the new checkpoint line."""
    recs = transcript()
    recs.append(cp.checkpoint_record(cp.Checkpoint(1, 2, "OLD digest", frozenset({3}))))
    recs.append(msg(A, "more"))
    path = tmp_path / "s.jsonl"
    base = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).encode()
    new = cp.checkpoint_record(cp.Checkpoint(2, 5, "NEW digest 漢字", frozenset()))
    line = (json.dumps(new, ensure_ascii=False) + "\n").encode()
    old_view = [m.to_dict() for m in cp.project(recs)]
    new_view = [m.to_dict() for m in cp.project([*recs, new])]
    assert old_view != new_view
    for cut in range(len(line) + 1):
        path.write_bytes(base + line[:cut])
        got = [m.to_dict() for m in cp.project(read_records(path))]
        assert got == (new_view if cut == len(line) else old_view), cut


_roles = st.lists(st.sampled_from([U, A, T]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(roles=_roles, data=st.data())
def test_select_cut_properties(roles: list[Role], data: st.DataObject) -> None:
    sizes = data.draw(st.lists(st.integers(1, 50), min_size=len(roles), max_size=len(roles)))
    budget = data.draw(st.integers(0, 400))
    cut = cp.select_cut(roles, sizes, budget)
    assert 0 <= cut <= len(roles)
    assert sum(sizes[cut:]) <= budget  # the kept tail never exceeds the budget
    assert cut == len(roles) or roles[cut] is not Role.TOOL  # never starts inside a group


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=0, max_size=12000))
def test_prune_properties(text: str) -> None:
    out = cp.prune_text(text)
    if len(text) <= cp.PRUNE_THRESHOLD:
        assert out is None
    else:
        assert out is not None
        assert out.startswith(text[: cp.PRUNE_HEAD]) and out.endswith(text[-cp.PRUNE_TAIL :])
        assert len(out) == cp.PRUNE_HEAD + cp.PRUNE_TAIL + len(cp.PRUNE_MARKER) + 2


def _group_messages() -> list[Message]:
    call = [ToolCall("c1", "bash", "{}")]
    return [
        Message(U, "digest"),
        Message(A, "", call),
        Message(T, "x" * 4000, tool_call_id="c1"),
        Message(A, "", [ToolCall("c2", "bash", "{}")]),
        Message(T, "y" * 4000, tool_call_id="c2"),
        Message(A, "", [ToolCall("c3", "bash", "{}")]),
        Message(T, "z" * 4000, tool_call_id="c3"),
    ]


def test_plan_prefix_sends_the_whole_prefix_unchanged_when_it_fits() -> None:
    from reasonix.agent.oversize import plan_prefix

    msgs = _group_messages()
    fitted = plan_prefix(msgs, [10, 10, 100, 10, 100, 10, 100], 400, pinned=1, needed=50)
    assert fitted.messages == msgs and fitted.covers == 7 and not fitted.changed


@pytest.mark.parametrize(("budget", "covers"), [(300, 5), (229, 3), (120, 3)])
def test_plan_prefix_shortens_on_a_whole_tool_call_group(budget: int, covers: int) -> None:
    from reasonix.agent.oversize import plan_prefix

    msgs = _group_messages()
    sizes = [10, 10, 100, 10, 100, 10, 100]
    fitted = plan_prefix(msgs, sizes, budget, pinned=1, needed=100)
    # Unchanged messages (the provider's cache serves them), never ending inside a group.
    assert fitted.covers == covers and fitted.messages == msgs[:covers]
    assert msgs[covers].role is A and fitted.tokens == sum(sizes[:covers]) <= budget


def test_plan_prefix_cuts_when_a_shorter_prefix_would_not_relieve_enough() -> None:
    from reasonix.agent.oversize import CUT_MARKER, plan_prefix

    msgs = _group_messages()
    sizes = [10, 10, 100, 10, 100, 10, 100]
    fitted = plan_prefix(msgs, sizes, 250, pinned=1, needed=290)
    assert fitted.covers == 7 and fitted.changed
    marker = CUT_MARKER.split("{n}")[1]
    assert any(marker in m.content for m in fitted.messages)
