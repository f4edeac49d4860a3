"""``web_search = true`` end to end against the fakes.

Kinds anthropic and responses send the vendor's search tool; a scripted server-side
search is streamed back, shown (a card with links in the line chat, on stderr in text
mode, a ``web_search`` event in stream-json), recorded in the transcript and counted in
usage. The openai kind has no search: a one-line notice at start, the request unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env
from e2e_term import Term
from fakes import FakeServer, SearchSpec, Turn

HITS = [("Python 3.13 release notes", "https://docs.python.org/3.13/whatsnew/3.13.html"),
        ("PEP 719", "https://peps.python.org/pep-0719/")]  # fmt: skip
SEARCH = SearchSpec("python 3.13 release date", HITS)


def project(ws: Path, kind: str, url: str, *, web_search: bool = True) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
        f'kind = "{kind}"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        f'api_key_env = "FAKE_PROVIDER_KEY"\nweb_search = {"true" if web_search else "false"}\n'
    )


def records(tmp_path: Path) -> list[dict[str, Any]]:
    files = sorted((tmp_path / "rx" / "sessions").glob("*/*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_the_archive_sends_the_tool_and_streams_records_and_counts_a_search(
    pyz: Path, tmp_path: Path, kind: str
) -> None:
    ws = tmp_path / "repo"
    turn = Turn(text="Python 3.13 came out in October 2024.", searches=[SEARCH])
    with FakeServer(kind, [turn]) as srv:
        project(ws, kind, srv.url)
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "--output-format", "stream-json", "when?"],
            cwd=ws, env=clean_env(tmp_path, source_tree=False),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        body = srv.requests[0].json
    assert proc.returncode == 0, proc.stderr
    wanted = {"type": "web_search_20250305", "name": "web_search"}
    assert body["tools"][-1] == (wanted if kind == "anthropic" else {"type": "web_search"})
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    (event,) = [x for x in lines if x["type"] == "web_search"]
    assert event["query"] == SEARCH.query
    assert [r["url"] for r in event["results"]] == [url for _, url in HITS]
    kinds = [x["type"] for x in lines]
    assert kinds.index("web_search") < kinds.index("text")
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["usage"]["server_tool_use"] == {"web_search_requests": 1}
    (record,) = [r for r in records(tmp_path) if r["type"] == "web_search"]
    assert record["query"] == SEARCH.query and record["results"][0]["url"] == HITS[0][1]


def test_text_mode_shows_the_card_on_stderr(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    with FakeServer("anthropic", [Turn(text="October 2024.", searches=[SEARCH])]) as srv:
        project(ws, "anthropic", srv.url)
        proc = subprocess.run(
            [sys.executable, "-m", "reasonix", "run", "when?"],
            cwd=ws, env=clean_env(tmp_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert '⌕ web search "python 3.13 release date" · 2 results' in proc.stderr
    assert f"1. {HITS[0][0]} — {HITS[0][1]}" in proc.stderr
    assert "1 web search" in proc.stderr  # the cost line counts it
    assert proc.stdout.strip() == "October 2024."


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_the_line_chat_renders_a_card_with_links(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "repo"
    with FakeServer(kind, [Turn(text="It is out: October 2024.", searches=[SEARCH])]) as srv:
        project(ws, kind, srv.url)
        env = {**clean_env(tmp_path), "TERM": "xterm-256color"}
        term = Term([sys.executable, "-m", "reasonix", "--plain"], ws, env)
        try:
            term.expect("› ")
            term.send("when is python 3.13 out?\r")
            card = term.expect("October 2024")
            term.expect("› ")
            term.send("/exit\r")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
    assert '⌕ web search "python 3.13 release date" · 2 results' in card
    for title, url in HITS:
        assert f"\033]8;;{url}\033\\{url}\033]8;;\033\\" in card  # an OSC 8 link on a tty
        if kind == "anthropic":
            assert title in card  # Responses reports sources as bare URLs
    (record,) = [r for r in records(tmp_path) if r["type"] == "web_search"]
    assert record["results"][1]["url"] == HITS[1][1]


def test_a_kind_without_search_says_so_and_leaves_the_request_unchanged(tmp_path: Path) -> None:
    bodies, errs = [], []
    ws = tmp_path / "repo"
    for flag in (False, True):
        with FakeServer("openai", [Turn.text_only("hi")]) as srv:
            project(ws, "openai", srv.url, web_search=flag)
            proc = subprocess.run(
                [sys.executable, "-m", "reasonix", "run", "hello"],
                cwd=ws, env=clean_env(tmp_path), capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            bodies.append(srv.requests[0].body)
            errs.append(proc.stderr)
    notice = [line for line in errs[1].splitlines() if "web_search" in line]
    assert len(notice) == 1 and "no server-side web search" in notice[0]
    assert "web_search" not in errs[0]
    assert bodies[0] == bodies[1]  # byte-identical: same tools, same system prompt
