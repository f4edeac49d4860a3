"""``reasonix --help`` and ``reasonix <cmd> --help`` write nothing under the home (issue 32).

Real parts: the built .pyz run by the system Python in an empty directory, with
HOME, REASONIX_HOME, REASONIX_CACHE_HOME and XDG_CACHE_HOME pointed at empty
temporary directories. The normal start unpacks the archive into the cache dir
and keeps byte-code there; a help request must do neither.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.cli.main import COMMANDS

HELP_FORMS = [
    ["--help"],
    ["-h"],
    ["help"],
    *([name, "--help"] for name in COMMANDS),
    ["mcp", "add", "--help"],
    ["subagent", "run", "-h"],
    ["--model", "x", "--help"],
]


def _sandbox(pyz: Path, tmp_path: Path, *, rx_home: bool) -> tuple[Path, dict[str, str], Path]:
    """A lone copy of the archive, an environment, and the root of every place to watch."""
    watched = tmp_path / "watched"
    for name in ("home", "rx", "cache", "xdg-cache", "xdg-config", "work"):
        (watched / name).mkdir(parents=True)
    target = watched / "work" / "reasonix.pyz"
    shutil.copy2(pyz, target)
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(watched / "home"),
        "XDG_CACHE_HOME": str(watched / "xdg-cache"),
        "XDG_CONFIG_HOME": str(watched / "xdg-config"),
    }
    if rx_home:
        env["REASONIX_HOME"] = str(watched / "rx")
        env["REASONIX_CACHE_HOME"] = str(watched / "cache")
    return target, env, watched


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time."""
    return {
        str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def _reasonix(target: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, target.name, *args], cwd=target.parent, env=env,
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize("rx_home", [True, False], ids=["REASONIX_HOME", "HOME-only"])
def test_help_writes_nothing_under_the_home(pyz: Path, tmp_path: Path, rx_home: bool) -> None:
    target, env, watched = _sandbox(pyz, tmp_path, rx_home=rx_home)
    before = _tree(watched)
    for form in HELP_FORMS:
        out = _reasonix(target, env, *form)
        assert out.returncode == 0, (form, out.stderr)
        assert "usage:" in out.stdout.lower(), (form, out.stdout[:200])
        assert _tree(watched) == before, form  # nothing unpacked, compiled or created


@pytest.mark.e2e
def test_help_only_reads_a_build_unpacked_before(pyz: Path, tmp_path: Path) -> None:
    target, env, watched = _sandbox(pyz, tmp_path, rx_home=True)
    first = _reasonix(target, env, "config", "compact-ratio")  # a normal start: it unpacks
    assert first.returncode == 0, first.stderr
    assert [p.name for p in (watched / "cache" / "pyz").iterdir()]  # the copy exists
    before = _tree(watched)
    for form in (["--help"], ["run", "--help"], ["serve", "-h"], ["memory", "--help"]):
        out = _reasonix(target, env, *form)
        assert out.returncode == 0 and "usage:" in out.stdout.lower(), (form, out.stderr)
        assert _tree(watched) == before, form  # no byte-code, no cache file topped up
