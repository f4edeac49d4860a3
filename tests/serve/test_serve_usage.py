"""`GET /api/usage`: `reasonix usage --json` over HTTP for the page's Usage view (issue 36 item 1).

The route is behind the serve auth, answers exactly what the CLI prints for the
same options over the same recorded sessions, and turns a bad query into a 400
with a message (never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from serve_kit import Client, record_sessions, running
from usage_kit import DAY1, DAY2

from reasonix.cli.main import main


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    record_sessions(ws, other)
    return ws


def _cli(ws: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["usage", "--dir", str(ws), "--json", *flags]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


CASES = [
    ("", []),
    ("?by=model", ["--by", "model"]),
    ("?by=session&since=" + DAY2, ["--by", "session", "--since", DAY2]),
    ("?until=" + DAY1, ["--until", DAY1]),
    ("?by=project&all_projects=1", ["--by", "project", "--all-projects"]),
    ("?all_projects=1&since=2026-04-01", ["--all-projects", "--since", "2026-04-01"]),
]


def test_the_route_answers_what_usage_json_prints(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        for query, flags in CASES:
            status, got = c.get("/api/usage" + query)
            assert status == 200, (query, got)
            assert got == _cli(ws, capsys, flags), query
        # the figures are real ones, not two empty reports agreeing
        status, got = c.get("/api/usage")
        assert got["total"]["requests"] == 4 and got["total"]["unpriced"]["requests"] == 1
        assert got["total"]["subagent"]["requests"] == 1
        assert [r["key"] for r in got["rows"]] == [DAY1, DAY2]
        status, everything = c.get("/api/usage?all_projects=1")
        assert everything["total"]["requests"] == 5


def test_the_route_needs_the_login(ws: Path) -> None:
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        c.hello()
        status, got = c.get("/api/usage")
        assert status == 401 and "total" not in got
        assert c.login(app.secrets.token) == 200
        status, got = c.get("/api/usage")
        assert status == 200 and got["total"]["requests"] == 4


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?since=2026-13-01", "since is not a date (YYYY-MM-DD): '2026-13-01'"),
        ("?until=yesterday", "until is not a date (YYYY-MM-DD): 'yesterday'"),
        (f"?since={DAY2}&until={DAY1}", "since is after until"),
        ("?by=week", "by must be one of day, model, session, project"),
        ("?all_projects=maybe", "all_projects must be 1 or 0"),
        ("?since=2026-03-01&since=2026-03-02", "give since once"),
        ("?sinse=2026-03-01", "unknown option 'sinse'"),
    ],
)
def test_a_bad_query_is_a_400_with_a_reason(ws: Path, query: str, message: str) -> None:
    with running(ws) as app:
        c = Client(app.port)
        c.hello()
        status, got = c.get("/api/usage" + query)
        assert status == 400, got
        assert message in got["error"] and "Traceback" not in got["error"]
        assert not any("internal error" in line for line in app.lines)  # type: ignore[attr-defined]
