"""The provider-key .env format (CFG-6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from reasonix.config.dotenv import parse_dotenv, read_dotenv, update_dotenv
from reasonix.errors import ConfigError


def test_parse_forms() -> None:
    env = parse_dotenv(
        "# a comment\n"
        "\n"
        "PLAIN=abc\n"
        "export EXPORTED=1\n"
        "SINGLE='a # b $X'\n"
        'DOUBLE="say \\"hi\\" \\\\ \\$HOME"\n'
        "SPACED = v  # trailing comment\n"
        "EMPTY=\n"
        "not a line\n"
        "9BAD=x\n"
    )
    assert env.values == {
        "PLAIN": "abc",
        "EXPORTED": "1",
        "SINGLE": "a # b $X",
        "DOUBLE": 'say "hi" \\ $HOME',
        "SPACED": "v",
        "EMPTY": "",
    }


def test_missing_file_is_empty(tmp_path: Path) -> None:
    env = read_dotenv(tmp_path / "nope")
    assert env.values == {}
    assert env.cleared == set()


def test_round_trip_mode_and_kept_lines(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# keys\nOTHER=keep\nDEEPSEEK_API_KEY=old\n", encoding="utf-8")
    tricky = 'p@ss w"rd $x `y` \\z'
    update_dotenv(path, {"DEEPSEEK_API_KEY": "sk-new", "TRICKY": tricky})
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# keys\nOTHER=keep\nDEEPSEEK_API_KEY=sk-new\n")
    assert read_dotenv(path).values == {
        "OTHER": "keep",
        "DEEPSEEK_API_KEY": "sk-new",
        "TRICKY": tricky,
    }
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_new_file_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "sub" / ".env"
    update_dotenv(path, {"K": "v"})
    assert path.read_text(encoding="utf-8") == "K=v\n"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_clear_leaves_tombstone_and_set_removes_it(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    update_dotenv(path, {"A": "1", "B": "2"})
    update_dotenv(path, clear=["A"])
    assert "# reasonix-cleared A" in path.read_text(encoding="utf-8")
    env = read_dotenv(path)
    assert env.values == {"B": "2"}
    assert env.cleared == {"A"}
    update_dotenv(path, clear=["A"])  # clearing twice keeps one tombstone
    assert path.read_text(encoding="utf-8").count("reasonix-cleared A") == 1
    update_dotenv(path, {"A": "3"})
    env = read_dotenv(path)
    assert env.values == {"B": "2", "A": "3"}
    assert env.cleared == set()
    assert "reasonix-cleared" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("values", "needle"),
    [({"K": "a\nb"}, "one line"), ({"K": "a\rb"}, "one line"), ({"1K": "v"}, "invalid variable")],
)
def test_refusals(tmp_path: Path, values: dict[str, str], needle: str) -> None:
    path = tmp_path / ".env"
    with pytest.raises(ConfigError) as info:
        update_dotenv(path, values)
    assert needle in str(info.value)
    assert str(path) in str(info.value)
    assert not path.exists()
