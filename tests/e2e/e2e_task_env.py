"""Shared set-up for the task e2e tests: a workspace wired to a fake provider."""

from __future__ import annotations

import os
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def write_project(ws: Path, url: str, kind: str = "openai") -> None:
    """``ws/reasonix.toml`` with one provider of ``kind`` pointing at the fake at ``url``."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
        f'kind = "{kind}"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def clean_env(tmp_path: Path, *, source_tree: bool = True) -> dict[str, str]:
    """A minimal environment: fresh REASONIX_HOME, the fake key, and (for ``-m``) PYTHONPATH."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(tmp_path / "rx"),
        "FAKE_PROVIDER_KEY": "sk-fake",
    }
    if source_tree:
        env["PYTHONPATH"] = str(ROOT)
    return env


def clean_python(tmp_path: Path) -> str:
    """This interpreter in a virtual environment of its own, under ``tmp_path/venv``: no
    ``.pth`` file (the development environment's editable install imports pathlib, re,
    enum and more at start-up) loads a module before the program does."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "venv")
    return str(tmp_path / "venv" / "bin" / "python")
