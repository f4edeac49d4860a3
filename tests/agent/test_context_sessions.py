"""Scripted long sessions against the loopback OpenAI fake with a small window.

Each test drives a minimal turn loop (append → prepare → stream → append →
observe) over a real :class:`Session` transcript and a real provider pointed
at :class:`fakes.FakeServer`; assertions read the fake's recorded bodies.
``context_window`` is 8000 tokens, so the trigger is 6400 and the verbatim
tail 1280. Reported prompt tokens are 0 so the estimator stays uncalibrated
and each test can predict exactly when maintenance happens.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault, Turn

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent import compaction as cp
from reasonix.agent.context import ContextManager
from reasonix.agent.session import Session, read_records
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.config.paths import state_dir
from reasonix.errors import CompactionRequired, ProviderAPIError
from reasonix.provider.types import ChunkKind, Message, Request, Role, ToolCall, ToolSchema

WINDOW = 8000
SYSTEM = "stable system prompt"
TOOLS = [ToolSchema("read", "read a file", {"type": "object", "properties": {}})]
NO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 1,
    "cache_read_tokens": 0,
    "cache_write_tokens": 0,
    "reasoning_tokens": 0,
}


class Harness:
    """A fake server, a real provider, a real transcript and a context manager."""

    def __init__(self, srv: FakeServer, session: Session, **kw: Any) -> None:
        self.srv, self.session = srv, session
        cfg = ProviderConfig(name="fake", kind="openai", base_url=srv.url, models=["m"])
        cfg.api_key = "k"
        self.provider = provider_registry.new("openai", cfg)
        self.ctx = ContextManager(self.provider, "m", WINDOW, 0.80, SYSTEM, TOOLS, session, **kw)

    def send(self, messages: list[Message]) -> str:
        req = Request(model="m", messages=messages, system=SYSTEM, tools=TOOLS)
        text = []
        for chunk in self.provider.stream(req, Cancel()):
            if chunk.kind is ChunkKind.TEXT:
                text.append(chunk.text)
        return "".join(text)

    def turn(self, user: str, reply: str, *, summaries: list[Turn | Fault] = ()) -> str:  # type: ignore[assignment]
        """One user turn; ``summaries`` are queued before the ordinary answer."""
        self.session.append_message(Message(Role.USER, user))
        for step in summaries:
            self.srv.add(step)
        self.srv.add(Turn.text_only(reply, usage=NO_USAGE))
        answer = self.send(self.ctx.prepare(Cancel()))
        self.session.append_message(Message(Role.ASSISTANT, answer))
        return answer

    def tool_round(self, call_id: str, result: str) -> None:
        """An assistant tool call and its (large) result, appended canonically."""
        call = ToolCall(call_id, "read", "{}")
        self.session.append_message(Message(Role.ASSISTANT, "", [call]))
        self.session.append_message(
            Message(Role.TOOL, result[:32000], tool_call_id=call_id, name="read"),
            raw_content=result,
        )

    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.srv.requests]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with FakeServer("openai", []) as srv, Session.create(tmp_path / "ws") as session:
        yield Harness(srv, session)


def words(word: str, n: int) -> str:
    """About ``n`` tokens of text."""
    return " ".join([word] * n)


def is_summary(body: dict[str, Any]) -> bool:
    return body["messages"][-1]["content"] == cp.SUMMARY_INSTRUCTION


def dumped(items: list[Any]) -> list[str]:
    return [json.dumps(i, sort_keys=True) for i in items]


def assert_cache_aligned(bodies: list[dict[str, Any]]) -> int:
    """Each first summary request = previous ordinary request's prefix + one message."""
    checked = 0
    for i, body in enumerate(bodies):
        if not is_summary(body) or is_summary(bodies[i - 1]):
            continue
        prev = bodies[i - 1]
        head = body["messages"][:-1]
        assert dumped(head) == dumped(prev["messages"][: len(head)])
        assert json.dumps(body["tools"]) == json.dumps(prev["tools"])
        assert body["messages"][0] == {"role": "system", "content": SYSTEM}
        # D9's cap, clipped to the room this small window leaves after the prompt.
        assert 1024 <= body["max_tokens"] <= cp.SUMMARY_MAX_TOKENS
        checked += 1
    return checked


def test_below_trigger_writes_nothing_and_stays_append_only(harness: Harness) -> None:
    for i in range(4):
        harness.turn(words("alpha", 300) + f" q{i}", "short answer")
    kinds = {r["type"] for r in harness.session.records()}
    assert cp.CHECKPOINT not in kinds and cp.COMPACTION not in kinds
    bodies = harness.bodies()
    for prev, cur in itertools.pairwise(bodies):
        assert dumped(cur["messages"][: len(prev["messages"])]) == dumped(prev["messages"])


def test_prune_only_relief_makes_no_summary_call(harness: Harness) -> None:
    harness.turn("read the big file", "reading")
    big = "".join(f"line {i:05d} of the file\n" for i in range(2000))  # ~50 KB raw
    harness.tool_round("c1", big)
    canonical_before = [dict(r) for r in harness.session.records()]
    assert harness.ctx.estimate() >= harness.ctx.trigger
    harness.srv.add(Turn.text_only("done", usage=NO_USAGE))
    harness.send(harness.ctx.prepare(Cancel()))
    result = harness.ctx.last_result
    assert result is not None and result.pruned == 1 and result.summaries == 0
    bodies = harness.bodies()
    assert not any(is_summary(b) for b in bodies)
    tool_msg = bodies[-1]["messages"][-1]
    assert tool_msg["role"] == "tool"
    content = tool_msg["content"]
    assert f"\n{cp.PRUNE_MARKER}\n" in content
    assert len(content) == cp.PRUNE_HEAD + cp.PRUNE_TAIL + len(cp.PRUNE_MARKER) + 2
    assert big[32000:] not in json.dumps(bodies)  # RawContent never leaves the machine
    records = harness.session.records()
    assert records[: len(canonical_before)] == canonical_before  # canonical untouched
    assert records[-1]["type"] == cp.CHECKPOINT and records[-1]["summary"] == ""


def test_one_summary_is_cache_aligned_and_replaces_the_prefix(harness: Harness) -> None:
    summaries = 0
    for i in range(14):
        steps: list[Turn | Fault] = []
        if harness_would_trigger(harness, words("alpha", 500)):
            steps = [Turn.text_only(f"SUMMARY {i}: the user asked about alpha.", usage=NO_USAGE)]
            summaries += 1
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300), summaries=steps)
        if summaries:
            break
    assert summaries == 1
    bodies = harness.bodies()
    assert sum(is_summary(b) for b in bodies) == 1
    assert assert_cache_aligned(bodies) == 1
    last = bodies[-1]["messages"]
    assert last[1]["role"] == "user" and "SUMMARY" in last[1]["content"]
    assert harness.ctx.generation == 1
    cps = [r for r in harness.session.records() if r["type"] == cp.CHECKPOINT]
    assert len(cps) == 1 and cps[0]["summary"].startswith("SUMMARY")
    # The verbatim tail fits the 16 % budget and starts on a whole message.
    kept = [m for m in last[2:]]
    assert kept and kept[-1]["content"].endswith(f"q{i}")


def harness_would_trigger(h: Harness, user_text: str) -> bool:
    """Whether appending ``user_text`` would put the next request at/over the trigger."""
    from reasonix.agent.tokens import estimate_message

    return (
        h.ctx.estimate() + estimate_message(Message(Role.USER, user_text + " q00")) >= h.ctx.trigger
    )


def test_later_threshold_merges_previous_digest(harness: Harness) -> None:
    seen = 0
    snapshots: list[bytes] = []
    for i in range(40):
        snapshots.append(harness.session.path.read_bytes())
        steps: list[Turn | Fault] = []
        if harness_would_trigger(harness, words("alpha", 500)):
            seen += 1
            steps = [Turn.text_only(f"DIGEST{seen} covers up to q{i}", usage=NO_USAGE)]
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300), summaries=steps)
        if seen == 2:
            break
    assert seen == 2 and harness.ctx.generation == 2
    bodies = harness.bodies()
    second = [b for b in bodies if is_summary(b)][1]
    # The second summary request starts with the first digest: merge, not multi-span.
    assert "DIGEST1" in second["messages"][1]["content"]
    assert assert_cache_aligned(bodies) == 2
    final = bodies[-1]["messages"]
    assert sum("Context checkpoint" in m.get("content", "") for m in final) == 1
    # Canonical history is complete: every question is still in the transcript.
    texts = [r["message"]["content"] for r in harness.session.records() if r["type"] == "message"]
    assert all(any(t.endswith(f"q{k}") for t in texts) for k in range(i + 1))
    # The canonical file only ever grew (CTX-13) and no prune archive appeared (CTX-17).
    final_bytes = harness.session.path.read_bytes()
    assert all(final_bytes.startswith(snap) for snap in snapshots)
    assert not (state_dir() / "archive").exists()


def test_two_summaries_when_the_first_is_not_enough(harness: Harness) -> None:
    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            long_summary = words("gamma", 5650)  # smaller than the prefix, still over trigger
            steps: list[Turn | Fault] = [
                Turn.text_only(long_summary, usage=NO_USAGE),
                Turn.text_only("SHORT digest", usage=NO_USAGE),
            ]
            harness.turn(words("alpha", 500) + f" q{i}", "fine", summaries=steps)
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    result = harness.ctx.last_result
    assert result is not None and result.summaries == 2
    bodies = harness.bodies()
    sums = [b for b in bodies if is_summary(b)]
    assert len(sums) == 2
    assert "gamma" in sums[1]["messages"][1]["content"]  # second one re-summarises the first
    assert "SHORT digest" in bodies[-1]["messages"][1]["content"]
    assert harness.ctx.generation == 2


def test_at_most_two_summaries_under_pressure(harness: Harness) -> None:
    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            steps: list[Turn | Fault] = [
                Turn.text_only(words("gamma", 5650), usage=NO_USAGE),
                Turn.text_only(words("delta", 5600), usage=NO_USAGE),
            ]
            harness.turn(words("alpha", 500) + f" q{i}", "fine", summaries=steps)
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    result = harness.ctx.last_result
    assert result is not None and result.summaries == 2 and not result.over_limit
    assert result.tokens_after >= harness.ctx.trigger  # still over: sent anyway, no third call
    assert sum(is_summary(b) for b in harness.bodies()) == 2


@pytest.mark.parametrize(
    "failure",
    [
        Fault.status(400, message="boom"),
        Turn.text_only("", usage=NO_USAGE),
        Turn.text_only("cut short", finish_reason="length", usage=NO_USAGE),
    ],
    ids=["error", "empty", "cap"],
)
def test_summary_failure_never_fabricates_a_digest(harness: Harness, failure: Turn | Fault) -> None:
    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            harness.turn(words("alpha", 500) + f" q{i}", "still answered", summaries=[failure])
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    records = harness.session.records()
    assert not any(r["type"] == cp.CHECKPOINT for r in records)
    notes = [r for r in records if r["type"] == cp.COMPACTION]
    assert len(notes) == 1 and notes[0]["status"] == "failed" and notes[0]["generation"] == 0
    assert harness.ctx.blocked
    # The same generation does not pay again automatically …
    before = len(harness.bodies())
    harness.turn("alpha beta one more", "ok")
    assert len(harness.bodies()) == before + 1 and not is_summary(harness.bodies()[-1])
    # … but a manual compact does, and a success unblocks.
    harness.srv.add(Turn.text_only("MANUAL digest", usage=NO_USAGE))
    result = harness.ctx.compact(Cancel())
    assert result.summaries == 1 and harness.ctx.generation == 1 and not harness.ctx.blocked


def test_summary_timeout_is_a_failure(tmp_path: Path) -> None:
    with FakeServer("openai", []) as srv, Session.create(tmp_path / "ws") as session:
        h = Harness(srv, session, summary_timeout=0.3)
        for i in range(40):
            if harness_would_trigger(h, words("alpha", 500)):
                slow = Turn.text_only("never finishes " * 50, delay=0.2, usage=NO_USAGE)
                h.turn(words("alpha", 500) + f" q{i}", "answered", summaries=[slow])
                break
            h.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
        note = [r for r in session.records() if r["type"] == cp.COMPACTION]
        assert note and "timed out" in note[0]["reason"]


def test_longer_candidate_is_rejected_and_blocks(harness: Harness) -> None:
    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            huge = Turn.text_only(words("omega", 9000), usage=NO_USAGE)
            harness.turn(words("alpha", 500) + f" q{i}", "ok", summaries=[huge])
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    notes = [r for r in harness.session.records() if r["type"] == cp.COMPACTION]
    assert notes and notes[0]["status"] == "blocked" and "not smaller" in notes[0]["reason"]
    assert not any(r["type"] == cp.CHECKPOINT for r in harness.session.records())


def test_overflow_error_gives_one_summary_and_one_retry(harness: Harness) -> None:
    for i in range(3):
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    harness.session.append_message(Message(Role.USER, "next question"))
    harness.srv.add(Fault.context_overflow())
    harness.srv.add(Turn.text_only("OVERFLOW digest", usage=NO_USAGE))
    harness.srv.add(Turn.text_only("answer after retry", usage=NO_USAGE))
    messages = harness.ctx.prepare(Cancel())
    with pytest.raises(ProviderAPIError) as err:
        harness.send(messages)
    assert err.value.is_context_overflow
    retry = harness.ctx.on_overflow(Cancel())
    assert harness.send(retry) == "answer after retry"
    bodies = harness.bodies()
    assert [is_summary(b) for b in bodies[-3:]] == [False, True, False]
    head, prev = bodies[-2]["messages"][:-1], bodies[-3]["messages"]
    # The refused request filled the window, so the summary request carries a
    # shorter prefix of it, byte for byte (the provider's cache still serves it),
    # ending on a whole message and leaving room for the summary itself.
    assert 2 <= len(head) < len(prev) and dumped(head) == dumped(prev[: len(head)])
    assert not any("left out of this summary" in m["content"] for m in head)
    assert "OVERFLOW digest" in bodies[-1]["messages"][1]["content"]
    # A second overflow for the same request is not retried again.
    with pytest.raises(CompactionRequired):
        harness.ctx.on_overflow(Cancel())


def test_overflow_with_nothing_to_do_is_compaction_required(harness: Harness) -> None:
    harness.session.append_message(Message(Role.USER, "tiny"))
    harness.ctx.prepare(Cancel())
    with pytest.raises(CompactionRequired):
        harness.ctx.on_overflow(Cancel())
    assert harness.bodies() == []  # no summary was paid for


def test_hard_limit_after_pruning_raises_compaction_required(harness: Harness) -> None:
    harness.turn("go", "ok")
    # CJK costs about a token per character: one result is pruned (9000 > 8192
    # code points) but stays large, the other is under the prune threshold.
    harness.tool_round("c1", "漢字" * 4500)
    harness.tool_round("c2", "仮名" * 4000)
    harness.srv.add(Fault.status(400, message="summary down"))
    with pytest.raises(CompactionRequired):
        harness.ctx.prepare(Cancel())
    result = harness.ctx.last_result
    assert result is not None and result.pruned == 1 and result.over_limit
    assert result.status == "failed"
    # … and the failed summary blocked the generation: no automatic retry next time.
    before = len(harness.bodies())
    with pytest.raises(CompactionRequired):
        harness.ctx.prepare(Cancel())
    assert len(harness.bodies()) == before


def test_restart_restores_the_checkpoint_without_a_summary_call(
    harness: Harness, tmp_path: Path
) -> None:
    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            steps: list[Turn | Fault] = [Turn.text_only("RESTORED digest", usage=NO_USAGE)]
            harness.turn(words("alpha", 500) + f" q{i}", "ok", summaries=steps)
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    before = harness.ctx.messages()
    reloaded = cp.project(read_records(harness.session.path))
    assert [m.to_dict() for m in reloaded] == [m.to_dict() for m in before]
    fresh = ContextManager(harness.provider, "m", WINDOW, 0.80, SYSTEM, TOOLS, harness.session)
    count = len(harness.bodies())
    assert fresh.generation == 1
    assert [m.to_dict() for m in fresh.messages()] == [m.to_dict() for m in before]
    assert len(harness.bodies()) == count


def test_zero_window_disables_automatic_maintenance(tmp_path: Path) -> None:
    with FakeServer("openai", []) as srv, Session.create(tmp_path / "ws") as session:
        h = Harness(srv, session)
        h.ctx = ContextManager(h.provider, "m", 0, 0.80, SYSTEM, TOOLS, session)
        h.tool_round("c1", words("zeta", 9000))
        h.srv.add(Turn.text_only("ok", usage=NO_USAGE))
        h.send(h.ctx.prepare(Cancel()))
        assert h.ctx.last_result is None
        assert not any(r["type"] == cp.CHECKPOINT for r in session.records())


def test_concurrent_prepares_run_one_transaction(harness: Harness) -> None:
    import threading

    for i in range(40):
        if harness_would_trigger(harness, words("alpha", 500)):
            break
        harness.turn(words("alpha", 500) + f" q{i}", words("beta", 300))
    harness.session.append_message(Message(Role.USER, words("alpha", 500) + " last"))
    harness.srv.add(Turn.text_only("ONE digest", delay=0.01, usage=NO_USAGE))
    results: list[list[Message]] = []
    threads = [
        threading.Thread(target=lambda: results.append(harness.ctx.prepare(Cancel())))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2
    assert sum(is_summary(b) for b in harness.bodies()) == 1
    cps = [r for r in harness.session.records() if r["type"] == cp.CHECKPOINT]
    assert len(cps) == 1
    assert [m.to_dict() for m in results[0]] == [m.to_dict() for m in results[1]]


def test_slash_compact_summarises_below_the_trigger(harness: Harness) -> None:
    from reasonix.agent.memory.commands import compact_command

    for i in range(4):
        harness.turn(words("alpha", 300) + f" q{i}", words("beta", 200))
    assert harness.ctx.estimate() < harness.ctx.trigger
    harness.srv.add(Turn.text_only("MANUAL digest of four turns", usage=NO_USAGE))
    text = compact_command(harness.ctx, Cancel())
    assert text.startswith("compacted:") and "generation 1" in text
    assert is_summary(harness.bodies()[-1])
    assert assert_cache_aligned(harness.bodies()) == 1


def test_overflow_relieved_by_pruning_retries_without_a_summary(harness: Harness) -> None:
    harness.turn("read it", "ok")
    harness.tool_round("c1", "".join(f"r{i:04d} " for i in range(1700)))  # 10.2k code points
    assert harness.ctx.estimate() < harness.ctx.trigger  # the estimate thought it fits
    harness.srv.add(Fault.context_overflow())
    harness.srv.add(Turn.text_only("fine now", usage=NO_USAGE))
    first = harness.ctx.prepare(Cancel())
    with pytest.raises(ProviderAPIError):
        harness.send(first)
    retry = harness.ctx.on_overflow(Cancel())
    result = harness.ctx.last_result
    assert result is not None and result.pruned == 1 and result.summaries == 0
    assert harness.send(retry) == "fine now"
    assert not any(is_summary(b) for b in harness.bodies())
    assert cp.PRUNE_MARKER in harness.bodies()[-1]["messages"][-1]["content"]
