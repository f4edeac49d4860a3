"""Which failures the sandbox caused: real bubblewrap output, then the message shapes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix.permission.sandbox import SandboxSettings, wrap_command
from reasonix.permission.sandbox.blame import sandbox_blame

needs_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)",
)


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """A writable directory outside /tmp (the jail's /tmp is private, so it shows EROFS)."""
    path = Path(tempfile.mkdtemp(prefix="rx-blame-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _jailed(script: str, ws: Path, *, network: bool = True) -> str:
    settings = SandboxSettings(mode="enforce", workspace=ws, cache_roots=[], network=network)
    argv, env = wrap_command(["bash", "-c", script], settings, dict(os.environ))
    done = subprocess.run(argv, env=env, cwd=ws, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0, done
    return done.stdout + done.stderr


@needs_bwrap
@pytest.mark.parametrize(
    "script",
    [
        "touch {d}/a",
        "echo hi > {d}/b",
        "mkdir {d}/c",
        'python3 -c \'open("{d}/e", "w")\'',
        "cd {d} && touch relative",
    ],
)
def test_writes_outside_the_roots_are_blamed_on_the_sandbox(
    tmp_path: Path, var_dir: Path, script: str
) -> None:
    out = _jailed(script.format(d=var_dir), tmp_path)
    blame = sandbox_blame(out, roots=[tmp_path], cwd=var_dir, network=True)
    assert blame is not None and blame.path.startswith(str(var_dir)), out
    assert "outside the sandbox's writable roots" in blame.reason


@needs_bwrap
def test_a_hidden_host_tmp_directory_is_blamed(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    outside.mkdir()
    out = _jailed(f"touch {outside}/x", ws)
    blame = sandbox_blame(out, roots=[ws], cwd=ws, network=True)
    assert blame is not None and blame.path == str(outside / "x") and "private" in blame.reason


@needs_bwrap
def test_no_network_is_blamed_only_when_the_network_is_off(tmp_path: Path) -> None:
    py = "import socket; socket.getaddrinfo('example.com', 443)"
    out = _jailed(f'python3 -c "{py}"', tmp_path, network=False)
    assert sandbox_blame(out, roots=[tmp_path], cwd=tmp_path, network=True) is None
    blame = sandbox_blame(out, roots=[tmp_path], cwd=tmp_path, network=False)
    assert blame is not None and "network = false" in blame.reason


@pytest.mark.parametrize(
    "output",
    [
        "cat: nope.txt: No such file or directory",  # an ordinary missing file
        "error: test failed, 3 of 10",
        "bash: ./run.sh: Permission denied",  # inside the workspace: not the sandbox
        "touch: cannot touch '/proc/1/x': Read-only file system",  # the jail's own mounts
    ],
)
def test_ordinary_failures_are_not_blamed(tmp_path: Path, output: str) -> None:
    assert sandbox_blame(output, roots=[tmp_path], cwd=tmp_path, network=False) is None


def test_a_path_nobody_could_write_is_not_the_sandbox(tmp_path: Path, var_dir: Path) -> None:
    ro = var_dir / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        writable = os.access(ro, os.W_OK)  # root can write anyway: then it would be blamed
        out = f"touch: cannot touch '{ro}/x': Permission denied"
        blame = sandbox_blame(out, roots=[tmp_path / "ws"], cwd=tmp_path, network=True)
        assert (blame is not None) is writable
        # under /tmp the jail has its own tmpfs: a refusal there is never the sandbox's
        out = f"touch: cannot touch '{tmp_path}/x': Permission denied"
        assert sandbox_blame(out, roots=[], cwd=tmp_path, network=True) is None
    finally:
        ro.chmod(0o755)


def test_bubblewrap_refusing_to_start_is_the_sandbox(tmp_path: Path) -> None:
    out = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    blame = sandbox_blame(out, roots=[tmp_path], cwd=tmp_path, network=True)
    assert blame is not None and "bubblewrap could not set up" in blame.reason
