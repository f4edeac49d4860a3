"""Auto-recall budgets, suppression and ranking (MEM-5, MEM-6, MEM-15), and prefix safety."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes import FakeServer, Turn

import reasonix.provider as provider_registry
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix.agent.memory.catalog import Memory, freshness
from reasonix.agent.memory.facts import Fact, FactStore
from reasonix.agent.memory.recall import MAX_RECALL_CHARS, Recaller, recall_suffix
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.types import Message, Request, Role, ToolSchema

DAY = 86400.0


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Memory:
    return Memory(
        FactStore(tmp_path / "g", "global", clock=clock),
        FactStore(tmp_path / "p", "project", clock=clock),
        clock=clock,
    )


def test_generic_requests_recall_nothing(memory: Memory) -> None:
    memory.store("project").create("continue the migration with alembic", type="project")
    for text in ("continue", "ok, go on", "继续", "please continue", "yes"):
        assert recall_suffix(memory, text) == ""


def test_budget_caps_facts_and_characters(memory: Memory) -> None:
    for i in range(10):
        memory.store("project").create(
            f"deploy pipeline note {i}: " + "the deploy pipeline uses blue green " * 30,
            type="project",
        )
    out = recall_suffix(memory, "how does the deploy pipeline work")
    assert 0 < len(out) <= MAX_RECALL_CHARS
    assert out.count("\n- [") <= 4
    assert str(memory.store("project").root) not in out


def test_home_prefix_is_scrubbed(memory: Memory) -> None:
    home = os.path.expanduser("~")
    memory.store("project").create(
        f"the sandbox config lives in {home}/sandbox.toml", type="reference"
    )
    out = recall_suffix(memory, "where is the sandbox config")
    assert "<local-home>/sandbox.toml" in out and home + "/" not in out


def test_project_fact_beats_equivalent_global(memory: Memory) -> None:
    memory.store("global").create(
        "tests run with pytest -q in this repo", type="reference", title="tests"
    )
    memory.store("project").create("tests run with pytest -x here", type="project", title="tests")
    hits = memory.search("how do tests run pytest")
    assert [h.fact.scope for h in hits] == ["project"]


def test_stale_facts_rank_below_fresh_ones(memory: Memory, clock: Clock) -> None:
    old = memory.store("project").create("database migrations use alembic", type="reference")
    clock.t += 60 * DAY  # reference facts are stale after 45 days
    new = memory.store("project").create(
        "database migrations use alembic revisions", type="reference"
    )
    hits = memory.search("database migrations alembic")
    assert [h.fact.id for h in hits] == [new.id, old.id]
    assert freshness(old, clock.t) == 0.25 and freshness(new, clock.t) == 1.0


@pytest.mark.parametrize(
    ("kind", "days", "factor"),
    [("reference", 10, 1.0), ("reference", 45, 0.25), ("project", 105, 0.75), ("user", 400, 0.25)],
)
def test_freshness_table(kind: str, days: int, factor: float) -> None:
    f = Fact("m", 1, kind, "project", "", "x", "", "2023-01-01T00:00:00Z")
    now = 1672531200.0 + days * DAY
    assert freshness(f, now) == pytest.approx(factor)


def test_recall_never_changes_system_prompt_or_tools_bytes(memory: Memory) -> None:
    memory.store("project").create("the release script is scripts/release.sh", type="reference")
    recaller = Recaller(memory)
    system = "stable system prompt"
    tools = [ToolSchema("read", "read a file", {"type": "object", "properties": {}})]
    with FakeServer("openai", [Turn.text_only("a"), Turn.text_only("b")]) as srv:
        cfg = ProviderConfig(name="fake", kind="openai", base_url=srv.url, models=["m"])
        cfg.api_key = "k"
        prov = provider_registry.new("openai", cfg)
        history: list[Message] = []
        for text in ("hello there", "how do I run the release script"):
            history.append(Message(Role.USER, text + recaller.recall_suffix(text)))
            req = Request(model="m", messages=list(history), system=system, tools=tools)
            list(prov.stream(req, Cancel()))
            history.append(Message(Role.ASSISTANT, "ok"))
        first, second = (r.json for r in srv.requests)
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    assert first["messages"][0] == second["messages"][0] == {"role": "system", "content": system}
    assert "<memory-recall>" not in first["messages"][1]["content"]
    assert "release.sh" in second["messages"][3]["content"]  # on the user turn itself
    assert second["messages"][:2] == first["messages"][:2]
