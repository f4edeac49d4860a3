"""``reasonix memory …`` and the ``/memory`` command table over real stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.agent.memory.catalog import Memory
from reasonix.agent.memory.commands import SLASH_MEMORY, run_memory_command
from reasonix.cli.main import main


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_round_trip(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = Memory.for_workspace(ws)
    fact = memory.store("project").create("deploys go through make release", type="project")
    memory.store("project").update(fact.id, "deploys go through make release-prod")
    memory.store("global").create("prefers concise answers", type="user")
    d = ("memory", "--dir", str(ws))
    code, out, _ = cli(capsys, *d, "list")
    assert code == 0 and fact.id in out and "prefers concise" in out
    code, out, _ = cli(capsys, *d, "search", "release", "deploys")
    assert code == 0 and out.splitlines()[0].endswith("release-prod")
    code, out, _ = cli(capsys, *d, "revisions", fact.id)
    assert [line.split()[2] for line in out.splitlines()] == ["1,", "2,"]
    code, out, _ = cli(capsys, *d, "restore", fact.id, "1")
    assert code == 0 and "rev 3" in out
    code, out, _ = cli(capsys, *d, "forget", fact.id)
    assert code == 0
    code, out, _ = cli(capsys, *d, "archived")
    name = out.split()[0]
    assert name.startswith(fact.id)
    code, out, _ = cli(capsys, *d, "recover", name)
    assert code == 0 and "rev 4" in out
    code, out, err = cli(capsys, *d, "show", "nope")
    assert code == 1 and "no active fact" in err
    code, out, err = cli(capsys, *d, "recover", "../../etc/passwd")
    assert code == 1


def test_slash_memory_table(ws: Path) -> None:
    memory = Memory.for_workspace(ws)
    f = memory.store("project").create("the api lives in src/api", type="reference")
    assert set(SLASH_MEMORY) >= {
        "instructions",
        "recall",
        "revisions",
        "restore",
        "archived",
        "recover",
        "forget",
    }
    assert f.id in run_memory_command(memory, "")
    assert "src/api" in run_memory_command(memory, "recall where does the api live")
    assert run_memory_command(memory, "recall continue") == "(nothing would be recalled)"
    assert "usage" in run_memory_command(memory, "restore")
    assert "unknown" in run_memory_command(memory, "frobnicate")
    assert "global facts" in run_memory_command(memory, "instructions")
