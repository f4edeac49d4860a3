"""Helpers for the Remote-SSH CLI tests: the local environment, the CLI, process scans.

The fake API key exists only in the local environment; the remote (this
machine under a temp HOME, reached through sshd) must never see it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from remote.sshd_kit import Sshd

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-fake-LOCAL-ONLY-7731"


def local_env(tmp_path: Path, pyz: Path) -> dict[str, str]:
    """The environment of the LOCAL side: the only place the key exists."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
        "HOME": str(tmp_path / "lhome"),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(tmp_path / "lrx"),
        "FAKE_PROVIDER_KEY": KEY,
        "REASONIX_REMOTE_PYZ": str(pyz),
        "PYTHONPATH": str(ROOT),
    }


def cli(env: dict[str, str], *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reasonix", *args], env=env, cwd=env["HOME"] if
                          Path(env["HOME"]).is_dir() else None, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def add_box(env: dict[str, str], sshd: Sshd, url: str) -> None:
    Path(env["HOME"]).mkdir(exist_ok=True)
    rx = Path(env["REASONIX_HOME"])
    rx.mkdir(exist_ok=True)
    (rx / "config.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    opts = [a for o in sshd.host_options() for a in ("-o", o)]
    res = cli(env, "remote", "add", "box", f"{sshd.user}@127.0.0.1", "-p", str(sshd.port),
              "-i", str(sshd.client_key), "-F", str(sshd.ssh_config), *opts)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "[[remote.hosts]]" in (rx / "config.toml").read_text()


def remote_processes(rhome: Path) -> dict[int, bytes]:
    """environ + cmdline of every process whose HOME is the remote home (started by sshd)."""
    found = {}
    marker = f"HOME={rhome}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found[int(entry.name)] = environ + b"\0" + cmdline
    return found


def all_cmdlines() -> dict[int, bytes]:
    """Every readable /proc/*/cmdline of this machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = (entry / "cmdline").read_bytes()
            except OSError:
                continue
    return found


def files_containing(root: Path, secret: str) -> list[Path]:
    """Files under ``root`` whose bytes contain ``secret``."""
    needle = secret.encode()
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]
