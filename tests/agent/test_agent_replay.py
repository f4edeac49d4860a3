"""Replay's pieces: recorded paths moved to the scratch copy, divergences that say what differs."""

from __future__ import annotations

import json

from reasonix.agent.replay import RecordedTurn, Recording, compare_results, relocate

WS = "/home/ada/proj"
COPY = "/tmp/reasonix-replay-x/proj"
MOVES = ((WS, COPY),)


def test_a_recorded_workspace_path_is_moved_as_a_whole_path_or_a_leading_part() -> None:
    assert relocate(WS, MOVES) == COPY
    assert relocate(f"{WS}/src/a.py", MOVES) == f"{COPY}/src/a.py"
    assert relocate(f"cd {WS} && ls '{WS}/b' \"{WS}\"", MOVES) == (
        f"cd {COPY} && ls '{COPY}/b' \"{COPY}\""
    )
    assert relocate(f"--dir={WS};cat {WS}/x", MOVES) == f"--dir={COPY};cat {COPY}/x"


def test_a_path_that_only_starts_like_the_workspace_is_left_alone() -> None:
    for other in (f"{WS}2/a.py", f"{WS}.bak", f"/x{WS}/a.py", f"{WS}-old", f"/y/{WS}"):
        assert relocate(other, MOVES) == other


def test_relocation_is_one_pass_and_the_longest_spelling_wins() -> None:
    # the copy lies under the workspace's own spelling: it must not be moved twice
    nested = (("/w", "/w/copy/w"),)
    assert relocate("/w/a /w", nested) == "/w/copy/w/a /w/copy/w"
    both = (("/a", "/c"), ("/a/b", "/d"))
    assert relocate("/a/b/x /a/y", both) == "/d/x /c/y"


def _recording(arguments: str) -> Recording:
    call = {"id": "c1", "name": "edit_file", "arguments": arguments}
    return Recording([
        {"type": "meta", "workspace": WS},
        {"type": "message", "message": {"role": "user", "content": "fix it"}},
        {"type": "message", "message": {"role": "assistant", "content": "", "tool_calls": [call]}},
        {"type": "message", "message": {"role": "tool", "content": "ok", "tool_call_id": "c1"}},
    ])  # fmt: skip


def test_a_recording_moves_every_string_of_its_tool_arguments() -> None:
    args = {"path": f"{WS}/calc.py", "edits": [{"old": "a", "new": f"see {WS}/x"}], "n": 3}
    rec = _recording(json.dumps(args))
    assert rec.relocate(MOVES) == 1
    (call,) = rec.turns[0].replies[0].tool_calls
    moved = json.loads(call.arguments)
    assert moved == {"path": f"{COPY}/calc.py", "edits": [{"old": "a", "new": f"see {COPY}/x"}],
                     "n": 3}  # fmt: skip


def test_arguments_without_the_workspace_keep_their_exact_text() -> None:
    text = '{"path":  "calc.py"}'  # odd spacing: re-encoding would change it
    rec = _recording(text)
    assert rec.relocate(MOVES) == 0
    assert rec.turns[0].replies[0].tool_calls[0].arguments == text


def _turn(result: str) -> RecordedTurn:
    return RecordedTurn("t", results={(0, "c1"): (result, True)})


def test_a_different_result_comes_with_a_diff_of_the_normalised_results() -> None:
    then = f"line one\n{WS}/a.py: 12 passed\nend"
    now = f"line one\n{COPY}/a.py: 3 failed\nend"
    (d,) = compare_results(1, _turn(then), {(0, "c1"): (now, True, "bash")}, (WS, COPY))
    assert (d.kind, d.tool) == ("result", "bash")
    assert d.diff == ["-<workspace>/a.py: 0 passed", "+<workspace>/a.py: 0 failed"]
    assert d.as_dict()["diff"] == d.diff


def test_only_the_paths_and_numbers_are_folded() -> None:
    then, now = f"{WS}/a.py took 1.5s", f"{COPY}/a.py took 0.2s"
    assert compare_results(1, _turn(then), {(0, "c1"): (now, True, "bash")}, (WS, COPY)) == []


def test_a_long_diff_is_cut_and_says_how_much_is_left_out() -> None:
    then = "\n".join(f"a{chr(97 + i % 26)}" for i in range(40))
    now = "\n".join(f"b{chr(97 + i % 26)}" for i in range(40))
    (d,) = compare_results(1, _turn(then), {(0, "c1"): (now, True, "bash")}, ())
    assert len(d.diff) == 13 and d.diff[-1].endswith("68 more changed line(s)")


def test_a_call_refused_now_names_the_rule() -> None:
    now = "blocked: bash was not run (denied: matches deny rule 'Bash(python3:*)')"
    (d,) = compare_results(2, _turn("ok"), {(0, "c1"): (now, False, "bash")}, ())
    assert (d.turn, d.kind, d.tool, d.rule) == (2, "denied", "bash", "Bash(python3:*)")
    assert "matches deny rule" in d.detail and d.as_dict()["rule"] == "Bash(python3:*)"


def test_a_call_run_now_says_how_it_was_refused_then() -> None:
    turn = RecordedTurn("t", results={(0, "c1"): ("blocked: bash was not run (no)", False)})
    (d,) = compare_results(1, turn, {(0, "c1"): ("ok", True, "bash")}, ())
    assert d.kind == "allowed" and "bash was not run (no)" in d.detail
