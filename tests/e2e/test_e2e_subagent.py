"""The built .pyz delegates: ``task`` with a claim, a fleet, ``reasonix subagent …``.

Real parts: the archive in a subprocess with a clean environment, loopback
fakes (one per provider where children run concurrently), real files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env
from fakes import FakeServer, ToolSpec, Turn

pytestmark = pytest.mark.e2e


def _call(tool: str, **args: Any) -> Turn:
    return Turn.tools([ToolSpec(tool, json.dumps(args))])


def _project(ws: Path, providers: dict[str, str]) -> None:
    lines = ['default_model = "p"']
    for name, url in providers.items():
        lines += ["[[providers]]", f'name = "{name}"', 'kind = "openai"', f'base_url = "{url}"',
                  'models = ["m"]', 'api_key_env = "FAKE_PROVIDER_KEY"']  # fmt: skip
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text("\n".join(lines) + "\n")


def _reasonix(pyz: Path, ws: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(pyz), *args], cwd=ws, env=clean_env(tmp, source_tree=False),
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _children(tmp: Path) -> list[Path]:
    return sorted((tmp / "rx" / "sessions").glob("*/subagents/*.jsonl"))


def test_task_claims_adjudication_and_counters(pyz: Path, tmp_path: Path) -> None:
    ws, extra, outside = tmp_path / "repo", tmp_path / "extra", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    extra.mkdir()
    outside.mkdir()
    (ws / "src" / "link").symlink_to(outside)
    writes = Turn.tools([
        ToolSpec("write_file", json.dumps({"path": "src/a.py", "content": "x = 1\n"})),
        ToolSpec("write_file", json.dumps({"path": "../out.txt", "content": "no\n"})),
        ToolSpec("write_file", json.dumps({"path": "src/link/x", "content": "no\n"})),
    ])  # fmt: skip
    claim = [{"text": "tests pass", "kind": "verification", "evidence": ["pytest -q"]},
             {"text": "a.py written", "kind": "files", "evidence": ["src/a.py"]}]  # fmt: skip
    script = [
        _call("task", prompt="write the module", write_paths=["src/"]),
        writes,
        _call("complete_subtask", status="complete", summary="done", acceptance_criteria=claim),
        Turn.text_only("module written, tests pass"),
        _call("task", prompt="write the notes"),  # no claim: the whole workspace
        _call("write_file", path=str(extra / "notes.txt"), content="n\n"),
        Turn.text_only("notes written"),
        Turn.text_only("both delegated"),
    ]
    with FakeServer("openai", script) as srv:
        _project(ws, {"p": srv.url})
        proc = _reasonix(pyz, ws, tmp_path, "run", "--json", "-y", "--add-dir", str(extra), "go")
        first_result = [m["content"] for m in srv.requests[4].json["messages"]
                        if m["role"] == "tool"][-1]  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    result = json.loads(proc.stdout)
    assert result["result"] == "both delegated"
    assert (ws / "src" / "a.py").exists() and (extra / "notes.txt").exists()
    assert not (tmp_path / "out.txt").exists() and not (outside / "x").exists()
    assert first_result.startswith("status: partial (claimed complete; the host downgraded it)")
    assert first_result.count("- refused: write_file ") == 2
    expected = {
        "subagent_runs": 2, "subagent_nested_runs": 0, "tool_calls": 7, "subagent_tool_calls": 5,
        "subagent_mutations": 2, "duplicate_work_paths": 0, "completion_reports": 1,
        "completions_prose_only": 1, "false_completions": 1, "criterion_downgrades": 1,
        "write_scope_violations": 1,
    }  # fmt: skip
    assert {k: result[k] for k in expected} == expected
    caps = [json.loads(p.with_suffix(".capsule.json").read_text()) for p in _children(tmp_path)]
    assert len(caps) == 2 and all(c["capsuleHash"].startswith("sha256:") for c in caps)


def test_fleet_runs_the_branches_together(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    (ws / "src").mkdir(parents=True)
    names = ("research", "backend", "frontend", "integration", "review")
    deps = {"backend": ["research"], "frontend": ["research"],
            "integration": ["backend", "frontend"], "review": ["integration"]}  # fmt: skip
    tasks = [{"id": n, "prompt": f"do {n}", "model": n, "read_only": True,
              "depends_on": deps.get(n, [])} for n in names]  # fmt: skip
    with ExitStack() as stack:
        parent = stack.enter_context(
            FakeServer("openai", [_call("fleet", tasks=tasks), Turn.text_only("planned")])
        )
        kids = {n: stack.enter_context(
            FakeServer("openai", [Turn(text=f"{n} finished " + "word " * 8, delay=0.04)])
        ) for n in names}  # fmt: skip
        _project(ws, {"p": parent.url, **{n: s.url for n, s in kids.items()}})
        proc = _reasonix(pyz, ws, tmp_path, "run", "--json", "-y", "run the plan")
        summary = [m["content"] for m in parent.requests[1].json["messages"]
                   if m["role"] == "tool"][-1]  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert json.loads(proc.stdout)["subagent_runs"] == 5
    assert summary.startswith("fleet: 5/5 items complete")
    spans = {}
    for path in _children(tmp_path):
        run = json.loads(path.with_suffix(".capsule.json").read_text())["run"]
        spans[run["label"]] = (run["started"], run["ended"])
    back, front = spans["backend"], spans["frontend"]
    assert back[0] < front[1] and front[0] < back[1]
    assert spans["research"][1] <= min(back[0], front[0])
    assert max(back[1], front[1]) <= spans["integration"][0] <= spans["review"][0]


def test_the_subagent_command(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    skill = ws / ".reasonix" / "skills" / "helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: helper\ndescription: helps out\ninvocation: manual\nrunAs: subagent\n---\n"
        "You help.\n"
    )
    (ws / "notes.txt").write_text("remember the milk\n")
    script = [
        _call("read_file", path="notes.txt"),
        Turn.text_only("it says remember the milk"),
        _call("write_file", path="done.txt", content="ok\n"),
        Turn.text_only("wrote done.txt"),
    ]
    with FakeServer("openai", script) as srv:
        _project(ws, {"p": srv.url})
        (ws / "reasonix.toml").write_text(
            (ws / "reasonix.toml").read_text() + '[permissions]\nmode = "auto"\n'
        )
        listed = _reasonix(pyz, ws, tmp_path, "subagent", "list", "--json")
        tried = _reasonix(pyz, ws, tmp_path, "subagent", "try", "helper", "read notes", "--json")
        ran = _reasonix(pyz, ws, tmp_path, "subagent", "run", "helper", "write done.txt")
        refused = _reasonix(pyz, ws, tmp_path, "subagent", "edit", "explore", "--prompt", "x")
        try_tools = {t["function"]["name"] for t in srv.requests[0].json["tools"]}
        run_tools = {t["function"]["name"] for t in srv.requests[2].json["tools"]}
    assert listed.returncode == 0
    names = {p["name"] for p in json.loads(listed.stdout)["profiles"]}
    assert {"helper", "explore", "review"} <= names
    assert tried.returncode == 0, tried.stderr
    out = json.loads(tried.stdout)
    assert out["result"] == "it says remember the milk" and out["transcript"] is None
    assert "write_file" not in try_tools and "write_file" in run_tools
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("status: complete (prose only") and (ws / "done.txt").exists()
    assert "- wrote: done.txt" in ran.stdout
    assert refused.returncode == 2 and "only --model and --effort" in refused.stderr
    assert len(_children(tmp_path)) == 1  # try kept nothing; run kept its transcript
