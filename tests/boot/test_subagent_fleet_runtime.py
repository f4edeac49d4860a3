"""Acceptance: ``fleet`` and ``parallel_tasks`` over real child runtimes (SUB-21…24).

Each child answers from its own loopback server (its item names the
provider as its ``model``), so concurrent children never race for one script.
The timing comes from the capsule sidecars the host writes for each child.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault, Turn
from subagent_kit import call, calls, children, project, run, sidecar
from subagent_kit import tool_results as results

from reasonix.boot import RuntimeOptions, build_runtime

NAMES = ("research", "backend", "frontend", "integration", "review")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    (d / "src").mkdir(parents=True)
    return d


def _items(**override: Any) -> list[dict[str, Any]]:
    items = [
        {"id": "research", "prompt": "research it", "read_only": True, "model": "research"},
        {"id": "backend", "prompt": "build the backend", "write_paths": ["src/backend"],
         "depends_on": ["research"], "model": "backend"},
        {"id": "frontend", "prompt": "build the frontend", "write_paths": ["src/frontend"],
         "depends_on": ["research"], "model": "frontend"},
        {"id": "integration", "prompt": "integrate", "write_paths": ["tests"],
         "depends_on": ["backend", "frontend"], "model": "integration"},
        {"id": "review", "prompt": "review it", "read_only": True,
         "depends_on": ["integration"], "model": "review"},
    ]  # fmt: skip
    for item in items:
        item.update(override.get(item["id"], {}))
    return items


def _slow(text: str) -> Turn:
    return Turn(text=text + " " + "and more words " * 4, delay=0.04)


def _fleet(
    ws: Path, items: list[dict[str, Any]], child_scripts: dict[str, list[Any]], **args: Any
) -> tuple[str, dict[str, FakeServer], dict[str, int]]:
    with ExitStack() as stack:
        parent = stack.enter_context(
            FakeServer("openai", [calls(call("fleet", tasks=items, **args)), Turn.text_only("ok")])
        )
        servers = {n: stack.enter_context(FakeServer("openai", child_scripts.get(n, [])))
                   for n in NAMES}  # fmt: skip
        project(ws, {"p": parent.url, **{n: s.url for n, s in servers.items()}})
        rt = build_runtime(RuntimeOptions(workspace=ws, auto=True))
        try:
            run(rt, "run the plan")
            counters = dict(rt.telemetry.counters)
        finally:
            rt.close()
        return results(parent.requests[1])[-1], servers, counters


def _spans(ws: Path) -> dict[str, tuple[float, float]]:
    out = {}
    for path in children(ws):
        info = sidecar(path)["run"]
        out[info["label"]] = (info["started"], info["ended"])
    return out


def test_branches_run_together_and_the_rest_in_order(ws: Path) -> None:
    scripts = {n: [_slow(f"{n} done")] for n in NAMES}
    text, servers, counters = _fleet(ws, _items(), scripts)
    assert text.startswith("fleet: 5/5 items complete")
    spans = _spans(ws)
    back, front = spans["backend"], spans["frontend"]
    assert back[0] < front[1] and front[0] < back[1]  # their transcripts overlap in time
    assert spans["research"][1] <= min(back[0], front[0])
    assert max(back[1], front[1]) <= spans["integration"][0]
    assert spans["integration"][1] <= spans["review"][0]
    assert counters["subagent_runs"] == 5
    for name, srv in servers.items():  # D7: a dependent item gets only its own task text
        sent = srv.requests[0].body.decode()
        others = [f"{n} done" for n in NAMES if n != name]
        assert not any(o in sent for o in others), name


def test_a_failing_backend_skips_integration_and_review_but_frontend_finishes(ws: Path) -> None:
    scripts = {n: [_slow(f"{n} done")] for n in NAMES}
    scripts["backend"] = [Fault.status(400, message="backend model broke")]
    text, servers, counters = _fleet(ws, _items(), scripts)
    assert text.startswith("fleet: 2/5 items complete")
    assert "- backend: failed" in text and "- frontend: complete" in text
    assert "- integration: skipped (backend did not complete)" in text
    assert "- review: skipped (integration did not complete)" in text
    assert servers["integration"].requests == [] and servers["review"].requests == []
    assert len(servers["frontend"].requests) == 1 and counters["subagent_runs"] == 3


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ({"research": {"depends_on": ["review"]}}, "cycle: "),
        ({"review": {"depends_on": ["nobody"]}}, "unknown id(s): nobody"),
        ({"frontend": {"id": "backend"}}, "duplicate id(s): backend"),
        ({"frontend": {"write_paths": ["src/backend/ui"]}}, "overlap"),
    ],
)
def test_a_bad_graph_fails_preflight_with_no_child_started(
    ws: Path, override: dict[str, Any], needle: str
) -> None:
    text, servers, counters = _fleet(ws, _items(**override), {})
    assert "fleet preflight failed, nothing was started" in text and needle in text
    assert all(s.requests == [] for s in servers.values()) and children(ws) == []
    assert counters["subagent_runs"] == 0


def test_parallel_tasks_answer_concurrently(ws: Path) -> None:
    tasks = [{"prompt": "q one", "model": "research"}, {"prompt": "q two", "model": "review"}]
    scripts = {"research": [_slow("one")], "review": [_slow("two")]}
    with ExitStack() as stack:
        parent = stack.enter_context(
            FakeServer("openai", [calls(call("parallel_tasks", tasks=tasks)), Turn.text_only("k")])
        )
        servers = {n: stack.enter_context(FakeServer("openai", s)) for n, s in scripts.items()}
        project(ws, {"p": parent.url, **{n: s.url for n, s in servers.items()}})
        rt = build_runtime(RuntimeOptions(workspace=ws))  # read-only: no approval needed
        try:
            run(rt, "ask both")
        finally:
            rt.close()
        text = results(parent.requests[1])[-1]
    assert text.startswith("parallel_tasks: 2/2 complete")
    spans = [(i["started"], i["ended"]) for i in (sidecar(p)["run"] for p in children(ws))]
    assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]
