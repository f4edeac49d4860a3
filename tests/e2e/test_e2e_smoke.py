"""The built .pyz: runs alone in an empty directory on every supported Python."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from e2e_python import MINORS, interpreter

from reasonix._pyzarchive import PAYLOAD

ROOT = Path(__file__).resolve().parents[2]


def git_describe() -> str:
    out = subprocess.run(
        ["git", "describe", "--tags", "--always", "--dirty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() if out.returncode == 0 else "0+unknown"


def lone_copy(pyz: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    target = work / "reasonix.pyz"
    shutil.copy2(pyz, target)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return target, env


@pytest.mark.e2e
@pytest.mark.parametrize("minor", MINORS)
def test_version_alone_in_an_empty_dir(pyz: Path, tmp_path: Path, minor: str) -> None:
    python = interpreter(minor)
    target, env = lone_copy(pyz, tmp_path)
    out = subprocess.run(
        [python, target.name, "--version"],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"reasonix {git_describe()}"
    assert sorted(p.name for p in target.parent.iterdir()) == ["reasonix.pyz"]


@pytest.mark.e2e
@pytest.mark.parametrize("minor", MINORS)
def test_toml_config_loads_on_every_python(pyz: Path, tmp_path: Path, minor: str) -> None:
    """Python 3.10 has no tomllib: the vendored tomli must carry the config load."""
    python = interpreter(minor)
    target, env = lone_copy(pyz, tmp_path)
    env["REASONIX_HOME"] = str(tmp_path / "rxhome")
    (target.parent / "reasonix.toml").write_text("[agent]\ncompact_ratio = 0.75\n")
    out = subprocess.run(
        [python, target.name, "config", "compact-ratio"],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0.75")


@pytest.mark.e2e
def test_help_lists_commands_and_runs_directly(pyz: Path) -> None:
    out = subprocess.run([str(pyz), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "run" in out.stdout and "config" in out.stdout


@pytest.mark.e2e
def test_archive_layout(pyz: Path) -> None:
    assert pyz.read_bytes().startswith(b"#!/usr/bin/env python3\n")
    assert os.access(pyz, os.X_OK)
    # One ordinary zip: the entry point, the boot's modules and the payload, an ordinary
    # zip of the whole build. Every start reads this directory (zipimport took ~4 ms for
    # the 700 entries of the whole build).
    with zipfile.ZipFile(pyz) as zf:
        front = zf.infolist()
        payload = zf.read(PAYLOAD)
        copies = {i.filename: zf.read(i.filename) for i in front if i.filename != PAYLOAD}
    assert len(front) <= 40, [i.filename for i in front]
    assert {"__main__.py", "__main__.pyc", PAYLOAD, "reasonix/_pyzboot.pyc",
            "reasonix/_pyzarchive.pyc"} <= set(copies) | {PAYLOAD}  # fmt: skip
    assert not [n for n in copies if n.startswith("reasonix/cli/")]
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        names = zf.namelist()
        infos = zf.infolist()
        assert all(zf.read(n) == data for n, data in copies.items())  # the same files
        pycs = [n for n in names if n.endswith(".pyc")]
        assert len({zf.read(n)[:4] for n in pycs}) == 1
    assert "__main__.py" in names and "reasonix/_version.py" in names
    assert any(n.startswith("_vendor/tomli/") for n in names)
    assert not [n for n in names if n.startswith("tests/") or "__pycache__" in n]
    # byte-code only beside its own source, of the package, and for one Python version
    assert "__main__.pyc" in pycs
    assert all(n.startswith(("reasonix/", "__main__.")) and n[:-1] in names for n in pycs)
    assert "reasonix/_pyzboot.py" in names and "reasonix/_pyzmain.py" not in names
    assert names == sorted(names)
    assert {i.date_time for i in [*infos, *front]} == {(1980, 1, 1, 0, 0, 0)}
    # the entry point is stored, not deflated: --version needs no zlib; so is the payload
    # (the boot copies it out without zlib) and the boot's byte-code: a start from the
    # unpacked copy inflates nothing
    stored = {i.filename for i in front if i.compress_type == zipfile.ZIP_STORED}
    boot = {"reasonix/__init__.pyc", "reasonix/_pyzboot.pyc", "reasonix/config/__init__.pyc",
            "reasonix/config/home.pyc", "reasonix/_pyzarchive.pyc"}  # fmt: skip
    assert {"__main__.py", "__main__.pyc", PAYLOAD, *boot} <= stored


@pytest.mark.e2e
def test_version_compiles_and_imports_nothing_of_the_start(pyz: Path) -> None:
    """--version reads only the tiny entry point: no zlib to inflate it, no boot module."""
    out = subprocess.run([sys.executable, "-I", "-X", "importtime", str(pyz), "--version"],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0 and out.stdout.startswith("reasonix ")
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "zlib" not in imported and "reasonix._pyzboot" not in imported
    assert "reasonix" not in imported


@pytest.mark.e2e
def test_once_unpacked_the_package_is_imported_from_the_copys_byte_code(
    pyz: Path, tmp_path: Path
) -> None:
    """zipimport keeps no byte-code of its own: the first start runs from the archive and
    unpacks at exit; the next imports the package from the copy, whose ``__pycache__``
    exists before it starts (written by the first start's exit, or compiled once by a
    Python the archive carries no byte-code for)."""
    target, env = lone_copy(pyz, tmp_path)
    env["REASONIX_HOME"] = str(tmp_path / "rxhome")
    env["REASONIX_CACHE_HOME"] = str(tmp_path / "cache")
    # not --help: a help request neither unpacks nor writes byte-code (issue 32)
    argv = [sys.executable, "-v", target.name, "config", "compact-ratio"]

    def main_lines() -> list[str]:
        out = subprocess.run(argv, cwd=target.parent, env=env, capture_output=True, text=True,
                             timeout=60)  # fmt: skip
        assert out.returncode == 0 and out.stdout.startswith("0.80"), out.stderr[-2000:]
        keys = ("reasonix.cli.main", "cli/main", "cli/__pycache__/main")
        return [line for line in out.stderr.splitlines() if any(k in line for k in keys)]

    first = main_lines()
    assert any("zipimporter" in line for line in first), first  # nothing unpacked yet
    (copy,) = [p for p in (tmp_path / "cache" / "pyz").iterdir() if p.is_dir()]
    second = main_lines()
    cached = str(copy / "reasonix" / "cli" / "__pycache__" / "main.")
    assert any(line.startswith("# code object from") and cached in line for line in second), second
    assert not any("zipimporter" in line for line in second), second


@pytest.mark.e2e
def test_build_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pyz", tmp_path / "b.pyz"
    for out in (a, b):
        subprocess.run(
            [sys.executable, "build_zipapp.py", "--output", str(out)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.e2e
def test_version_falls_back_outside_git(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(".git", ".venv", "dist", "node_modules", ".ci", "tests"),
    )
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(tmp_path))
    subprocess.run(
        [sys.executable, "build_zipapp.py"], cwd=src, check=True, capture_output=True, env=env
    )
    out = subprocess.run(
        [sys.executable, str(src / "dist" / "reasonix.pyz"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "reasonix 0+unknown"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[agent\ncompact_ratio = 0.7\n", "reasonix.toml"),
        ("[agent]\ncompact_ratio = 0.9\n", "compact_ratio"),
        ('[[providers]]\nname = "x"\nkind = "telepathy"\n', "kind"),
    ],
)
def test_malformed_config_is_a_clear_error(
    pyz: Path, tmp_path: Path, toml: str, needle: str
) -> None:
    target, env = lone_copy(pyz, tmp_path)
    env["REASONIX_HOME"] = str(tmp_path / "rxhome")
    (target.parent / "reasonix.toml").write_text(toml)
    out = subprocess.run(
        [sys.executable, target.name, "config", "compact-ratio"],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode in (1, 2), out
    assert needle in out.stderr and "reasonix.toml" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.e2e
def test_unpacks_once_into_the_cache_and_falls_back_when_it_cannot(
    pyz: Path, tmp_path: Path
) -> None:
    target, env = lone_copy(pyz, tmp_path)
    env["REASONIX_HOME"] = str(tmp_path / "rxhome")
    env["REASONIX_CACHE_HOME"] = str(tmp_path / "cache")
    argv = [sys.executable, target.name, "config", "compact-ratio"]
    first = subprocess.run(argv, cwd=target.parent, env=env, capture_output=True, text=True)
    assert first.returncode == 0 and first.stdout.startswith("0.80"), first.stderr
    builds = sorted((tmp_path / "cache" / "pyz").iterdir())
    # the copy, and beside it the payload this start imported from (reasonix-payload.zip)
    assert [p.name for p in builds] == [builds[0].name, builds[0].name + ".zip"]
    assert (builds[0] / ".complete").is_file()
    assert (builds[0] / "reasonix" / "cli" / "main.py").is_file()
    # an unusable cache location (a plain file) must not break the program
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env["REASONIX_CACHE_HOME"] = str(blocker)
    again = subprocess.run(argv, cwd=target.parent, env=env, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.startswith("0.80"), again.stderr
