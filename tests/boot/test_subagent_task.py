"""Acceptance: ``task`` with a write claim, adjudication, counters (SUB-9…17, SUB-27).

Real parts: the loopback fake provider (one server serves the parent and
its child in order), real runtimes built through ``build_runtime``, real
files, sessions and sidecars under the per-test home.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import (
    call,
    calls,
    children,
    project,
    report,
    run,
    sidecar,
    tool_results,
)

from reasonix.agent.events import Done
from reasonix.agent.session import read_records
from reasonix.boot import RuntimeOptions, build_runtime


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    return d


def _rt(ws: Path, **kw: object) -> object:
    return build_runtime(RuntimeOptions(workspace=ws, auto=True, **kw))  # type: ignore[arg-type]


def test_a_claim_gives_one_write_and_two_refusals(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "src" / "link").symlink_to(outside)
    script = [
        calls(call("task", prompt="write the module", write_paths=["src/"])),
        calls(
            call("write_file", path="src/a.py", content="x = 1\n"),
            call("write_file", path="../out.txt", content="escape\n"),
            call("write_file", path="src/link/x", content="escape\n"),
        ),
        calls(
            report("complete", {"text": "a.py written", "kind": "files", "evidence": ["src/a.py"]})
        ),
        Turn.text_only("wrote src/a.py"),
        Turn.text_only("the sub-agent wrote the module"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            events = run(rt, "delegate it")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        result = tool_results(srv.requests[4])[-1]
    assert isinstance(events[-1], Done) and events[-1].result == "the sub-agent wrote the module"
    assert (ws / "src" / "a.py").read_text() == "x = 1\n"
    assert not (tmp_path / "out.txt").exists() and not (outside / "x").exists()
    assert result.startswith("status: complete\n")  # the adjudicated status comes first
    assert result.count("\n- refused: write_file ") == 2
    assert "outside this sub-agent's write claim" in result and "- wrote: src/a.py" in result
    child = [r for r in read_records(children(ws)[0]) if r.get("type") == "message"]
    refusals = [r for r in child if r["message"]["role"] == "tool" and
                "not allowed" in r["message"]["content"]]  # fmt: skip
    assert len(refusals) == 2
    assert counters["subagent_runs"] == 1 and counters["subagent_nested_runs"] == 0
    assert counters["tool_calls"] == 5 and counters["subagent_tool_calls"] == 4
    assert counters["subagent_mutations"] == 1 and counters["completion_reports"] == 1
    assert counters["write_scope_violations"] == 0  # both escapes were refused, none landed
    assert counters["false_completions"] == 0 and counters["criterion_downgrades"] == 0
    # the child's usage is part of the run's cost
    assert len(rt.telemetry.per_request) == 5  # type: ignore[attr-defined]


def test_a_fabricated_completion_is_downgraded_and_counted(ws: Path) -> None:
    script = [
        calls(call("task", prompt="fix the bug", write_paths=["src"])),
        calls(
            report(
                "complete",
                {"text": "tests pass", "kind": "verification", "evidence": ["pytest -q"]},
                {"text": "fixed in b.py", "kind": "diff", "evidence": ["src/b.py"]},
            )
        ),
        Turn.text_only("all fixed and tested"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "fix it")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        result = tool_results(srv.requests[3])[-1]
    assert result.startswith("status: partial (claimed complete; the host downgraded it)")
    assert "the host never saw `pytest -q` run" in result
    assert "the host never saw src/b.py read or written" in result
    prose = result.index("all fixed and tested")
    assert result.index("criteria:") < prose < result.index("host receipts:")
    assert counters["false_completions"] == 1 and counters["criterion_downgrades"] == 2
    assert counters["completion_reports"] == 1 and counters["completions_prose_only"] == 0


def test_a_complete_report_without_criteria_is_downgraded_and_counted(ws: Path) -> None:
    script = [
        calls(call("task", prompt="rename the helper", write_paths=["src"])),
        calls(call("write_file", path="src/a.py", content="x = 1\n")),
        calls(report("complete")),  # no acceptance criteria at all
        Turn.text_only("renamed"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "rename it")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        result = tool_results(srv.requests[4])[-1]
    assert result.startswith("status: partial (claimed complete; the host downgraded it)")
    assert "names no acceptance criteria" in result and "- wrote: src/a.py" in result
    assert counters["false_completions"] == 1 and counters["completion_reports"] == 1


def test_a_claimless_writer_may_write_anywhere_inside_and_outside_is_a_violation(
    ws: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    script = [
        calls(call("task", prompt="write both")),  # no write_paths: the whole workspace
        calls(
            call("write_file", path="anywhere/in.txt", content="in\n"),
            call("write_file", path=str(extra / "out.txt"), content="out\n"),
        ),
        Turn.text_only("wrote both"),  # prose only: no completion report
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws, add_dirs=[str(extra)])
        try:
            run(rt, "go")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        result = tool_results(srv.requests[3])[-1]
    assert (ws / "anywhere" / "in.txt").exists() and (extra / "out.txt").exists()
    assert result.startswith("status: complete (prose only")
    assert f"outside the claim (violations): {(extra / 'out.txt').resolve()}" in result
    assert counters["write_scope_violations"] == 1 and counters["completions_prose_only"] == 1
    assert counters["subagent_mutations"] == 2


def test_move_file_is_checked_at_both_ends(ws: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "src" / "a.py").write_text("a\n")
    (ws / "docs" / "d.md").write_text("d\n")
    script = [
        calls(call("task", prompt="move things", write_paths=["src"])),
        calls(
            call("move_file", source_path="src/a.py", destination_path="docs/a.py"),
            call("move_file", source_path="docs/d.md", destination_path="src/d.md"),
        ),
        Turn.text_only("tried"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "go")
        finally:
            rt.close()  # type: ignore[attr-defined]
        result = tool_results(srv.requests[3])[-1]
    assert (ws / "src" / "a.py").exists() and (ws / "docs" / "d.md").exists()
    assert result.count("- refused: move_file ") == 2


def test_two_writers_on_one_path_count_as_duplicate_work(ws: Path) -> None:
    child = [calls(call("write_file", path="src/same.py", content="v\n")), Turn.text_only("w")]
    script = [
        calls(call("task", prompt="first", write_paths=["src"])),
        *child,
        calls(call("task", prompt="second", write_paths=["src/same.py"])),
        *child,
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "go")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
    assert counters["subagent_runs"] == 2 and counters["duplicate_work_paths"] == 1
    assert counters["subagent_mutations"] == 2 and counters["completions_prose_only"] == 2


def test_identical_spawns_have_the_same_capsule_hash(ws: Path) -> None:
    profile = ws / ".reasonix" / "skills" / "writer"
    profile.mkdir(parents=True)
    (profile / "SKILL.md").write_text("---\nrunAs: subagent\n---\nYou write.\n")
    task = call("task", prompt="same task", write_paths=["src"])
    script = [calls(task), Turn.text_only("a"), calls(task), Turn.text_only("b"),
              calls(call("task", prompt="same task", write_paths=["src"], profile="writer")),
              Turn.text_only("c"), Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "go")
        finally:
            rt.close()  # type: ignore[attr-defined]
    caps = [sidecar(p) for p in children(ws)]
    assert len(caps) == 3
    assert caps[0]["capsuleHash"] == caps[1]["capsuleHash"] != caps[2]["capsuleHash"]
    first = caps[0]["capsule"]
    assert first["parent_call"] == "call_0" and first["parent_session"]
    assert first["system_source"] == "default" and caps[2]["capsule"]["system_source"] == (
        "profile:writer"
    )
    assert set(first["inherited"].values()) == {False}
    assert first["task_hash"].startswith("sha256:") and "same task" not in str(first)


def test_depth_limit_one_refuses_a_grandchild_with_an_error_result(ws: Path) -> None:
    script = [
        calls(call("task", prompt="delegate further")),
        calls(call("task", prompt="grandchild work")),  # the child tries to spawn
        Turn.text_only("could not delegate"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url}, extra="[agent]\nmax_subagent_depth = 1\n")
        rt = _rt(ws)
        try:
            events = run(rt, "go")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        refusal = tool_results(srv.requests[2])[-1]
        child_first = srv.requests[1].json["messages"][1]["content"]
    assert isinstance(events[-1], Done) and events[-1].reason == "complete"
    assert "max_subagent_depth is 1" in refusal and "cannot start another sub-agent" in refusal
    assert "<subagent-context>" not in child_first  # at the limit: no delegation guidance
    assert counters["subagent_runs"] == 1 and counters["subagent_nested_runs"] == 0


def test_a_nested_child_is_counted_and_stays_inside_its_parents_claim(ws: Path) -> None:
    script = [
        calls(call("task", prompt="outer", write_paths=["src"])),
        calls(call("task", prompt="inner too wide", write_paths=["docs"])),
        calls(call("task", prompt="inner", write_paths=["src/inner"])),
        Turn.text_only("inner done"),
        Turn.text_only("outer done"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "go")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        too_wide = tool_results(srv.requests[2])[-1]
        child_first = srv.requests[1].json["messages"][1]["content"]
    assert "reach outside this sub-agent's own claim" in too_wide
    assert "<subagent-context>" in child_first and "depth 1 of at most 2" in child_first
    assert counters["subagent_runs"] == 2 and counters["subagent_nested_runs"] == 1
