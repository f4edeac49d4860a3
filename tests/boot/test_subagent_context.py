"""Acceptance: exactly what a child starts from (SUB-18…20, SUB-30, MEM-13), read-only
children, profiles, ``continue_from``, ablation (SUB-28), SubagentStop and ``/<profile>``.

Real parts: loopback fakes, runtimes from ``build_runtime``, real instruction
files, a real memory store, a real hook command, the command registry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, Turn
from subagent_kit import (
    call,
    calls,
    children,
    first_user,
    project,
    run,
    sidecar,
    system,
    tool_names,
)
from subagent_kit import tool_results as results

from reasonix.agent.memory.catalog import Memory
from reasonix.agent.session import read_records
from reasonix.agent.subagent.profile import DEFAULT_TASK_PROMPT
from reasonix.boot import RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.config.paths import home_dir

WRITERS = {"bash", "write_file", "edit_file", "multi_edit", "move_file", "notebook_edit",
           "delete_range", "delete_symbol", "kill_shell", "task", "fleet", "run_skill",
           "complete_subtask", "memory", "remember", "forget"}  # fmt: skip
MARKERS = ("REASONIX-MARKER", "AGENTS-MARKER", "CLAUDE-MARKER", "HOME-MARKER", "zebra-memory")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    return d


def _profile(ws: Path, name: str, text: str) -> None:
    d = ws / ".reasonix" / "skills" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")


def _rt(ws: Path, **kw: object) -> object:
    return build_runtime(RuntimeOptions(workspace=ws, auto=True, **kw))  # type: ignore[arg-type]


def _turn(ws: Path, script: list[object], text: str, **kw: object) -> FakeServer:
    srv = FakeServer("openai", script)  # type: ignore[arg-type]
    srv.start()
    project(ws, {"p": srv.url}, extra=str(kw.pop("extra", "")))
    rt = _rt(ws, **kw)
    try:
        run(rt, text)
    finally:
        rt.close()  # type: ignore[attr-defined]
        srv.close()
    return srv


def test_a_child_starts_from_its_task_and_nothing_else(ws: Path) -> None:
    (ws / "REASONIX.md").write_text("REASONIX-MARKER: always use tabs\n")
    (ws / "AGENTS.md").write_text("AGENTS-MARKER: agents rules\n")
    (ws / "CLAUDE.md").write_text("CLAUDE-MARKER: claude rules\n")
    home_dir().mkdir(parents=True, exist_ok=True)
    (home_dir() / "REASONIX.md").write_text("HOME-MARKER: user rules\n")
    Memory.for_workspace(ws).store("project").create(
        "zebra-memory: the deploy pipeline runs on the zebra cluster", type="project"
    )
    task = "check the deploy pipeline zebra cluster"
    script = [calls(call("task", prompt=task, write_paths=["src"])), Turn.text_only("checked"),
              Turn.text_only("done")]  # fmt: skip
    srv = _turn(ws, script, f"please {task}")
    parent, child = srv.requests[0], srv.requests[1]
    for marker in MARKERS:  # the parent got them (so this test can fail) …
        assert marker.encode() in parent.body, marker
        assert marker.encode() not in child.body, marker  # … the child never does
    assert system(child) == DEFAULT_TASK_PROMPT  # nothing else composed in (SUB-18)
    msgs = child.json["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"]  # no parent conversation
    turn = first_user(child)
    assert turn.startswith(f"<workspace-context>\nworkspace root: {ws.resolve()}\n")
    assert turn.index(task) < turn.index("<completion-contract>")
    assert "<skills>" not in turn and "<instructions>" not in turn
    assert not {"memory", "remember", "forget", "history"} & set(tool_names(child))  # MEM-13
    assert "complete_subtask" in tool_names(child)


def test_a_profile_body_is_the_whole_system_prompt_and_manual_ones_are_unlisted(
    ws: Path,
) -> None:
    body = "You are the doc writer.\nWrite short docs.\n"
    _profile(ws, "docwriter", f"---\nrunAs: subagent\ninvocation: manual\n"
                              f"description: writes docs\n---\n{body}")  # fmt: skip
    script = [calls(call("task", prompt="document a.py", profile="docwriter")),
              Turn.text_only("documented"), Turn.text_only("done")]  # fmt: skip
    srv = _turn(ws, script, "go")
    parent, child = srv.requests[0], srv.requests[1]
    assert system(child) == body  # SUB-30: no default stacked on top
    index = first_user(parent)
    assert "- explore [subagent] — " in index and "docwriter" not in index
    for name in ("explore", "review", "docwriter"):  # SUB-4: never in the parent's prompt
        assert name not in system(parent)
        assert name not in json.dumps(parent.json["tools"])


def test_read_only_children_have_no_writers_and_can_continue(ws: Path) -> None:
    script = [
        calls(call("read_only_task", prompt="where is the config read?")),
        Turn.text_only("in config.py"),
        Turn.text_only("ok"),
    ]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "first parent turn QQQ")
            first_id = children(ws)[0].stem
            srv.add(
                calls(call("read_only_task", prompt="and who calls it?", continue_from=first_id)),
                Turn.text_only("main.py calls it"),
                Turn.text_only("done"),
            )
            run(rt, "second parent turn QQQ")
        finally:
            rt.close()  # type: ignore[attr-defined]
    child = srv.requests[1]
    assert not (WRITERS & set(tool_names(child)))
    assert {"read_file", "grep", "read_only_task", "parallel_tasks"} <= set(tool_names(child))
    again = srv.requests[4]  # the continued child sees its own earlier exchange, nothing else
    contents = [m["content"] for m in again.json["messages"]]
    assert "where is the config read?" in contents[1] and contents[2] == "in config.py"
    assert "and who calls it?" in contents[3] and len(contents) == 4
    assert not any("QQQ" in c for c in contents)  # none of the parent's turns
    assert len(children(ws)) == 1  # continued in place
    assert sum(1 for r in read_records(children(ws)[0]) if r.get("type") == "meta") == 1
    assert sidecar(children(ws)[0])["capsule"]["resumed"] == f"continue:{first_id}"


def test_fork_from_continues_a_copy_and_leaves_the_source(ws: Path) -> None:
    script = [calls(call("read_only_task", prompt="first look")), Turn.text_only("seen A"),
              Turn.text_only("ok")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            run(rt, "one")
            source = children(ws)[0]
            before = source.read_bytes()
            srv.add(
                calls(call("read_only_task", prompt="look again", fork_from=source.stem)),
                Turn.text_only("seen B"),
                calls(call("read_only_task", prompt="x", fork_from="a", continue_from="b")),
                Turn.text_only("done"),
            )
            run(rt, "two")
        finally:
            rt.close()  # type: ignore[attr-defined]
    forked = [p for p in children(ws) if p != source]
    assert source.read_bytes() == before and len(forked) == 1
    contents = [m["content"] for m in srv.requests[4].json["messages"]]
    assert "first look" in contents[1] and contents[2] == "seen A" and "look again" in contents[3]
    assert sidecar(forked[0])["capsule"]["resumed"] == f"fork:{source.stem}"
    assert "not both" in results(srv.requests[6])[-1]


def test_ablate_subagent_removes_the_task_tools_but_profiles_still_delegate(ws: Path) -> None:
    script = [calls(call("run_skill", name="explore", arguments="find the entry point")),
              Turn.text_only("main.py"), Turn.text_only("done")]  # fmt: skip
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws, ablate="subagent")
        try:
            run(rt, "go")
            counters = dict(rt.telemetry.counters)  # type: ignore[attr-defined]
        finally:
            rt.close()  # type: ignore[attr-defined]
        parent, child = srv.requests[0], srv.requests[1]
    offered = set(tool_names(parent))
    assert not {"task", "read_only_task", "fleet", "parallel_tasks"} & offered
    assert "run_skill" in offered
    assert system(child).startswith("You are a read-only exploration sub-agent")
    assert not {"task", "fleet"} & set(tool_names(child))  # the arm reaches children too
    assert counters["subagent_runs"] == 1  # still counted (SUB-28)
    assert results(srv.requests[2])[-1].startswith("status: complete")


def test_inline_skills_load_their_body_and_files(ws: Path) -> None:
    _profile(ws, "style", "---\ndescription: house style\n---\nUse four spaces.\n")
    refs = ws / ".reasonix" / "skills" / "style" / "references"
    refs.mkdir()
    (refs / "naming.md").write_text("snake_case everywhere\n")
    script = [
        calls(call("run_skill", name="style", arguments="for a.py")),
        calls(call("run_skill", name="style", file="references/naming.md")),
        Turn.text_only("done"),
    ]
    srv = _turn(ws, script, "go")
    loaded = results(srv.requests[1])[-1]
    assert "Use four spaces." in loaded and "ARGUMENTS: for a.py" in loaded
    assert "- references/naming.md" in loaded
    assert results(srv.requests[2])[-1] == "snake_case everywhere\n"
    assert "- style — house style" in first_user(srv.requests[0])


def test_subagent_stop_fires_and_may_send_the_child_back_once(ws: Path, tmp_path: Path) -> None:
    seen = tmp_path / "stop.jsonl"
    hook = tmp_path / "stop_hook.py"
    hook.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "if not data['stop_hook_active']:\n"
        "    sys.stderr.write('also list the tests you ran')\n"
        "    sys.exit(2)\n"
    )
    (ws / ".claude").mkdir()
    entry = {"hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SubagentStop": [entry]}}))
    script = [calls(call("read_only_task", prompt="look")), Turn.text_only("looked"),
              Turn.text_only("looked and ran no tests"), Turn.text_only("done")]  # fmt: skip
    srv = _turn(ws, script, "go", extra='[sandbox]\nbash = "off"\n')
    payloads = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert payloads[0]["hook_event_name"] == "SubagentStop"
    assert payloads[0]["agent_id"] == children(ws)[0].stem
    assert payloads[0]["subagent_type"] == "task"
    again = srv.requests[2].json["messages"][-1]["content"]
    assert again == "[SubagentStop hook] also list the tests you ran"
    assert "looked and ran no tests" in results(srv.requests[3])[-1]


def test_a_profile_command_runs_the_child_and_keeps_the_exchange(ws: Path) -> None:
    _profile(ws, "hidden", "---\nrunAs: subagent\ninvocation: manual\nread-only: true\n"
                           "description: a manual profile\n---\nYou look.\n")  # fmt: skip
    script = [Turn.text_only("found it in main.py"), Turn.text_only("noted")]
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            reg = build_commands(rt)  # type: ignore[arg-type]
            names = dict(reg.names())
            assert "/explore" in names and "/hidden" in names  # manual ones work explicitly
            result = reg.run("/hidden where is main?")
            run(rt, "thanks")
        finally:
            rt.close()  # type: ignore[attr-defined]
        follow_up = srv.requests[1]
    assert not result.error and result.text.startswith("status: complete")
    assert system(srv.requests[0]) == "You look.\n"
    contents = [m["content"] for m in follow_up.json["messages"] if m["role"] != "system"]
    assert contents[0].endswith("/hidden where is main?")
    assert contents[1].startswith("status: complete") and contents[2].startswith("thanks")
    bad = None
    rt2 = _rt(ws)
    try:
        bad = build_commands(rt2).run("/explore")  # type: ignore[arg-type]
    finally:
        rt2.close()  # type: ignore[attr-defined]
    assert bad.error and "needs a task" in bad.text


def test_a_childs_question_reaches_the_parents_human(ws: Path) -> None:
    from reasonix.agent.events import ApprovalRequested
    from reasonix.cancel import Cancel
    from reasonix.permission import ApprovalChoice

    script = [calls(call("task", prompt="write it", write_paths=["src"])),
              calls(call("write_file", path="src/ok.py", content="ok\n")),
              Turn.text_only("wrote"), Turn.text_only("done")]  # fmt: skip
    asked: list[str] = []
    with FakeServer("openai", script) as srv:
        project(ws, {"p": srv.url})
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))  # ask mode
        try:
            for event in rt.runner.run("go", Cancel()):
                if isinstance(event, ApprovalRequested):
                    asked.append(str(event.request.tool_name))
                    event.answer(ApprovalChoice.ONCE)
        finally:
            rt.close()
    assert asked == ["task", "write_file"]  # the parent's call, then the child's write
    assert (ws / "src" / "ok.py").read_text() == "ok\n"


def test_the_skill_index_is_not_mistaken_for_changed_instruction_files(ws: Path) -> None:
    from reasonix.agent.events import Notice

    (ws / "REASONIX.md").write_text("use tabs\n")
    with FakeServer("openai", [Turn.text_only("one"), Turn.text_only("two")]) as srv:
        project(ws, {"p": srv.url})
        rt = _rt(ws)
        try:
            notes = [e for t in ("a", "b") for e in run(rt, t) if isinstance(e, Notice)]
        finally:
            rt.close()  # type: ignore[attr-defined]
        first = first_user(srv.requests[0])
    assert first.index("use tabs") < first.index("<skills>") < first.index("\n\na")
    assert not any("instruction files changed" in n.text for n in notes)
