"""`reasonix usage`: the offline report over recorded transcripts (issue 36 items 1 and 5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from usage_kit import DAY1, DAY2, usage_session

from reasonix.cli.main import main
from reasonix.provider.types import Usage


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = Path(os.environ["REASONIX_HOME"])
    (home / "config.toml").write_text(
        '[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'models = ["priced", "free"]\n'
        "[providers.prices]\npriced = { input = 1.0, output = 2.0, cache_read = 0.5 }\n"
    )
    return ws


def _recorded(ws: Path) -> tuple[str, str]:
    a = usage_session(ws, "local/priced", [
        (DAY1, Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=600)),
        (DAY2, Usage(input_tokens=2000, output_tokens=200, reasoning_tokens=20)),
    ])  # fmt: skip
    b = usage_session(ws, "local/free", [(DAY2, Usage(input_tokens=500, output_tokens=50))])
    usage_session(ws, "local/priced", [(DAY2, Usage(input_tokens=300, output_tokens=30))],
             subagent={"profile": "explore", "depth": 1, "parent_session": a})  # fmt: skip
    return a, b


def _json(ws: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["usage", "--dir", str(ws), "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_totals_costs_unpriced_and_subagents(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _recorded(ws)
    got = _json(ws, capsys)
    t = got["total"]
    assert t["requests"] == 4 and t["prompt_tokens"] == 3800
    assert t["input_tokens"] == 3200 and t["cache_read_input_tokens"] == 600
    assert t["output_tokens"] == 380 and t["reasoning_tokens"] == 20
    # priced: (400*1 + 600*0.5 + 100*2) + (2000*1 + 200*2) + sub-agent (300*1 + 30*2), per 1e6
    assert t["cost"] == {"USD": round((900 + 2400 + 360) / 1e6, 6)}
    assert t["unpriced"] == {"requests": 1, "models": ["local/free"]}  # not summed as 0
    assert t["subagent"] == {"requests": 1, "tokens": 330, "cost": {"USD": 0.00036}}
    assert [r["key"] for r in got["rows"]] == [DAY1, DAY2]
    assert got["top_sessions"][0]["key"] == a  # the sub-agent's spend counts for its parent
    assert got["top_sessions"][0]["requests"] == 3
    basis = {x["model"]: x for x in got["price_basis"]}
    assert basis["local/free"]["source"] == "unpriced"
    assert basis["local/priced"]["cache_discount"] is True
    assert "config" in basis["local/priced"]["source"]
    by_model = {r["key"]: r for r in _json(ws, capsys, "--by", "model")["rows"]}
    assert by_model["local/free"]["cost"] == {} and by_model["local/free"]["requests"] == 1
    sessions = {r["key"] for r in _json(ws, capsys, "--by", "session")["rows"]}
    assert sessions == {a, b}


def test_dates_filter_inclusive(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _recorded(ws)
    assert _json(ws, capsys, "--until", DAY1)["total"]["requests"] == 1
    assert _json(ws, capsys, "--since", DAY2)["total"]["requests"] == 3
    assert _json(ws, capsys, "--since", "2026-04-01")["total"]["requests"] == 0


def test_other_projects_only_with_all_projects(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(ws)
    other = tmp_path / "other"
    other.mkdir()
    usage_session(other, "local/priced", [(DAY1, Usage(input_tokens=10, output_tokens=1))])
    assert _json(ws, capsys)["total"]["requests"] == 4
    everything = _json(ws, capsys, "--all-projects", "--by", "project")
    assert everything["total"]["requests"] == 5
    assert {r["key"] for r in everything["rows"]} == {str(ws), str(other)}


def test_text_has_a_day_chart_and_states_the_basis(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(ws)
    assert main(["usage", "--dir", str(ws)]) == 0
    out = capsys.readouterr().out
    day2 = next(line for line in out.splitlines() if line.startswith(f"  {DAY2}  #"))
    day1 = next(line for line in out.splitlines() if line.startswith(f"  {DAY1}  #"))
    assert day2.count("#") == 40 and 0 < day1.count("#") < 40
    assert "unpriced: 1 req" in out
    assert "local/free: unpriced" in out and "cache discount applied" in out
    assert "sub-agents: 1 of 4 requests" in out


def test_csv(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _recorded(ws)
    assert main(["usage", "--dir", str(ws), "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("key,requests,input_tokens")
    assert [x.split(",")[0] for x in lines[1:]] == [DAY1, DAY2, "total"]


def test_no_usage_says_so(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", "--dir", str(ws)]) == 0
    assert "no usage recorded" in capsys.readouterr().out
