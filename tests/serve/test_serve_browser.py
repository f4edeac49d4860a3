"""The page in a real headless Chromium (Debian's), driven by Playwright for Python.

`reasonix serve` runs as a real subprocess against the loopback fake model;
the browser logs in with the token URL, runs the scripted read -> edit -> test
task with one approval (after seeing the diff), reloads mid-turn, watches one
session from two tabs and stops a turn. Screenshots at desktop and phone
widths go to tests/artifacts/serve/ (git-ignored).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, SearchSpec, Turn
from serve_kit import (
    CALC,
    ServeProcess,
    allow_test_run,
    env_for,
    record_sessions,
    task_script,
    write_workspace,
)
from usage_kit import DAY1, DAY2

CHROMIUM = os.environ.get("REASONIX_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "serve"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

pytestmark = [pytest.mark.browser, pytest.mark.interop]

sync_api = pytest.importorskip("playwright.sync_api", reason="MISSING playwright (pip)")
expect = sync_api.expect
expect.set_options(timeout=20_000)
if not (shutil.which(CHROMIUM) or Path(CHROMIUM).is_file()):
    pytest.skip(f"MISSING chromium at {CHROMIUM} (apt install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture
def context(playwright: Any, tmp_path: Path) -> Iterator[Any]:
    """A fresh profile of the system Chromium (nothing downloaded)."""
    ctx = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS, headless=True,
        viewport=DESKTOP,
    )  # fmt: skip
    ctx.set_default_timeout(20_000)
    try:
        yield ctx
    finally:
        ctx.close()


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def send(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def session_of(page: Any) -> str:
    return str(page.evaluate("new URL(location.href).searchParams.get('session')"))


def test_token_login_task_with_one_approval_then_cli_continues(
    context: Any, tmp_path: Path
) -> None:
    with FakeServer("openai", task_script()) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url, extra=allow_test_run())
        serve = ServeProcess(ws, tmp_path, "--auth-mode", "token")
        try:
            assert serve.url.startswith("http://127.0.0.1:") and "/#token=" in serve.url
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            assert "token" not in page.url  # the fragment left the address bar
            cookie = next(c for c in context.cookies() if c["name"] == f"rx_auth_{serve.port}")
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]

            send(page, "fix add() in calc.py")
            expect(page.locator(".msg.user")).to_have_text("fix add() in calc.py")
            expect(page.locator(".msg.assistant").first).to_have_text("Reading calc.py first.")
            card = page.locator(".approval")
            expect(card.locator("h3")).to_contain_text("edit_file: calc.py")
            expect(card.locator(".diff .del")).to_have_text("-return a - b")
            expect(card.locator(".diff .add")).to_have_text("+return a + b")
            expect(card.locator(".rule code").first).to_have_text("Edit(calc.py)")
            expect(page.locator("#stop")).to_be_visible()
            expect(page.locator("#title")).to_have_text("fix add() in calc.py")
            expect(page.locator("#sessions .dot")).to_have_text(" ● working")
            assert (ws / "calc.py").read_text() == CALC  # nothing written before the answer
            shot(page, "desktop-approval")

            card.get_by_role("button", name="Allow once").click()
            expect(card.locator(".answered")).to_have_text("answer: Allow once")
            last = page.locator(".msg.assistant").last
            expect(last).to_have_text("Fixed add() in calc.py; the test passes.")
            expect(last.locator("strong")).to_have_text("add()")
            expect(last.locator("code")).to_have_text("calc.py")
            expect(page.locator("#send")).to_be_visible()
            expect(page.locator(".tool .t-state").last).to_have_text("done")
            expect(page.locator("#cache")).to_have_text(
                "cache 50%"
            )  # 600 of 3 x 100 + 900 prompt tokens
            expect(page.locator("#ctx")).to_contain_text("ctx 930/131.1k")
            expect(page.locator("#mode")).to_have_value("ask")
            expect(page.locator("#sessions .s-title").first).to_have_text("fix add() in calc.py")
            expect(page.locator("#title")).to_have_text("fix add() in calc.py")
            assert (ws / "calc.py").read_text() == CALC.replace("a - b", "a + b")
            shot(page, "desktop-done")
            page.set_viewport_size(PHONE)
            expect(page.locator("#toggle-sidebar")).to_be_visible()
            expect(page.locator("#sidebar")).not_to_be_in_viewport()
            shot(page, "phone-done")
            page.click("#toggle-sidebar")
            expect(page.locator("#sidebar")).to_be_in_viewport(ratio=1)
            page.wait_for_timeout(300)  # the slide-in transition
            shot(page, "phone-sessions")
            sid = session_of(page)
        finally:
            code, _, err = serve.stop()
        assert code == 0, err
        assert serve.url.split("#token=")[1] not in err  # the token is never logged

        # `reasonix -c` continues the very session the browser used
        srv.add(Turn.text_only("Still the same session."))
        proc = subprocess.run(
            [sys.executable, "-m", "reasonix", "run", "-c", "--output-format", "json", "again"],
            cwd=ws, env=env_for(tmp_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["session_id"] == sid
        assert "fix add() in calc.py" in json.dumps(srv.requests[-1].json)


def test_reload_mid_turn_shows_the_rest_once(context: Any, tmp_path: Path) -> None:
    words = [f"w{i} " for i in range(60)]
    with FakeServer("openai", [Turn(text=words, delay=0.05)]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        try:
            page = context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            send(page, "count slowly")
            expect(page.locator(".msg.assistant")).to_contain_text("w5 ")
            page.reload()
            expect(page.locator(".msg.user")).to_have_text("count slowly")
            expect(page.locator("#stop")).to_be_visible()  # still running after the reload
            expect(page.locator(".msg.assistant")).to_have_text("".join(words).strip(),
                                                                timeout=30_000)  # fmt: skip
            expect(page.locator("#send")).to_be_visible()
            assert page.locator(".msg.assistant").count() == 1  # nothing shown twice
            assert page.locator(".msg.user").count() == 1
        finally:
            assert serve.stop()[0] == 0


def test_two_tabs_one_session_and_stop(context: Any, tmp_path: Path) -> None:
    words = [f"tick{i} " for i in range(400)]
    script = [Turn(text=words, delay=0.05), Turn.text_only("second answer")]
    with FakeServer("openai", script) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        try:
            first = context.new_page()
            first.goto(serve.url)
            expect(first.locator("#input")).to_be_enabled()
            sid = session_of(first)
            second = context.new_page()
            second.goto(f"{serve.url}?session={sid}")
            expect(second.locator("#input")).to_be_enabled()

            send(first, "tick away")
            for tab in (first, second):
                expect(tab.locator(".msg.user")).to_have_text("tick away")
                expect(tab.locator(".msg.assistant")).to_contain_text("tick3 ")
            send(second, "a second prompt")  # one turn at a time: refused with a reason
            expect(second.locator("#toast")).to_contain_text("a turn is already running")
            second.click("#stop")
            for tab in (first, second):
                expect(tab.locator(".notice").last).to_have_text("the turn was cancelled")
                expect(tab.locator("#send")).to_be_visible()
            text = first.locator(".msg.assistant").inner_text()
            assert "tick399" not in text
            assert second.locator(".msg.assistant").inner_text() == text
            send(second, "go on")
            for tab in (first, second):
                expect(tab.locator(".msg.assistant").last).to_have_text("second answer")
            shot(first, "desktop-two-tabs")
        finally:
            assert serve.stop()[0] == 0


def test_model_output_is_text_never_markup(context: Any, tmp_path: Path) -> None:
    evil = (
        '<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> '
        "[x](javascript:alert(1))"
    )
    with FakeServer("openai", [Turn.text_only(evil)]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        try:
            page = context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            send(page, "<b>bold?</b>")
            expect(page.locator(".msg.user")).to_have_text("<b>bold?</b>")
            expect(page.locator(".msg.assistant")).to_contain_text("<img src=x")
            assert page.locator("#transcript img, #transcript script, #transcript b").count() == 0
            assert page.locator("#transcript a").count() == 0  # javascript: is not a link
            assert page.evaluate("window.pwned") is None
        finally:
            assert serve.stop()[0] == 0


def test_enter_on_a_command_typed_in_full_runs_it_once_its_completion_shows(
    context: Any, tmp_path: Path
) -> None:
    with FakeServer("openai", [Turn.text_only("unused")]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        try:
            page = context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            page.locator("#input").press_sequentially("/model")
            expect(page.locator("#completions li").first.locator(".c-text")).to_have_text("/model")
            page.press("#input", "Enter")  # the completion is open: it still runs the command
            expect(page.locator("#picker")).to_be_visible()
            expect(page.locator("#input")).to_have_value("")
        finally:
            assert serve.stop()[0] == 0


def test_composer_completes_commands_and_files(context: Any, tmp_path: Path) -> None:
    with FakeServer("openai", [Turn.text_only("I read calc.py.")]) as srv:
        ws = write_workspace(tmp_path / "repo", srv.url)
        serve = ServeProcess(ws, tmp_path)
        try:
            page = context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            page.locator("#input").press_sequentially("/he")
            items = page.locator("#completions li")
            expect(items.first.locator(".c-text")).to_have_text("/help")
            expect(items.first.locator(".c-desc")).not_to_be_empty()
            shot(page, "desktop-slash-completion")
            page.press("#input", "Tab")
            expect(page.locator("#input")).to_have_value("/help ")
            page.press("#input", "Enter")
            expect(page.locator(".msg.command pre")).to_contain_text("/new")
            send(page, "/model")
            expect(page.locator("#picker")).to_be_visible()
            page.get_by_role("button", name="fake/fake-model").click()
            expect(page.locator("#picker")).to_be_hidden()
            expect(page.locator(".msg.command pre").last).to_contain_text("fake/fake-model")
            page.locator("#input").press_sequentially("explain @ca")
            expect(items.first.locator(".c-text")).to_have_text("@calc.py")
            page.press("#input", "Enter")  # accepts the completion, does not send
            expect(page.locator("#input")).to_have_value("explain @calc.py ")
            page.press("#input", "Enter")
            expect(page.locator(".msg.user")).to_have_text("explain @calc.py")
            expect(page.locator(".msg.assistant")).to_have_text("I read calc.py.")
        finally:
            assert serve.stop()[0] == 0
        assert "return a - b" in json.dumps(srv.requests[0].json)  # the file went along


def test_a_provider_web_search_is_a_card_with_safe_links(context: Any, tmp_path: Path) -> None:
    hits = [("Release notes", "https://docs.python.org/3.13/whatsnew/3.13.html"),
            ("<b>evil</b>", "javascript:window.pwned=1")]  # fmt: skip
    turn = Turn(text="October 2024.", searches=[SearchSpec("python 3.13 release", hits)])
    with FakeServer("anthropic", [turn]) as srv:
        ws = write_workspace(
            tmp_path / "repo", srv.url, kind="anthropic", extra="web_search = true\n"
        )
        serve = ServeProcess(ws, tmp_path)
        try:
            page = context.new_page()
            page.goto(serve.url)
            expect(page.locator("#input")).to_be_enabled()
            send(page, "when?")
            card = page.locator(".search")
            expect(card.locator(".t-sum")).to_have_text("python 3.13 release")
            links = card.locator("a")
            expect(links).to_have_count(1)  # javascript: is never a link
            expect(links.first).to_have_attribute("href", hits[0][1])
            expect(links.first).to_have_attribute("rel", "noopener noreferrer")
            expect(card.locator("li").nth(1)).to_contain_text("<b>evil</b>")
            expect(page.locator(".msg.assistant")).to_have_text("October 2024.")
            page.reload()  # the transcript's record draws the same card
            expect(page.locator(".search .t-sum")).to_have_text("python 3.13 release")
            expect(page.locator(".search a")).to_have_count(1)
            shot(page, "desktop-web-search")
        finally:
            assert serve.stop()[0] == 0


def test_usage_view_shows_the_report(context: Any, tmp_path: Path) -> None:
    """The Usage view: totals, a row with a bar per day, unpriced named, the basis, top sessions."""
    ws, other = tmp_path / "repo", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    top = record_sessions(ws, other)
    (ws / "reasonix.toml").write_text('default_model = "local/priced"\n')
    serve = ServeProcess(ws, tmp_path, "--auth-mode", "token")
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(serve.url)
        expect(page.locator("#input")).to_be_enabled()
        page.click("#usage-button")
        expect(page.locator("#title")).to_have_text("Usage")
        expect(page.locator("#transcript")).to_be_hidden()
        totals = page.locator("#usage-totals")
        # priced: (400 + 600 * 0.5 + 100 * 2) + (2000 + 200 * 2) + sub-agent (300 + 30 * 2) per 1e6
        expect(totals.locator(".u-cost .u-value")).to_have_text("$0.0037 + unpriced: 1 req")
        expect(totals).to_contain_text("requests4")
        rows = page.locator("#usage-rows tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator(".u-key")).to_have_text(DAY1)
        expect(rows.nth(1).locator(".u-costcell")).to_have_text("$0.0028 + unpriced: 1 req")
        widths = [rows.nth(i).locator(".u-fill").evaluate("e => e.getBoundingClientRect().width")
                  for i in range(2)]  # fmt: skip
        assert 0 < widths[0] < widths[1]  # day 2 has the most tokens: the longest bar
        expect(page.locator("#usage-subagents")).to_have_text(
            "sub-agents: 1 of 4 requests, 8% of tokens, cost $0.0004"
        )
        expect(page.locator("#usage-top li").first).to_contain_text(top)
        basis = page.locator("#usage-basis li")
        expect(basis.filter(has_text="local/free")).to_have_text(
            "local/free: unpriced (no price in config or presets; not in cost)"
        )
        expect(basis.filter(has_text="local/priced")).to_contain_text("cache discount applied")
        shot(page, "desktop-usage")

        page.select_option("#usage-by", "model")
        page.check("#usage-all")
        page.click("#usage-form button[type=submit]")
        expect(page.locator("#usage-rows tbody tr")).to_have_count(2)
        expect(page.locator("#usage-totals")).to_contain_text("requests5")
        page.fill("#usage-since", DAY2)
        page.fill("#usage-until", DAY1)
        page.click("#usage-form button[type=submit]")
        expect(page.locator("#usage-error")).to_have_text("usage: since is after until")
        expect(page.locator("#usage-totals")).to_have_count(0)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(300)  # the sidebar's slide-out transition
        shot(page, "phone-usage")
        page.set_viewport_size(DESKTOP)

        page.click("#usage-close")
        expect(page.locator("#transcript")).to_be_visible()
        expect(page.locator("#usage")).to_be_hidden()
    finally:
        assert serve.stop()[0] == 0
