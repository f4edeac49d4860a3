"""`reasonix run` with a bad configuration: exit 2, a message naming the file and the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROVIDER = (
    '[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    'models = ["m"]\napi_key_env = "RX_FAKE_KEY"\n'
)


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('default_model = "nope/x"\n', "default_model"),
        ('default_model = "fake/m"\n[tools]\nenabled = ["no_such_tool"]\n' + PROVIDER,
         "tools.enabled"),
        ('default_model = "fake/m"\n[permissions]\nallow = ["Bash(ls"]\n' + PROVIDER,
         "permissions.allow"),
        ('default_model = "fake/m"\n[sandbox]\nworkspace_root = "/nonexistent/rx"\n' + PROVIDER,
         "sandbox.workspace_root"),
        ('default_model = "bare/m"\n[[providers]]\nname = "bare"\nkind = "openai"\n'
         'models = ["m"]\n', "base_url"),
    ],
)  # fmt: skip
def test_bad_run_config_names_file_and_key(tmp_path: Path, toml: str, key: str) -> None:
    (tmp_path / "reasonix.toml").write_text(toml)
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        REASONIX_HOME=str(tmp_path / "home"),
        RX_FAKE_KEY="k",
    )
    out = subprocess.run(
        [sys.executable, "-m", "reasonix", "run", "hello"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert "reasonix.toml" in out.stderr and key in out.stderr
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr
