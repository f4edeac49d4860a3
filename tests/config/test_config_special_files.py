"""Issue 12 item 1: a special or oversized file where a config file is expected.

Every config reader (project ``reasonix.toml``, home ``config.toml``,
``.mcp.json``, the project and home ``.env``, the TOML editor behind
``reasonix mcp add``) refuses a FIFO, a device, a socket or a file over its
cap with a ConfigError naming the file — at once, never blocking or reading
without end. Before the fix a FIFO blocked forever and ``/dev/zero`` grew
until the OOM killer ended the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import SHAPES, plant

from reasonix.config import load
from reasonix.config.dotenv import read_dotenv, update_dotenv
from reasonix.config.safe_read import CONFIG_LIMIT, open_regular, read_bytes, read_text
from reasonix.config.tomledit import set_key
from reasonix.errors import ConfigError, SessionError

ROOT = Path(__file__).resolve().parents[2]
PROVIDER = (
    'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
    'base_url = "http://127.0.0.1:9/v1"\nmodels = ["m"]\napi_key_env = "RX_FAKE_KEY"\n'
)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_helper_refuses_every_shape_at_once(tmp_path: Path, shape: str) -> None:
    target = plant(tmp_path / "f", shape)
    with pytest.raises(ConfigError) as info:
        read_bytes(target, CONFIG_LIMIT)
    assert info.value.file == str(target)
    assert "regular file" in str(info.value) or "too large" in str(info.value)


def test_the_helper_reads_regular_files_and_symlinks_to_them(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("a = 1\n")
    (tmp_path / "link.toml").symlink_to(real)
    assert read_text(tmp_path / "link.toml", 100) == "a = 1\n"
    with pytest.raises(ConfigError, match="is a symlink"):
        read_text(tmp_path / "link.toml", 100, follow=False)
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing", 100)
    with pytest.raises(IsADirectoryError):
        read_text(tmp_path, 100)
    with pytest.raises(SessionError, match="too large"):  # the caller picks the error type
        read_text(real, 3, error=SessionError)
    assert read_bytes(real, 3, truncate=True) == b"a = "  # cut, one byte over to tell


def test_the_helper_checks_the_open_descriptor(tmp_path: Path) -> None:
    fifo = plant(tmp_path / "p", "fifo")
    with pytest.raises(ConfigError, match="FIFO"):
        open_regular(fifo, writable=True)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "reasonix.toml").write_text(PROVIDER)
    return ws, home


READERS: dict[str, Callable[[Path, Path], Path]] = {
    "project reasonix.toml": lambda ws, home: ws / "reasonix.toml",
    "home config.toml": lambda ws, home: home / "config.toml",
    ".mcp.json": lambda ws, home: ws / ".mcp.json",
    "project .env": lambda ws, home: ws / ".env",
    "hooks settings": lambda ws, home: ws / ".claude" / "settings.json",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("which", sorted(READERS))
def test_load_refuses_a_hostile_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str, shape: str
) -> None:
    ws, home = _project(tmp_path)
    monkeypatch.setenv("REASONIX_HOME", str(home))
    target = plant(READERS[which](ws, home), shape)
    with pytest.raises(ConfigError) as info:
        load(ws)
    assert str(target) in str(info.value)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("shape", SHAPES)
def test_home_env_and_editors_refuse_too(tmp_path: Path, shape: str) -> None:
    env = plant(tmp_path / ".env", shape)
    with pytest.raises(ConfigError, match=r"\.env"):
        read_dotenv(env)
    with pytest.raises(ConfigError, match=r"\.env"):
        update_dotenv(env, {"K": "v"})
    toml = plant(tmp_path / "config.toml", shape)
    with pytest.raises(ConfigError, match=r"config\.toml"):
        set_key(toml, "agent", "compact_ratio", 0.7)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape", ["fifo", "dev-zero", "huge"])
@pytest.mark.parametrize("which", sorted(READERS))
def test_run_json_reports_the_file_and_exits_2(tmp_path: Path, which: str, shape: str) -> None:
    ws, home = _project(tmp_path)
    target = plant(READERS[which](ws, home), shape)
    env = dict(os.environ, PYTHONPATH=str(ROOT), REASONIX_HOME=str(home), RX_FAKE_KEY="k")
    out = subprocess.run(
        [sys.executable, "-m", "reasonix", "run", "--output-format", "json", "hi"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=45,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    result = json.loads(out.stdout)  # exactly one object on stdout
    assert result["is_error"] is True and result["error"]["type"] == "ConfigError"
    assert str(target) in result["error"]["message"]
    assert "Traceback" not in out.stderr
