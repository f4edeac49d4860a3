"""Issue 32: ``@`` references and their completion never reach a Reasonix secret.

Both read the one list (``config.paths.secret_paths()``), including a serve
``--token-file`` registered for the process; completion also hides
``forbid_read`` entries (a name that would only be refused is not offered).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.command.refs import complete_reference, expand_references
from reasonix.config import paths

SECRETS = {
    ".env": "DEEPSEEK_API_KEY=SECRET-ENV",
    "mcp-oauth/srv.json": '{"access_token": "SECRET-OAUTH"}',
    "serve-password": "pbkdf2_sha256$1$SECRET-HASH$x",
    "remote/serve/.env": "REASONIX_BROKER_TOKEN=SECRET-BROKER",
    "remote/serve/token": "SECRET-LOGIN-TOKEN-0123456789",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rx = tmp_path / "rx"
    for rel, text in SECRETS.items():
        (rx / rel).parent.mkdir(parents=True, exist_ok=True)
        (rx / rel).write_text(text + "\n")
    (rx / "config.toml").write_text("[agent]\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "serve-token").write_text("SECRET-TOKEN-FILE-0123456789\n")
    (ws / "app.py").write_text("print('hi')\n")
    (ws / "private").mkdir()
    (ws / "link").symlink_to(rx / ".env")
    monkeypatch.setenv("REASONIX_HOME", str(rx))
    monkeypatch.setattr(paths, "_registered", [])
    paths.register_secret(ws / "serve-token")
    return rx


def test_no_secret_is_attached(home: Path) -> None:
    ws = home.parent / "ws"
    refs = [f"@{home / rel}" for rel in SECRETS] + ["@serve-token", "@link", f"@{home}/mcp-oauth"]
    out, notes = expand_references(" ".join(refs) + " @app.py", workspace=ws)
    assert "SECRET" not in out
    assert "print('hi')" in out  # an ordinary file still is
    assert len(notes) == len(refs) and all("was not attached" in n for n in notes)
    listing, _ = expand_references(f"@{home}", workspace=ws)  # a listing of the home
    block = listing.split("\n\n")[0]
    assert "config.toml" in block
    for name in (".env", "mcp-oauth", "serve-password", "token"):
        assert name not in block.split("\n")


def test_completion_offers_no_secret(home: Path) -> None:
    ws = home.parent / "ws"
    offered = [c.text for c in complete_reference(f"@{home}/", workspace=ws)]
    assert f"@{home}/config.toml" in offered
    assert not any(t.endswith(("/.env", "mcp-oauth/", "serve-password")) for t in offered)
    offered = [c.text for c in complete_reference(f"@{home}/.", workspace=ws)]
    assert f"@{home}/.env" not in offered
    offered = [c.text for c in complete_reference(f"@{home}/remote/serve/", workspace=ws)]
    assert offered == []
    offered = [c.text for c in complete_reference("@", workspace=ws, forbid_read=[ws / "private"])]
    assert offered == ["@app.py"]  # not the token file, the link to .env, nor forbid_read
