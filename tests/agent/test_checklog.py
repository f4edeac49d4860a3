"""The turns read from the lines naming a session are the turns a parse of the whole log gives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.agent import checklog
from reasonix.agent.checklog import parse_record, parse_records, records_of, turns_of

# Ids that are prefixes of one another, need JSON escapes, or are not ASCII.
SESSIONS = ["s", "s1", "s10", 'a"b', "é-1", "x\\y"]

_record = st.one_of(
    st.fixed_dictionaries({"type": st.just("turn"), "session": st.sampled_from(SESSIONS),
                           "turn": st.integers(1, 6), "records": st.integers(0, 50),
                           "title": st.sampled_from(["t", "\"s1\" in a title", "s10"]),
                           "time": st.just(1.0)}),
    st.fixed_dictionaries({"type": st.sampled_from(["before", "after"]),
                           "session": st.sampled_from(SESSIONS), "turn": st.integers(1, 6),
                           "commit": st.sampled_from(["a" * 40, "b" * 40])}),
    st.fixed_dictionaries({"type": st.just("fork"), "session": st.sampled_from(SESSIONS),
                           "from": st.sampled_from(SESSIONS), "turn": st.integers(1, 6)}),
)  # fmt: skip
_line = st.one_of(
    _record.map(lambda r: json.dumps(r, ensure_ascii=False)),
    st.sampled_from(['{"type": "turn", "session": "s"', "not json", '["s"]', '{"session": "s"}']),
)


def _full(text: str, session: str) -> list[object]:
    return [vars(t) for t in turns_of(parse_records(text), session)]


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=40), st.sampled_from([*SESSIONS, "absent"]))
def test_turns_from_the_lines_naming_the_session_are_the_whole_logs(
    lines: list[str], session: str
) -> None:
    forked: set[str] = set()  # as in a real log: a session is copied once, at its start
    kept = []
    for line in lines:
        rec = parse_record(line)
        if rec is not None and rec["type"] == "fork":
            if rec["session"] in forked:
                continue
            forked.add(rec["session"])
        kept.append(line)
    text = "\n".join(kept) + "\n"
    ours = [vars(t) for t in turns_of(records_of(text, session), session)]
    assert ours == _full(text, session)


def test_a_session_copied_from_a_copy_inherits_through_both() -> None:
    rows = [
        {"type": "turn", "session": "a", "turn": 1, "records": 0, "title": "one", "time": 1.0},
        {"type": "turn", "session": "a", "turn": 2, "records": 4, "title": "two", "time": 2.0},
        {"type": "fork", "session": "b", "from": "a", "turn": 3},
        {"type": "turn", "session": "b", "turn": 3, "records": 8, "title": "b3", "time": 3.0},
        {"type": "fork", "session": "c", "from": "b", "turn": 3},
        {"type": "fork", "session": "a", "from": "c", "turn": 1},  # a cycle: it must end
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    assert [t.title for t in turns_of(records_of(text, "c"), "c")] == ["one", "two"]
    assert [t.title for t in turns_of(records_of(text, "b"), "b")] == ["one", "two", "b3"]
    assert records_of(text, "nobody") == []


def test_a_new_sessions_number_parses_no_line_of_a_long_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [{"type": "turn", "session": f"old-{i}", "turn": 1, "records": 0, "title": "t",
             "time": 1.0} for i in range(200)]  # fmt: skip
    text = "".join(json.dumps(r) + "\n" for r in rows)
    parsed: list[str] = []
    real = checklog.parse_record
    monkeypatch.setattr(checklog, "parse_record", lambda line: parsed.append(line) or real(line))
    assert records_of(text, "new-session") == []
    assert parsed == []
    assert len(records_of(text, "old-7")) == 1 and len(parsed) == 1
