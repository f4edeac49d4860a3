"""Plans, goals and the planning policy as plain parts (no model involved)."""

from __future__ import annotations

from pathlib import Path

from reasonix.agent.coordinator.goal import Budgets, Goal, GoalBook, evidence_key
from reasonix.agent.coordinator.plan import Plan, PlanBook, handoff_text, parse_plan
from reasonix.agent.session import Session, read_records
from reasonix.permission import Policy
from reasonix.permission.modes import Decision, Mode

PLAN = """Some preamble the parser ignores.
<plan>
# Cache the config loader
## Summary
Load once, reuse.
## Verified touchpoints
- reasonix/config/loader.py:120 — load() reads both files every call
## Candidate touchpoints
- reasonix/boot/runtime.py (probably calls load twice)
## Non-goals
- no change to the file format
## Risks
1. stale values after `config compact-ratio`
## Acceptance criteria
- load() reads each file once per process
## Verification
- `python -m pytest tests/config -q`
</plan>"""


def test_a_plan_separates_verified_from_candidate_touchpoints() -> None:
    title, sections = parse_plan(PLAN)
    assert title == "Cache the config loader"
    assert sections["verified"] == [
        "reasonix/config/loader.py:120 — load() reads both files every call"
    ]
    assert sections["candidates"] == ["reasonix/boot/runtime.py (probably calls load twice)"]
    assert sections["non_goals"] == ["no change to the file format"]
    assert sections["risks"] == ["stale values after `config compact-ratio`"]
    assert sections["acceptance"] and sections["verification"] == [
        "`python -m pytest tests/config -q`"
    ]
    assert "preamble" not in Plan.make("plan_only", "t", PLAN, "planner", "saved").body
    zh_title, zh = parse_plan("# 标题\n## 已验证触点\n- a.py:1\n## 候选触点\n- b.py\n## 风险\n- 无")
    assert zh_title == "标题" and zh["verified"] == ["a.py:1"] and zh["candidates"] == ["b.py"]


def test_plans_are_records_plus_a_markdown_copy(tmp_path: Path) -> None:
    s = Session.create(tmp_path)
    try:
        book = PlanBook(lambda: s, tmp_path)
        plan = Plan.make("plan_for_approval", "do X", PLAN, "planner", "pending")
        path = book.save(plan)
        assert path.read_text().count("Cache the config loader") == 1
        assert book.approvable() is not None and book.approvable().id == plan.id  # type: ignore[union-attr]
        book.set_status(plan, "approved")
        assert book.approvable() is None and book.latest().status == "approved"  # type: ignore[union-attr]
        text = handoff_text(plan, extra="keep it small")
        assert text.startswith("do X\n") and f'<plan id="{plan.id}">' in text
        assert "candidate" in text and "The user adds: keep it small" in text
    finally:
        s.close()
    kinds = [r["type"] for r in read_records(s.path)]
    assert kinds.count("plan") == 1 and kinds.count("plan_status") == 1


def test_goal_state_and_evidence_survive_a_reload(tmp_path: Path) -> None:
    s = Session.create(tmp_path)
    book = GoalBook(lambda: s)
    goal = book.start("ship it")
    goal.stats.tokens, goal.stats.turns = 1500, 4
    key = evidence_key("read_file", '{"path": "a"}', "content")
    assert key == evidence_key("read_file", '{"path":"a"}', "content")  # canonical arguments
    assert key != evidence_key("read_file", '{"path":"a"}', "other content")
    book.seen.add(key)
    book.save([key])
    s.close()  # as after a kill: only what was appended counts
    again = Session.open(s.path)
    try:
        loaded = GoalBook(lambda: again)
        assert loaded.current is not None and loaded.current.id == goal.id
        assert loaded.current.stats.tokens == 1500 and loaded.seen == {key}
    finally:
        again.close()


def test_budgets_are_off_by_default_and_resume_keeps_statistics() -> None:
    goal = Goal.new("x")
    goal.stats.tokens, goal.stats.active_seconds, goal.stats.tool_rounds = 10**9, 10**7, 10**6
    assert Budgets().spent(goal.used()) == ""  # PERM-17: no default limit of any kind
    assert Budgets(tokens=1000).spent(goal.used()) == "tokens"
    assert Budgets(minutes=-1).spent(goal.used()) == ""  # legacy negative = off
    goal.pause("budget_spend:tokens")
    goal.resume()
    assert goal.status == "active" and goal.stats.tokens == 10**9  # kept
    assert Budgets(tokens=1000).spent(goal.used()) == ""  # a fresh slice


def test_planning_is_independent_of_the_posture() -> None:
    yolo = Policy(Mode.BYPASS).with_planning(True)
    assert yolo.planning_active
    mcp = yolo.evaluate("mcp__gh__create_issue", False, {})
    assert mcp.decision is Decision.DENY and "plan mode" in mcp.reason
    proxy = yolo.evaluate("use_capability", False, {"action": "call", "server": "gh"})
    assert proxy.decision is Decision.DENY
    assert yolo.decide("use_capability", True, {"action": "list"}) is Decision.ALLOW
    assert yolo.decide("write_file", False, {"path": "a.txt"}) is Decision.ALLOW  # not a jail
    assert Policy(Mode.ASK).with_planning(True).decide("write_file", False, {}) is Decision.ASK
    assert not Policy(Mode.PLAN).with_planning(False).planning_active


def test_the_approval_window_never_passes_nested_bash(tmp_path: Path) -> None:
    policy = Policy(Mode.PLAN, allow_dynamic_bash=True, workspace=tmp_path)
    window = policy.plan_window()
    assert window.in_window and not window.planning_active
    assert window.decide("write_file", False, {"path": "a.txt"}) is Decision.ALLOW
    nested = window.evaluate("bash", False, {"command": 'eval "$(cat x)"'})
    assert nested.decision is Decision.ASK and nested.fresh
    assert policy.evaluate("bash", False, {"command": "eval x"}).decision is Decision.ASK
    guarded = window.evaluate("write_file", False, {"path": str(tmp_path / "reasonix.toml")})
    assert guarded.decision is Decision.ASK and guarded.fresh
    after = window.end_window()
    assert not after.in_window and after.mode is Mode.ASK and after.allow_dynamic_bash
