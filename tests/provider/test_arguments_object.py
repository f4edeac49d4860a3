"""A call's argument text as an object for display (issue 39: one helper, not three)."""

from __future__ import annotations

from reasonix.provider.types import arguments_object


def test_an_object_is_read_and_anything_else_is_empty() -> None:
    assert arguments_object('{"path": "a.py", "n": 2}') == {"path": "a.py", "n": 2}
    for text in ("", "[1, 2]", '"text"', "null", '{"path": ', "not json"):
        assert arguments_object(text) == {}, text
