"""Deterministic routing (COORD-2, COORD-3, COORD-13, D11): one table, both languages.

Every row is (pristine user text, expected route, expected reason). The
router is a pure function: no model, no I/O, no keyword counting.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonix.agent.coordinator.routing import Route, TurnMeta, route
from reasonix.agent.directives import (
    APPROVALS,
    DIRECTIVES,
    REJECTIONS,
    find_directive,
    is_approval,
    is_rejection,
    mask_quotes,
)

E, FIRST, APPROVE, ONLY = "executor", "plan_then_execute", "plan_for_approval", "plan_only"

PHRASINGS: list[tuple[str, str]] = [
    # --- English, directive at the start of a clause --------------------------------
    ("Plan first: refactor the parser", FIRST),
    ("plan first, then refactor the parser", FIRST),
    ("Refactor the parser. Plan first.", FIRST),
    ("refactor the parser; please plan first", FIRST),
    ("Make a plan first and then implement caching", FIRST),
    ("add retries to the client, plan before you start", FIRST),
    ("Plan then execute: migrate the config loader", FIRST),
    ("Plan only: how would we split loop.py?", ONLY),
    ("fix the bug in calc.py, then plan only", ONLY),
    ("Split the module (plan only)", ONLY),
    ("just plan it", ONLY),
    ("Rename the API. Only plan, no changes.", ONLY),
    ("move the tests, plan but don't execute", ONLY),
    ("Rewrite auth; wait for my approval", APPROVE),
    ("rewrite auth and wait for my approval before changing anything", APPROVE),
    ("Draft the migration, wait for my confirmation.", APPROVE),
    ("plan first and wait for my approval", APPROVE),
    ("Plan the release; don't start until I approve", APPROVE),
    ("update the docs, then let me review the plan first", APPROVE),
    ("PLAN ONLY", ONLY),
    # --- Chinese ------------------------------------------------------------------
    ("先规划：重构解析器", FIRST),
    ("先规划，再执行", FIRST),
    ("重构解析器，先规划再执行", FIRST),
    ("请先做计划，然后实现缓存", FIRST),
    ("修复 calc.py 的 bug，只规划", ONLY),
    ("只规划：如何拆分 loop.py", ONLY),
    ("迁移配置加载器。只做规划，不要改代码", ONLY),
    ("重写认证模块，等我确认", APPROVE),
    ("先规划，等我确认后再执行", APPROVE),
    ("更新文档；等我批准", APPROVE),
    ("拆分模块，我确认后再执行", APPROVE),
    # --- mid-sentence and quoted: not directives ---------------------------------
    ('explain what "plan only" means', E),
    ("explain what plan only means", E),
    ("I only plan to change one file", E),
    ("plan only the database part", E),
    ("what does 'plan first' do in this tool?", E),
    ("the flag is called `--plan-only`; document it", E),
    ("rename “wait for my approval” to something shorter", E),
    ("翻译这句话：「只规划」", E),
    ("解释“先规划”是什么意思", E),
    ("> plan only\nthat line above is from the docs, summarise it", E),
    ("```\nplan first\n```\nwhat does this snippet print?", E),
    ("re-plan only the failing part", E),
    ("we should plan first-class support for plugins", E),
    ("fix the typo in README.md", E),
    ("帮我修复这个 bug", E),
    ("this is a big, complex, multi-file refactor across 40 files", E),  # no complexity guess
]


@pytest.mark.parametrize(("text", "expected"), PHRASINGS)
def test_the_table(text: str, expected: str) -> None:
    assert route(text).route.value == expected


def test_the_table_is_large_and_bilingual() -> None:
    assert len(PHRASINGS) >= 40
    assert sum(1 for t, _ in PHRASINGS if any("\u4e00" <= c <= "\u9fff" for c in t)) >= 12
    assert {r for _, r in PHRASINGS} == {E, FIRST, APPROVE, ONLY}
    # every table entry is itself recognised when it stands alone
    for d in DIRECTIVES:
        found = find_directive(d.phrase)
        assert found is not None and found.route == d.route, d.phrase


@pytest.mark.parametrize(
    ("text", "meta", "expected", "reason"),
    [
        ("/plan fix calc.py", None, FIRST, "slash_plan"),
        ("/plan-approve fix calc.py", None, APPROVE, "slash_plan_approve"),
        ("/plan-only fix calc.py", None, ONLY, "slash_plan_only"),
        ("/goal make the tests pass", None, "goal_start", "slash_goal"),
        ("fix calc.py", TurnMeta(flag_route=Route.PLAN_THEN_EXECUTE), FIRST, "flag_plan"),
        ("fix calc.py", TurnMeta(flag_route=Route.PLAN_ONLY), ONLY, "flag_plan_only"),
        ("fix it, plan only", TurnMeta(flag_route=Route.PLAN_THEN_EXECUTE), ONLY,
         "directive_plan_only"),  # the stricter one wins: fail closed
        ("", TurnMeta(goal="ship 1.0"), "goal_start", "flag_goal"),
        ("plan only", TurnMeta(synthetic=True), E, "synthetic"),
        ("//plan this is text", None, E, "default"),
        ("/planner is a word", None, E, "default"),
    ],
)  # fmt: skip
def test_triggers_and_reasons(text: str, meta: TurnMeta | None, expected: str, reason: str) -> None:
    decision = route(text, meta)
    assert (decision.route.value, decision.reason) == (expected, reason)


def test_slash_task_is_stripped_and_reasons_carry_no_user_text() -> None:
    d = route("/plan-only   SECRET-TASK-42")
    assert d.task == "SECRET-TASK-42"
    assert "SECRET" not in d.reason
    for text, _ in PHRASINGS:
        assert text not in route(text).reason


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("/plan", "plan_mode"),
        ("/plan-only", "usage"),
        ("/goal", "goal_status"),
        ("/goal status", "goal_status"),
        ("/goal pause", "goal_pause"),
        ("/goal resume", "goal_resume"),
        ("/goal clear", "goal_clear"),
    ],
)
def test_host_actions(text: str, action: str) -> None:
    assert route(text).action == action


def test_a_waiting_plan_is_approved_rejected_or_revised() -> None:
    pending = TurnMeta(plan_status="pending")
    for text in ("yes", "Go ahead!", "LGTM", "批准", "开始执行。", "approve the plan please"):
        d = route(text, pending)
        assert (d.action, d.reason) == ("plan_approve", "plan_approved"), text
    assert route("", TurnMeta(plan_status="pending", approve_plan=True)).reason == (
        "flag_approve_plan"
    )
    for text in ("no", "cancel", "取消", "算了"):
        assert route(text, pending).action == "plan_discard", text
    revise = route("also cover the edge case of empty input", pending)
    assert (revise.route, revise.reason) == (Route.PLAN_FOR_APPROVAL, "plan_revision")
    # a plan-only plan is approvable, but other text is simply a new turn
    assert route("yes", TurnMeta(plan_status="saved")).action == "plan_approve"
    assert route("fix the typo", TurnMeta(plan_status="saved")).route is Route.EXECUTOR
    # without a plan, "yes" is just text and --approve-plan is a usage error
    assert route("yes").route is Route.EXECUTOR and route("yes").action == ""
    assert route("", TurnMeta(approve_plan=True)).action == "usage"


def test_approval_words_are_whole_messages_only() -> None:
    assert is_approval("Yes, please") and is_rejection("No.")
    assert not is_approval("yes but change step 2")
    assert not is_rejection("no tests are needed for step 2")
    assert not (APPROVALS & REJECTIONS)


def test_masking_keeps_apostrophes_and_clause_shape() -> None:
    assert "plan only" not in mask_quotes('say "plan only" now')
    assert "don't" in mask_quotes("plan but don't execute")
    assert route("it's fine, plan only").route is Route.PLAN_ONLY


def _mask_every_pattern(text: str) -> str:
    """mask_quotes with every pattern run, whatever the text holds."""
    import re

    from reasonix.agent.directives import _PLACEHOLDER, _QUOTE_PAIRS

    out = re.sub(r"```.*?(?:```|$)", _PLACEHOLDER, text, flags=re.S)
    out = "\n".join(_PLACEHOLDER if ln.lstrip().startswith(">") else ln for ln in out.split("\n"))
    for open_, close in _QUOTE_PAIRS:
        pattern = re.escape(open_) + r"[^" + re.escape(close) + r"\n]*" + re.escape(close)
        out = re.sub(pattern, _PLACEHOLDER, out)
    return re.sub(r"(?<![\w'])'[^'\n]*'(?![\w'])", _PLACEHOLDER, out)


@given(st.text(alphabet="ab \n>`'\"“”‘’「」『』«»"))
def test_masking_skips_only_patterns_that_cannot_match(text: str) -> None:
    assert mask_quotes(text) == _mask_every_pattern(text)
