"""Instruction files, the stable system prompt and telemetry (cost, cache, usage fields)."""

from __future__ import annotations

from pathlib import Path

from reasonix.agent.instructions import (
    FILE_CAP_BYTES,
    TOTAL_CAP_BYTES,
    instruction_block,
    load_instructions,
)
from reasonix.agent.prompt import environment_summary, system_prompt
from reasonix.agent.telemetry import Telemetry, estimate_cost, usage_fields
from reasonix.provider.types import Usage


def test_order_home_then_root_down_to_cwd_with_local_variants(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    sub = ws / "pkg" / "mod"
    sub.mkdir(parents=True)
    home.mkdir()
    (home / "REASONIX.md").write_text("global rule")
    (ws / "AGENTS.md").write_text("root agents")
    (ws / "AGENTS.local.md").write_text("root local")
    (ws / "pkg" / "CLAUDE.md").write_text("pkg claude")
    (sub / "REASONIX.md").write_text("mod rule")
    (tmp_path / "AGENTS.md").write_text("outside the workspace: never read")
    files = load_instructions(home, ws, sub)
    assert [f.text for f in files] == [
        "global rule",
        "root agents",
        "root local",
        "pkg claude",
        "mod rule",
    ]
    block = instruction_block(files)
    assert block.startswith("<instructions>") and block.endswith("</instructions>")
    assert "root local" in block and "never read" not in block
    assert block.index("root agents") < block.index("root local")  # the local variant wins


def test_duplicates_are_read_once_and_caps_apply(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("same text")
    (ws / "CLAUDE.md").symlink_to(ws / "AGENTS.md")
    (ws / "REASONIX.md").write_text("x" * (FILE_CAP_BYTES * 4))
    files = load_instructions(tmp_path / "nohome", ws)
    assert [f.label for f in files] == ["REASONIX.md", "AGENTS.md"]
    assert len(files[0].text.encode()) < FILE_CAP_BYTES + 100 and "truncated" in files[0].text
    assert instruction_block([]) == ""


def test_the_total_cap_holds_over_many_large_files(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    deep = ws / "a" / "b"
    deep.mkdir(parents=True)
    home.mkdir()
    written = 0
    for i, directory in enumerate([home, ws, ws / "a", deep]):
        for name in ("REASONIX.md", "AGENTS.md", "CLAUDE.local.md"):
            body = f"{i}{name} " * FILE_CAP_BYTES  # distinct text, each far over the file cap
            (directory / name).write_text(body)
            written += len(body)
    assert written > 10 * TOTAL_CAP_BYTES  # the fixture really reaches past the total cap
    files = load_instructions(home, ws, deep)
    total = sum(len(f.text.encode()) for f in files)
    assert TOTAL_CAP_BYTES - FILE_CAP_BYTES < total <= TOTAL_CAP_BYTES + 100 * len(files)
    assert len(files) < 12  # later files were dropped once the budget ran out
    assert files[0].label == "<reasonix home>/REASONIX.md"  # in precedence order


def test_system_prompt_is_stable_and_has_no_clock(tmp_path: Path) -> None:
    a = system_prompt(tmp_path)
    b = system_prompt(tmp_path)
    assert a == b
    env = environment_summary(tmp_path)
    assert f"workspace root: {tmp_path}" in env and "git repository: no" in env
    (tmp_path / ".git").mkdir()
    assert "git repository: yes" in environment_summary(tmp_path)
    for word in ("date", "time:", "today"):
        assert word not in a.lower()


def test_usage_fields_and_cost() -> None:
    u = Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=600, cache_write_tokens=100)
    assert usage_fields(u) == {
        "input_tokens": 300,
        "output_tokens": 100,
        "cache_read_input_tokens": 600,
        "cache_creation_input_tokens": 100,
    }
    price = {"input": 2.0, "output": 3.0, "cache_read": 0.5, "currency": "CNY"}
    cost = estimate_cost(u, price)
    assert cost is not None and cost.currency == "CNY"
    assert abs(cost.amount - (300 * 2 + 600 * 0.5 + 100 * 2 + 100 * 3) / 1e6) < 1e-9
    assert str(cost).startswith("¥")
    assert estimate_cost(u, None) is None


def test_telemetry_totals_ratio_and_summary() -> None:
    t = Telemetry()
    assert t.cache_hit_ratio is None
    t.add_usage(Usage(input_tokens=100, output_tokens=10))
    t.add_usage(Usage(input_tokens=100, output_tokens=10, cache_read_tokens=100))
    assert t.total.input_tokens == 200 and t.cache_hit_ratio == 0.5
    assert "cost unknown" in t.summary_line(None) and "cache hit 50%" in t.summary_line(None)
    usd = t.summary_line({"input": 1.0, "output": 1.0, "currency": "USD"})
    assert "$" in usd and "(USD)" in usd
    assert t.counters["tool_calls"] == 0 and len(t.counters) == 11
