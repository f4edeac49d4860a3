"""A working bubblewrap is remembered per boot and binary; a failing one never is."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from reasonix.permission.sandbox import bwrap
from reasonix.tool.children import contained

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux")


@pytest.fixture(autouse=True)
def _fresh_process_cache() -> None:
    bwrap._probe_cache.clear()  # each case is a new run as far as the probe knows


def _program(path: Path, exit_code: int) -> str:
    path.write_text(f"#!/bin/sh\nexit {exit_code}\n")
    path.chmod(0o755)
    return str(path)


@linux_only
def test_a_failing_bwrap_is_never_remembered(tmp_path: Path) -> None:
    fake = _program(tmp_path / "bwrap", 1)
    memory = tmp_path / "cache"
    assert bwrap.probe(fake, True, memory) != ""
    assert not memory.exists() or not any(memory.iterdir())


@linux_only
def test_a_remembered_answer_is_trusted_without_running_bwrap(tmp_path: Path) -> None:
    fake = _program(tmp_path / "bwrap", 1)  # would fail if it ran
    memory = tmp_path / "cache"
    memory.mkdir()
    (memory / "bwrap-works").write_text(bwrap._stamp(fake, True))
    assert bwrap.probe(fake, True, memory) == ""
    bwrap._probe_cache.clear()
    assert bwrap.probe(fake, False, memory) != ""  # not remembered for the offline jail


@linux_only
def test_a_working_bwrap_is_remembered_until_the_binary_changes(tmp_path: Path) -> None:
    real = shutil.which("bwrap")
    if real is None:
        pytest.skip("MISSING bubblewrap: apt-get install bubblewrap")
    memory = tmp_path / "cache"
    local = tmp_path / "bin" / "bwrap"
    local.parent.mkdir()
    shutil.copy2(real, local)
    assert bwrap.probe(str(local), False, memory) == ""
    assert (memory / "bwrap-works-offline").is_file()
    bwrap._probe_cache.clear()
    assert bwrap.probe(str(local), True, memory) == ""  # the network variant is its own probe
    assert (memory / "bwrap-works").is_file()
    # The next run trusts the note without running bwrap: replace the binary by one that
    # fails but keep the note; a changed binary is probed afresh (and fails).
    bwrap._probe_cache.clear()
    assert bwrap.probe(str(local), True, memory) == ""
    _program(local, 1)
    bwrap._probe_cache.clear()
    assert bwrap.probe(str(local), True, memory) != ""


def test_only_bwrap_that_ends_its_namespace_with_us_is_contained() -> None:
    jail = ["/usr/bin/bwrap", "--die-with-parent", "--new-session", "--unshare-pid"]
    assert contained([*jail, "--ro-bind", "/", "/", "--", "bash", "-c", "x"])
    assert not contained(["/usr/bin/bwrap", "--unshare-pid", "--", "bash", "-c", "x"])
    # the flags must be bwrap's own, not words of the command it runs
    assert not contained(["/usr/bin/bwrap", "--", "sh", "--die-with-parent", "--unshare-pid"])
    assert not contained(["bash", "-c", "bwrap --die-with-parent --unshare-pid"])
    assert not contained([])


@linux_only
def test_what_a_jailed_command_leaves_behind_dies_with_the_jail_without_a_process_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shutil.which("bwrap")
    if real is None:
        pytest.skip("MISSING bubblewrap: apt-get install bubblewrap")
    from reasonix.cancel import Cancel
    from reasonix.tool.builtin import _proc

    def no_scan(tag: str) -> set[int]:
        raise AssertionError("a jailed command needs no scan for strays")

    monkeypatch.setattr(_proc, "tagged", no_scan)
    pids = tmp_path / "pids"
    script = (
        f"(setsid sleep 97 & echo $! >> {pids}); nohup sleep 98 >/dev/null 2>&1 & echo $! >> {pids}"
    )
    jail = [real, "--die-with-parent", "--new-session", "--unshare-pid", "--ro-bind", "/", "/"]
    jail += ["--dev", "/dev", "--proc", "/proc", "--bind", str(tmp_path), str(tmp_path)]
    out: list[bytes] = []
    outcome = _proc.run_command(
        [*jail, "--", "bash", "-c", script], cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"},
        sink=out.append, cancel=Cancel(),
    )  # fmt: skip
    assert outcome.exit_code == 0
    assert len(pids.read_text().split()) == 2  # both were started (pids of the jail's namespace)
    import subprocess

    left = subprocess.run(["pgrep", "-f", "sleep 9[78]$"], capture_output=True, text=True)
    assert left.stdout == ""  # the namespace ended with bwrap: nothing survived
