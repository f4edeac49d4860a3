"""`reasonix config compact-ratio [--local] [VALUE]` in-process and through `python -m reasonix`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.cli import config_cmd
from reasonix.config import paths
from reasonix.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent.parent


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="reasonix config")
    config_cmd.configure(parser)
    return config_cmd.execute(parser.parse_args(argv))


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


def test_show_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["compact-ratio"]) == 0
    assert capsys.readouterr().out == "0.80 (default)\n"


def test_set_global_then_local(capsys: pytest.CaptureFixture[str], _in_project: Path) -> None:
    assert run(["compact-ratio", "0.7"]) == 0
    user = paths.user_config_path()
    assert "compact_ratio = 0.7" in user.read_text(encoding="utf-8")
    capsys.readouterr()
    run(["compact-ratio"])
    assert capsys.readouterr().out == f"0.70 (from {user})\n"

    assert run(["compact-ratio", "--local", "0.85"]) == 0
    local = _in_project / "reasonix.toml"
    assert "compact_ratio = 0.85" in local.read_text(encoding="utf-8")
    capsys.readouterr()
    run(["compact-ratio"])
    assert capsys.readouterr().out == f"0.85 (from {local})\n"

    # Setting the global value while the project overrides it says so.
    run(["compact-ratio", "0.65"])
    err = capsys.readouterr().err
    assert "0.85" in err
    assert str(local) in err


@pytest.mark.parametrize("value", ["0.9", "0.64", "abc"])
def test_bad_values_are_refused_with_the_range(value: str) -> None:
    with pytest.raises(UsageError) as info:
        run(["compact-ratio", value])
    assert "0.65" in str(info.value)
    assert "0.85" in str(info.value)
    assert not paths.user_config_path().exists()


def test_repairs_a_file_holding_a_bad_value(capsys: pytest.CaptureFixture[str]) -> None:
    user = paths.user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[agent]\ncompact_ratio = 0.95\n", encoding="utf-8")
    assert run(["compact-ratio", "0.80"]) == 0
    capsys.readouterr()
    run(["compact-ratio"])
    assert capsys.readouterr().out.startswith("0.80 (from ")


def test_through_python_m_reasonix(_in_project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    bad = subprocess.run(
        [sys.executable, "-m", "reasonix", "config", "compact-ratio", "0.9"],
        capture_output=True, text=True, env=env, cwd=_in_project, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "0.65" in bad.stderr
    assert "0.85" in bad.stderr
    good = subprocess.run(
        [sys.executable, "-m", "reasonix", "config", "compact-ratio", "--local", "0.70"],
        capture_output=True, text=True, env=env, cwd=_in_project, timeout=60,
    )  # fmt: skip
    assert good.returncode == 0, good.stderr
    show = subprocess.run(
        [sys.executable, "-m", "reasonix", "config", "compact-ratio"],
        capture_output=True, text=True, env=env, cwd=_in_project, timeout=60,
    )  # fmt: skip
    assert show.stdout == f"0.70 (from {_in_project / 'reasonix.toml'})\n"
    (_in_project / "reasonix.toml").write_text("[agent]\ncompact_ratio = 0.9\n", encoding="utf-8")
    broken = subprocess.run(
        [sys.executable, "-m", "reasonix", "config", "compact-ratio"],
        capture_output=True, text=True, env=env, cwd=_in_project, timeout=60,
    )  # fmt: skip
    assert broken.returncode == 2
    assert "reasonix.toml:2" in broken.stderr
    assert "agent.compact_ratio" in broken.stderr
    assert "Traceback" not in broken.stderr
