"""Issue 32: serve's ``@`` completion and expansion never offer or attach a Reasonix secret."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fakes import FakeServer, Turn
from serve_kit import Client, ServeProcess, running, turn_end, write_workspace

from reasonix.config import paths
from reasonix.serve.wire import display_user_text


def test_at_completion_and_expansion_skip_secrets(tmp_path: Path) -> None:
    home = paths.home_dir()  # the test's own REASONIX_HOME (tests/conftest.py)
    (home / "mcp-oauth").mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text("DEEPSEEK_API_KEY=SECRET-ENV\n")
    (home / "serve-password").write_text("pbkdf2_sha256$1$SECRET$x\n")
    (home / "mcp-oauth" / "srv.json").write_text('{"access_token": "SECRET-OAUTH"}')
    (home / "notes.md").write_text("ordinary\n")
    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        ws = write_workspace(
            tmp_path / "repo", srv.url, extra='\n[sandbox]\nforbid_read = ["hidden"]\n'
        )
        (ws / "hidden").mkdir()
        with running(ws) as app:
            c = Client(app.port)
            c.hello()
            sid = c.new_session()
            _, comp = c.get(f"/api/sessions/{sid}/complete?q=" + quote(f"look @{home}/", safe=""))
            offered = [i["text"] for i in comp["items"]]
            assert f"@{home}/notes.md" in offered
            assert not [t for t in offered if t.endswith(("/.env", "/serve-password", "oauth/"))]
            _, comp = c.get(f"/api/sessions/{sid}/complete?q=" + quote("@hi", safe=""))
            assert comp["items"] == []  # forbid_read from the run's config
            s = c.events(sid)
            c.post(f"/api/sessions/{sid}/prompt", {"text": f"read @{home}/.env please"})
            s.until(turn_end)
            s.close()
    sent = display_user_text(srv.requests[0].json["messages"][-1]["content"])
    assert "SECRET" not in str(srv.requests[0].json)
    assert sent.endswith("please")


def test_the_token_file_is_a_secret_of_the_serve_process(tmp_path: Path) -> None:
    """`reasonix serve --token-file F` registers F: @ completion does not offer it."""
    ws = write_workspace(tmp_path / "repo", "http://127.0.0.1:9")
    (ws / "serve-notes.md").write_text("ordinary\n")
    serve = ServeProcess(ws, tmp_path, "--token-file", str(ws / "serve-token"))
    try:
        token = (ws / "serve-token").read_text().strip()
        c = Client(serve.port)
        c.hello()
        assert c.login(token) == 200
        sid = c.new_session()
        _, comp = c.get(f"/api/sessions/{sid}/complete?q=" + quote("@serve", safe=""))
        assert [i["text"] for i in comp["items"]] == ["@serve-notes.md"]
    finally:
        serve.stop()
