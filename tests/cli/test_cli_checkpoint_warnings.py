"""``reasonix run``: a damaged checkpoint store is said in the run that finds it, in text
mode and in the JSON ``warnings`` — its turn's end is recorded after the answer, so the
run waits for it before its result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

ROOT = Path(__file__).resolve().parents[2]


def _run(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", "run", "--yolo", *args], cwd=ws, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _script(content: str) -> list[Turn]:
    write = json.dumps({"path": "a.txt", "content": content})
    return [Turn.tools([ToolSpec("write_file", write)]), Turn.text_only("written")]


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_damaged_store_is_a_warning_of_the_run_that_finds_it(tmp_path: Path, fmt: str) -> None:
    ws, home = tmp_path / "repo", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), REASONIX_HOME=str(home))
    (ws / "a.txt").write_text("start\n")
    with FakeServer("openai", _script("one\n") + _script("two\n")) as srv:
        (ws / "reasonix.toml").write_text(
            f'default_model = "local/m"\n[[providers]]\nname = "local"\nkind = "openai"\n'
            f'base_url = "{srv.url}/v1"\nmodels = ["m"]\n'
        )
        first = _run(ws, env, "--json", "write one")
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout.strip().splitlines()[-1])["warnings"] == []
        (heads,) = list(home.glob("checkpoints/*/git/HEAD"))
        heads.write_text("garbage\n")  # only git reads it: our own writes go on as before
        args = ["--json"] if fmt == "json" else []
        second = _run(ws, env, *args, "write two")
    assert second.returncode == 0, second.stderr
    assert (ws / "a.txt").read_text() == "two\n"
    if fmt == "json":
        warnings = json.loads(second.stdout.strip().splitlines()[-1])["warnings"]
    else:
        # at the run's end, or in the turn: a turn recorded from its files asks git (check-
        # ignore) at its first write, which finds the damage there
        warnings = [ln for ln in second.stderr.splitlines() if ln.startswith(("reasonix: ", "["))]
    off = [w for w in warnings if "checkpoints are off for the rest of this session" in w]
    assert len(off) == 1, warnings
