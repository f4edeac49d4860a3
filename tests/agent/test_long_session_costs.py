"""Per-turn costs do not grow with the session (issue 38, item 1), counted, never timed.

A turn at the end of a long session must cost what a turn of a short one
costs: no re-reading of the transcript file and no walk over every record.
Two counts per turn, taken with the real Session, Agent and ContextManager:

* bytes of the transcript opened for reading (an audit hook sees every
  ``open`` of the file, and counts the file's size at that moment);
* records visited: the session's record list counts each element handed out.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, SupportsIndex

import pytest
from agent_scripted import ScriptedProvider, calls, text
from long_session import write_long_session

import reasonix.provider as provider_registry
from reasonix.agent.context import ContextManager
from reasonix.agent.lease import Lease
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session, open_records, read_records
from reasonix.cancel import Cancel
from reasonix.tool import Registry, ToolContext


class _Reads:
    """Bytes of watched files opened for reading, from an audit hook (hooks stay for life)."""

    watched: set[str] = set()
    bytes = 0

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not cls.watched or not isinstance(args[0], (str, bytes, Path)):
            return
        path = os.fsdecode(args[0]) if not isinstance(args[0], Path) else str(args[0])
        if path not in cls.watched:
            return
        mode, flags = args[1], args[2]
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            mode is None and flags & os.O_ACCMODE != os.O_RDONLY
        )
        if not writing:
            cls.bytes += os.stat(path).st_size


sys.addaudithook(_Reads.hook)


class _CountingList(list[dict[str, Any]]):
    """A record list that counts the elements it hands out (iteration and indexing)."""

    visits = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for item in super().__iter__():
            _CountingList.visits += 1
            yield item

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for item in super().__reversed__():
            _CountingList.visits += 1
            yield item

    def __getitem__(self, index: Any) -> Any:
        got = super().__getitem__(index)
        _CountingList.visits += len(got) if isinstance(index, slice) else 1
        return got

    def pop(self, index: SupportsIndex = -1) -> dict[str, Any]:  # pragma: no cover - unused
        raise AssertionError("a transcript is append-only")


def _ours(frame: Any) -> bool:
    return frame is not None and str(frame.f_globals.get("__name__", "")).startswith("reasonix.")


class _Calls:
    """Calls reasonix code makes to reasonix functions while counting (a profile function).

    Only those: the scripted provider deep-copies each request it is sent (the
    test's cost, not the agent's: ``copy`` calls the dataclasses' ``__new__``),
    and C functions are not counted.
    """

    count = 0

    @classmethod
    def profile(cls, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and _ours(frame) and _ours(frame.f_back):
            cls.count += 1


def _per_turn_costs(
    path: Path, workspace: Path, turns: int = 4, reader: Callable[..., Any] = read_records
) -> list[tuple[int, int, int]]:
    """(transcript bytes opened for reading, records visited, Python calls) per turn.

    ``reader`` makes the session's records: :func:`read_records` (all parsed) or
    :func:`open_records` (as :meth:`Session.open` holds them, large ones in the file).
    """
    lease = Lease(path.with_suffix(".lease"))
    lease.acquire(path.stem)
    session = Session(path, _CountingList(reader(path)), lease)
    steps = []
    for _ in range(turns):  # a tool round and an answer per turn
        steps += [calls(("missing_tool", "{}")), text("done")]
    prov = provider_registry.new("scripted", {"steps": steps})
    assert isinstance(prov, ScriptedProvider)
    ctx = ContextManager(prov, "m", 1_000_000, 0.8, "sys", [], session)
    agent = Agent(prov, Registry(), session, model="m", system="sys",
                  tool_ctx=ToolContext(workspace=workspace), context=ctx)  # fmt: skip
    out = []
    _Reads.watched = {str(path), str(path.resolve())}
    try:
        for i in range(turns):
            _Reads.bytes, _CountingList.visits, _Calls.count = 0, 0, 0
            sys.setprofile(_Calls.profile)
            try:
                for _event in agent.run(f"next step {i}", Cancel()):
                    pass
            finally:
                sys.setprofile(None)
            out.append((_Reads.bytes, _CountingList.visits, _Calls.count))
    finally:
        _Reads.watched = set()
        session.close()
    return out


@pytest.mark.parametrize("reader", [read_records, open_records])
@pytest.mark.parametrize("long_turns", [300])
def test_a_turn_late_in_a_long_session_costs_what_an_early_one_does(
    tmp_path: Path, workspace: Path, long_turns: int, reader: Callable[..., Any]
) -> None:
    # 9 kB of tool output a turn: one result in three is long enough to be a lazy
    # record (open_records) and to be pruned
    short = write_long_session(workspace, 10, bytes_per_turn=9000, root=tmp_path / "short")
    long = write_long_session(workspace, long_turns, bytes_per_turn=9000, root=tmp_path / "long")
    assert len(read_records(long)) > 10 * len(read_records(short))  # the sizes differ a lot
    early = _per_turn_costs(short, workspace, turns=5, reader=reader)
    late = _per_turn_costs(long, workspace, turns=5, reader=reader)
    # The transcript is never read back during a turn, and each turn visits the
    # same number of records however many came before it.
    assert [b for b, _, _ in late] == [0] * len(late)
    assert [c[:2] for c in late] == [c[:2] for c in early], (early, late)
    # Nor does a turn walk the conversation the context holds (the long session's holds
    # more messages): once the first turns made the one estimate of the whole request a
    # resumed session needs, a turn makes the calls it makes in the short session (give
    # or take the few a text's words cost to estimate).
    for (_, _, short_calls), (_, _, long_calls) in zip(early[2:], late[2:], strict=True):
        assert long_calls <= short_calls + 16, (early, late)


def test_the_title_is_known_without_a_walk(tmp_path: Path, workspace: Path) -> None:
    path = write_long_session(workspace, 30, bytes_per_turn=500, root=tmp_path)
    lease = Lease(path.with_suffix(".lease"))
    lease.acquire(path.stem)
    session = Session(path, _CountingList(read_records(path)), lease)
    try:
        _CountingList.visits = 0
        assert session.title.startswith("turn 1: fix the")
        assert len(session.records()) == len(session)
        assert _CountingList.visits == 0
        session.set_title("renamed")
        assert session.title == "renamed"
    finally:
        session.close()


def test_a_record_with_an_unhashable_role_is_damaged_not_fatal(tmp_path: Path) -> None:
    """The record check runs on every record of a resume; a list as a role is one damaged
    record (it used to raise TypeError from the role-set lookup and make the session
    unloadable)."""
    path = tmp_path / "s.jsonl"
    good = {"type": "message", "message": {"role": "user", "content": "hi"}}
    bad = {"type": "message", "message": {"role": ["user"], "content": "hi"}}
    path.write_text("\n".join(json.dumps(r) for r in (good, bad, good)) + "\n")
    damaged: list[str] = []
    records = read_records(path, damaged)
    assert [r["type"] for r in records] == ["message", "damaged", "message"]
    assert damaged == ["line 2: unknown message role ['user']"]
