"""Issue 32, with real bubblewrap: Reasonix's secrets are masked inside the jail.

The run's sandbox comes from the composition root (``boot.permissions.tool_context``),
bash is the real built-in tool and the hook runner is the runtime's own
(``boot.parts.hooks_for``): ``cat`` of each secret yields nothing, in bash and in
a hook, while the rest of the home stays readable. The Reasonix home lives under
/var/tmp: the jail's own /tmp is private, which would hide a home under /tmp for
the wrong reason.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix import config
from reasonix.agent.session import Session
from reasonix.boot.parts import hooks_for
from reasonix.boot.permissions import tool_context
from reasonix.config import paths
from reasonix.config.hooks import HookSpec
from reasonix.tool import ToolContext
from reasonix.tool.builtin import bash

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)",
)

SECRETS = {
    ".env": "DEEPSEEK_API_KEY=SECRET-ENV",
    "mcp-oauth/srv.json": '{"access_token": "SECRET-OAUTH"}',
    "serve-password": "pbkdf2_sha256$1$SECRET-HASH$x",
    "remote/serve/.env": "REASONIX_BROKER_TOKEN=SECRET-BROKER",
    "remote/serve/token": "SECRET-LOGIN-TOKEN-0123456789",
}


@pytest.fixture
def outside() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="rx-secrets-", dir="/var/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def run(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    home = outside / "rx"
    for rel, text in SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")
    (home / "config.toml").write_text('[sandbox]\nbash = "enforce"\n# ordinary-config\n')
    (outside / "serve-token").write_text("SECRET-TOKEN-FILE-0123456789\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(home / ".env")
    monkeypatch.setenv("REASONIX_HOME", str(home))
    monkeypatch.setattr(paths, "_registered", [])
    paths.register_secret(outside / "serve-token")
    with Session.create(ws) as session:
        yield tool_context(config.load(ws), ws, session, headless=True)


def _targets() -> list[str]:
    home = paths.home_dir()
    return [str(home / rel) for rel in SECRETS] + [str(home.parent / "serve-token"), "link"]


def _script() -> str:
    reads = [f"cat {t}" for t in _targets()]
    reads += [f"cat {paths.home_dir()}/mcp-oauth/*", f"cat {paths.home_dir()}/config.toml"]
    return "; ".join(f"{r} 2>&1" for r in reads) + "; true"


def test_cat_of_each_secret_in_the_bash_jail_yields_nothing(run: ToolContext) -> None:
    assert run.sandbox.mode == "enforce"
    res = bash.TOOL.execute(json.dumps({"command": _script()}), run)
    assert "ordinary-config" in res.content, res.content  # the home itself is visible
    assert "SECRET" not in res.content, res.content


def test_a_hook_in_the_same_jail_cannot_read_them(run: ToolContext) -> None:
    cfg = config.load(Path(run.workspace))
    cfg.hooks = [HookSpec("SessionStart", "", _script(), 30.0, "test")]
    runner = hooks_for(cfg, Path(run.workspace), run, lambda: {"session_id": "s"})
    assert runner is not None
    outcome = runner.run("SessionStart", {"source": "startup"})
    context = "\n".join(outcome.context)
    assert "ordinary-config" in context, (context, outcome.notices)
    assert "SECRET" not in context, context
