"""A resumed long session holds what resume needs, not the transcript (issue 38, item 1).

Counted, never timed: which records stay parsed in memory, how many are read
back from the file while the agent is built and runs a turn, and that what is
read back is the record as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_scripted import ScriptedProvider, text
from long_session import write_long_session

import reasonix.provider as provider_registry
from reasonix.agent.compaction import parse_checkpoint
from reasonix.agent.context import ContextManager
from reasonix.agent.lazy_records import LAZY_BYTES, LazyRecord, loads_line
from reasonix.agent.loop import Agent
from reasonix.agent.session import Session, copy_session, open_records, read_records
from reasonix.cancel import Cancel
from reasonix.tool import Registry, ToolContext


@pytest.fixture
def long_path(tmp_path: Path, workspace: Path) -> Path:
    """120 turns of ~20 kB of tool output (~2.5 MB), two compactions, 12 turns after the last."""
    return write_long_session(workspace, 120, root=tmp_path / "long")


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_resume_keeps_only_small_records_parsed(long_path: Path) -> None:
    held = open_records(long_path)
    lines = _lines(long_path)
    assert len(held) == len(lines) == len(read_records(long_path))
    big = [i for i, line in enumerate(lines) if len(line) > LAZY_BYTES]
    lazy = [i for i, rec in enumerate(held) if isinstance(rec, LazyRecord)]
    # every large message record stays in the file (here: all large lines are messages
    # but the checkpoints' summaries, which are kept)
    kinds = {json.loads(lines[i])["type"] for i in big if i not in lazy}
    assert lazy and set(lazy) <= set(big) and kinds <= {"checkpoint"}
    parsed = sum(len(lines[i]) for i in range(len(lines)) if i not in set(lazy))
    size = long_path.stat().st_size
    assert parsed < size // 10, (parsed, size)  # what is held parsed is a small part


def test_lazy_records_are_the_records_they_stand_for(long_path: Path) -> None:
    full = read_records(long_path)
    held = open_records(long_path)
    checked = 0
    for a, b in zip(held, full, strict=True):
        if not isinstance(a, LazyRecord):
            continue
        checked += 1
        assert a == b and b == a and (a != b) is False
        assert dict(a) == b and {**a} == b and a.copy() == b
        assert a["type"] == "message" and a.get("message") == b["message"]
        assert (
            list(a) == list(b) and len(a) == len(b) and ("raw_content" in a) == ("raw_content" in b)
        )
        dump = json.dumps(a, ensure_ascii=False, separators=(",", ":"))
        assert dump == json.dumps(b, ensure_ascii=False, separators=(",", ":"))
    assert checked > 100


def test_the_message_log_is_the_conversation(long_path: Path) -> None:
    with Session.open(long_path) as session:
        log = session.message_log()
        messages = session.messages()
        assert len(log) == len(messages) and list(log) == messages and log == messages
        assert log[-1] == messages[-1] and log[3:9] == messages[3:9]
        users = [m.content for m in messages if m.role.value == "user"]
        assert list(log.contents("user")) == users


def test_a_copy_of_a_resumed_session_writes_the_same_lines(
    long_path: Path, workspace: Path
) -> None:
    with Session.open(long_path) as source:
        copied = copy_session(source.records(), workspace)
    copied.close()
    plain = copy_session(read_records(long_path), workspace)
    plain.close()
    assert _lines(copied.path)[1:] == _lines(plain.path)[1:]  # the meta line holds the new id
    assert len(_lines(copied.path)) == len(_lines(long_path))


def _tail_start(records: list[dict[str, object]]) -> int:
    covers = -1
    for rec in records:
        cp = parse_checkpoint(rec)
        if cp is not None:
            covers = cp.covers_through
    return covers + 1


def test_resume_reads_back_only_what_the_last_checkpoint_left(
    long_path: Path, workspace: Path
) -> None:
    """Building the context and the agent and running a turn reads back only records
    after the last checkpoint: the agent's conversation is built on access."""
    full = read_records(long_path)
    tail = [r for r in full[_tail_start(full) :] if r.get("type") == "message"]
    with Session.open(long_path) as session:
        records = list(session.records())
        lazy = [r for r in records if isinstance(r, LazyRecord)]
        source = lazy[0].source
        prov = provider_registry.new("scripted", {"steps": [text("carrying on")]})
        assert isinstance(prov, ScriptedProvider)
        ctx = ContextManager(prov, "m", 1_000_000, 0.8, "sys", [], session)
        agent = Agent(prov, Registry(), session, model="m", system="sys",
                      tool_ctx=ToolContext(workspace=workspace), context=ctx)  # fmt: skip
        for _event in agent.run("carry on", Cancel()):
            pass
        assert prov.requests[-1].messages[-1].content == "carry on"
        assert 0 < source.reads <= len(tail) < len(lazy), (source.reads, len(tail), len(lazy))


def test_a_changed_transcript_is_an_error_not_a_wrong_record(long_path: Path) -> None:
    from reasonix.errors import SessionError

    held = open_records(long_path)
    lazy = next(r for r in held if isinstance(r, LazyRecord))
    data = bytearray(long_path.read_bytes())
    start = data.index(b"\n", 0) + 1
    data[start:start] = b"x"  # every later line moves by one byte
    long_path.write_bytes(bytes(data))
    with pytest.raises(SessionError, match="changed under the session"):
        lazy.get("message")


@pytest.mark.parametrize(
    "line",
    [b'{"a":1}\n', b'{"a":1} \r\n', b'{"a":"\\ud800"}\n', b'{"a" :[1, 2.5]}\n', b"[1]\n", b" {}\n"],
)
def test_a_line_parses_as_json_loads_parses_it(line: bytes) -> None:
    assert loads_line(line) == json.loads(line)


@pytest.mark.parametrize(
    "line", [b'{"a":1}x\n', b'{"a":1}{"b":2}\n', b'{"a":1}\x0c\n', b'{"a":"\xff"}\n']
)
def test_a_line_json_loads_refuses_is_refused(line: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(line)
    with pytest.raises(ValueError):
        loads_line(line)


def test_history_over_a_resumed_session_finds_and_shows_the_same(
    long_path: Path, workspace: Path
) -> None:
    """The ``history`` tool over the records a resumed session holds: the same hits and
    snippets as over parsed records, and a process loading the kept index reads back
    only the hits it shows (the index keeps no text of a message left on disk)."""
    from reasonix.agent.memory.history import HistorySource, history_tool

    args = {"operation": "search", "query": "checkpoint parser offset", "scope": "session",
            "limit": 8}  # fmt: skip
    shown: dict[str, list[str]] = {}
    for reader in (read_records, open_records):
        long_path.with_suffix(".hidx").unlink(missing_ok=True)
        records = reader(long_path)

        def run(records: list[dict[str, Any]] = records) -> str:
            source = HistorySource(lambda: (long_path.stem, records), live_dir=long_path.parent)
            source.save_every = 1  # keep the index of this small session beside it
            return str(history_tool(source).fn(args, ToolContext(workspace=workspace)))

        built = run()  # builds the index and keeps it beside the transcript
        lazy = [r for r in records if isinstance(r, LazyRecord)]
        before = lazy[0].source.reads if lazy else 0
        loaded = run()  # a new source: loads the kept index
        if lazy:
            assert lazy[0].source.reads - before <= 8  # the limit
        shown[reader.__name__] = [built, loaded]
    assert shown["open_records"] == shown["read_records"]
    assert shown["read_records"][0] == shown["read_records"][1] != "(no matches)"


def test_no_garbage_collection_runs_while_a_transcript_is_parsed(
    long_path: Path, tmp_path: Path
) -> None:
    """Every parsed record is kept, so a collection while reading finds nothing: counted
    with the collector's own callbacks (at most the one that runs as it is switched back
    on, where a read of these 6,000 small records would otherwise run dozens)."""
    import gc

    lines = _lines(long_path)
    small = [line for line in lines if len(line) < 400 and b'"type":"message"' in line]
    path = tmp_path / "many.jsonl"
    path.write_bytes(lines[0] + b"".join(small[i % len(small)] for i in range(6000)))
    passes: list[str] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            passes.append(phase)

    assert gc.isenabled() and small
    gc.callbacks.append(note)
    try:
        gc.collect()  # the count starts from an empty first generation
        passes.clear()
        held = open_records(path)
        during = len(passes)
    finally:
        gc.callbacks.remove(note)
    assert len(held) == 6001
    assert during <= 1
    assert gc.isenabled()


def test_a_paused_collector_stays_as_the_caller_left_it(long_path: Path) -> None:
    import gc

    gc.disable()
    try:
        open_records(long_path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_records_of_a_few_types_are_found_without_a_walk_over_the_rest() -> None:
    """The Coordinator's plan and goal, read on every resume, touch only their records."""
    from reasonix.agent.lazy_records import RecordView, of_types

    class Untouchable(dict[str, Any]):
        def get(self, *_a: object, **_k: object) -> Any:
            raise AssertionError("a record of another type was read")

        def __getitem__(self, key: str) -> Any:
            raise AssertionError("a record of another type was read")

    items: list[dict[str, Any]] = [Untouchable(type="message") for _ in range(50)]
    items[7] = {"type": "plan", "plan": {"id": "a"}}
    items[30] = {"type": "plan_status", "id": "a", "status": "approved"}
    items[41] = {"type": "plan", "plan": {"id": "b"}}
    kinds = {"message": [i for i in range(50) if i not in (7, 30, 41)],
             "plan": [7, 41], "plan_status": [30]}  # fmt: skip
    view = RecordView(items, 42, kinds)  # a snapshot taken before record 42
    found = list(of_types(view, ("plan", "plan_status")))
    assert found == [items[7], items[30], items[41]]
    assert list(of_types(RecordView(items, 41, kinds), ("plan",))) == [items[7]]
    plain = [{"type": "goal", "n": 1}, {"type": "message"}, {"type": "goal", "n": 2}]
    assert list(of_types(plain, ("goal",))) == [plain[0], plain[2]]  # any other sequence
