"""QA regressions: an unwritable stdout is exit code 1, never a traceback or shutdown noise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV_FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")


def _run(cmd: list[str], cwd: Path, stdout: int | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), REASONIX_HOME=str(cwd / "home"))
    return subprocess.run(
        cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=60
    )


@needs_dev_full
@pytest.mark.parametrize("args", [["--help"], ["config", "compact-ratio"], ["--version"]])
def test_full_disk_on_stdout_is_exit_1_quietly(tmp_path: Path, args: list[str]) -> None:
    with open(DEV_FULL, "w") as full:
        out = _run([sys.executable, "-m", "reasonix", *args], tmp_path, full.fileno())
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "Exception ignored" not in out.stderr


@pytest.fixture(scope="module")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("pyz") / "reasonix.pyz"
    subprocess.run(
        [sys.executable, str(ROOT / "build_zipapp.py"), "--output", str(target)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return target


def test_pyz_version_fast_path_with_closed_or_full_stdout(pyz: Path, tmp_path: Path) -> None:
    closed = _run([sys.executable, str(pyz), "--version"], tmp_path, subprocess.DEVNULL)
    assert closed.returncode == 0
    out = subprocess.run(
        [sys.executable, str(pyz), "--version"],
        stdin=subprocess.DEVNULL,
        stdout=None,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        close_fds=True,
        preexec_fn=lambda: os.close(1),
    )
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    if DEV_FULL.exists():
        with open(DEV_FULL, "w") as full:
            res = _run([sys.executable, str(pyz), "--version"], tmp_path, full.fileno())
        assert res.returncode == 1
        assert res.stderr == ""


def test_deleted_working_directory_is_reported_plainly(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "from reasonix.cli.main import main; sys.exit(main(['config', 'compact-ratio']))"
    )
    out = _run([sys.executable, "-c", script, str(gone)], tmp_path, subprocess.PIPE)
    assert out.returncode == 1
    assert "current directory no longer exists" in out.stderr
    assert "internal error" not in out.stderr


def test_build_without_tomli_fails_instead_of_shipping_a_310_breaker(tmp_path: Path) -> None:
    target = tmp_path / "r.pyz"
    out = subprocess.run(
        # -S hides site-packages, so the build interpreter has no tomli.
        [sys.executable, "-S", str(ROOT / "build_zipapp.py"), "--output", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    assert "tomli" in out.stderr
    assert not target.exists()


def test_built_pyz_vendors_tomli(pyz: Path) -> None:
    import io
    import zipfile

    from reasonix._pyzarchive import PAYLOAD

    with zipfile.ZipFile(pyz) as zf, zipfile.ZipFile(io.BytesIO(zf.read(PAYLOAD))) as inner:
        names = inner.namelist()  # every file of the build
    assert "_vendor/tomli/__init__.py" in names
    assert not [n for n in names if n.startswith("tests/")]
    # byte-code only beside its source (the build's own, see build_zipapp.py), none stray
    assert not [n for n in names if n.endswith(".pyc") and n[:-1] not in names]
