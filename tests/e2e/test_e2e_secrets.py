"""Issue 32 against the built .pyz: in ``run -y`` the model cannot read ``<home>/.env``.

The scripted model asks bash to read the home ``.env`` (which holds a fake key)
in several spellings; the run is headless, so the classifier's Ask fails
closed. Neither the tool results the model gets back, the JSON output, nor the
session transcript holds the key. Two set-ups: the sandbox off (the classifier
is all there is) and bubblewrap enforced with the home where the jail can see
it (/var/tmp: the jail's /tmp is private).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_task_env import clean_env
from fakes import FakeServer, ToolSpec, Turn

KEY = "sk-e2e-LEAKME-6f1c2a9b7d"
ENV_TEXT = f"OTHER_API_KEY={KEY}\n"


@pytest.fixture
def outside() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="rx-e2e-secrets-", dir="/var/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _commands(home: Path) -> list[str]:
    return [
        f"cat {home}/.env",
        "cat $REASONIX_HOME/.env",
        'base64 "$REASONIX_HOME/.env"',
        f"python3 -c \"print(open('{home}/.env').read())\"",
        f"cp {home}/.env leaked.txt && cat leaked.txt",
        "cat notes.txt",  # a symlink in the workspace
    ]


@pytest.mark.parametrize("sandbox", ["off", "enforce"])
def test_run_y_never_shows_the_home_env(
    tmp_path: Path, outside: Path, pyz: Path, sandbox: str
) -> None:
    if sandbox == "enforce" and (
        not sys.platform.startswith("linux") or shutil.which("bwrap") is None
    ):
        pytest.skip("MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)")
    env = clean_env(tmp_path, source_tree=False)
    home = outside / "rx"
    home.mkdir()
    env["REASONIX_HOME"] = str(home)
    (home / ".env").write_text(ENV_TEXT)
    (home / ".env").chmod(0o600)
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "notes.txt").symlink_to(home / ".env")
    calls = [
        ToolSpec("bash", json.dumps({"command": c}), id=f"call_{k}")
        for k, c in enumerate(_commands(home))
    ]
    script = [Turn.tools(calls), Turn.text_only("nothing to see")]
    with FakeServer("openai", script) as srv:
        (home / "config.toml").write_text(
            'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
            f'kind = "openai"\nbase_url = "{srv.url}"\nmodels = ["fake-model"]\n'
            f'api_key_env = "FAKE_PROVIDER_KEY"\n\n[sandbox]\nbash = "{sandbox}"\n'
        )
        proc = subprocess.run(
            [sys.executable, str(pyz), "run", "-y", "--output-format", "json", "show the keys"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        requests = [r.json for r in srv.requests]
    assert proc.returncode == 0, proc.stderr
    assert len(requests) == 2, requests
    results = [m for m in requests[1]["messages"] if m.get("role") == "tool"]
    assert len(results) == len(calls)
    for message in results:
        assert "secret" in str(message["content"]), message  # refused, and it says why
    encoded = base64.b64encode(ENV_TEXT.encode()).decode()
    transcripts = "".join(p.read_text() for p in (home / "sessions").rglob("*.jsonl"))
    assert transcripts, "no session transcript was written"
    for where, text in [
        ("the model's requests", json.dumps(requests)),
        ("the JSON output", proc.stdout),
        ("stderr", proc.stderr),
        ("the transcript", transcripts),
    ]:
        assert KEY not in text and encoded not in text, where
    assert not (ws / "leaked.txt").exists()
    assert json.loads(proc.stdout.strip().splitlines()[-1])["type"] == "result"
