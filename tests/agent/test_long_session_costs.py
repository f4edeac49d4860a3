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
from collections.abc import Iterator
from pathlib import Path
from typing import Any, SupportsIndex

import pytest
from agent_scripted import ScriptedProvider, calls, text
from long_session import write_long_session

import reasonix.provider as provider_registry
from reasonix.agent.context import ContextManager
from reasonix.agent.lease import Lease
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session, read_records
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


def _per_turn_costs(path: Path, workspace: Path, turns: int = 4) -> list[tuple[int, int]]:
    """(transcript bytes opened for reading, records visited) for each of ``turns`` turns."""
    lease = Lease(path.with_suffix(".lease"))
    lease.acquire(path.stem)
    session = Session(path, _CountingList(read_records(path)), lease)
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
            _Reads.bytes, _CountingList.visits = 0, 0
            for _event in agent.run(f"next step {i}", Cancel()):
                pass
            out.append((_Reads.bytes, _CountingList.visits))
    finally:
        _Reads.watched = set()
        session.close()
    return out


@pytest.mark.parametrize("long_turns", [300])
def test_a_turn_late_in_a_long_session_costs_what_an_early_one_does(
    tmp_path: Path, workspace: Path, long_turns: int
) -> None:
    short = write_long_session(workspace, 10, bytes_per_turn=2000, root=tmp_path / "short")
    long = write_long_session(workspace, long_turns, bytes_per_turn=2000, root=tmp_path / "long")
    assert len(read_records(long)) > 10 * len(read_records(short))  # the sizes differ a lot
    early = _per_turn_costs(short, workspace)
    late = _per_turn_costs(long, workspace)
    # The transcript is never read back during a turn, and each turn visits the
    # same number of records however many came before it.
    assert [b for b, _ in late] == [0] * len(late)
    assert late == early, (early, late)


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
