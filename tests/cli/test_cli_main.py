"""The CLI shell: version, help, placeholders, unknown commands, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.cli.main import COMMANDS, PLACEHOLDERS, main

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "reasonix", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_version_and_help() -> None:
    out = run("--version")
    assert out.returncode == 0 and out.stdout.startswith("reasonix ")
    helped = run("--help")
    assert helped.returncode == 0
    for name in [*COMMANDS, *PLACEHOLDERS]:
        assert name in helped.stdout


@pytest.mark.parametrize(
    "name", ["run", "setup", "doctor", "rewind", "replay", "serve", "acp", "subagent", "remote",
             "mcp", "memory", "permission", "config"],
)  # fmt: skip
def test_every_command_of_the_design_is_implemented(name: str) -> None:
    """DESIGN §4: each command has its module (no placeholder left) and answers --help."""
    assert name in COMMANDS and name not in PLACEHOLDERS
    out = run(name, "--help")
    assert out.returncode == 0
    assert "not implemented" not in out.stdout + out.stderr


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err


def test_version_imports_almost_nothing() -> None:
    code = (
        "import sys; from reasonix.cli.main import main; main(['--version']); "
        "print(sorted(m for m in sys.modules if m.startswith('reasonix')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = out.stdout.strip().splitlines()[-1]
    assert "reasonix.config" not in loaded and "reasonix.agent" not in loaded
    check = subprocess.run(
        [sys.executable, "-c", "import sys, reasonix.cli.main; print('argparse' in sys.modules)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert check.stdout.strip() == "False"
