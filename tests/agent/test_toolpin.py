"""A session sends the tool schemas it started with (agent/toolpin.py) and learns of
changed skills from a new message (agent/prompt.skills_update), issue 37."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonix.agent.prompt import skills_update, typed_text
from reasonix.agent.session import Session
from reasonix.agent.toolpin import TOOLS, pin_tools
from reasonix.provider.types import ToolSchema

PARAMS: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "number", "minimum": 0.1}}}


def _schemas(description: str, *extra: str) -> list[dict[str, Any]]:
    tools = [{"name": "count", "description": description, "parameters": PARAMS}]
    return tools + [{"name": n, "description": n, "parameters": {}} for n in extra]


def test_the_first_build_pins_and_a_later_one_sends_the_same_bytes(tmp_path: Path) -> None:
    with Session.create(tmp_path) as s:
        first, note = pin_tools(s, _schemas("Count things."))
        path = s.path
    assert note == "" and first == [ToolSchema("count", "Count things.", PARAMS)]
    # a newer build words the tool anew and adds one: the session keeps what it sent
    with Session.open(path) as again:
        later, note = pin_tools(again, _schemas("Count things (new wording).", "fresh"))
        assert later == first
        assert "fresh" in note and "/new" in note
        assert sum(1 for _ in again.iter_type(TOOLS)) == 1  # nothing written again
        assert pin_tools(again, _schemas("x"))[0] == first  # /model, /resume: the same


def test_a_damaged_tools_record_is_replaced_by_the_current_schemas(tmp_path: Path) -> None:
    with Session.create(tmp_path) as s:
        s.append({"type": TOOLS, "tools": [{"name": "count"}]})  # no description
        got, note = pin_tools(s, _schemas("Count things."))
        assert got[0].description == "Count things." and note == ""
        assert [len(r["tools"]) for r in s.iter_type(TOOLS)] == [1, 1]


INDEX = "<skills>\nPlaybooks you can invoke.\n- tidy — Tidy imports.\n</skills>"


def test_skills_update_only_when_a_continued_session_lists_other_skills() -> None:
    first = f"{INDEX}\n\nfix it"
    assert skills_update(INDEX, []) == ""  # a fresh session: its first turn has the index
    assert skills_update(INDEX, [first, "more"]) == ""  # unchanged
    assert skills_update("", [first]) == ""
    changed = INDEX.replace("Tidy imports.", "Sort the imports.")
    got = skills_update(changed, [first])
    assert got.startswith("<skills>\nThe skills changed") and "Sort the imports." in got
    # sent once: the next build of the same session finds it in a user message
    assert skills_update(changed, [first, f"{got}\n\nnext"]) == ""
    assert typed_text(f"{got}\n\nnext") == "next"  # shown as the user typed it
