"""Text-preserving TOML edits: every result re-parses and keeps what it did not touch."""

from __future__ import annotations

import math
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from reasonix.config.tomledit import append_to_array, dumps_value, remove_keys, set_key
from reasonix.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def parse(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


SAMPLE = """\
# my config
default_model = "deepseek"   # keep me

[agent]
# threshold
compact_ratio = 0.8
allow_like = [
  "a",  # comment in array
  "b",
]

[[providers]]
name = "x"
compact_ratio = 0.5

[permissions]
allow = ["Read"]
"""


@pytest.mark.parametrize(
    "value",
    ["plain", 'q"uote\\back\nnew\ttab\x01', "ünï", 3, -7, 0.7, 1e20, True, False, ["a", 'b"'], []],
)
def test_dumps_value_round_trips(value: Any) -> None:
    assert tomllib.loads(f"k = {dumps_value(value)}")["k"] == value


def test_dumps_special_floats() -> None:
    assert math.isinf(tomllib.loads(f"k = {dumps_value(float('inf'))}")["k"])
    with pytest.raises(TypeError):
        dumps_value({"a": 1})


def test_set_replaces_in_place_and_keeps_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    set_key(path, "agent", "compact_ratio", 0.7)
    text = path.read_text(encoding="utf-8")
    assert text == SAMPLE.replace("compact_ratio = 0.8", "compact_ratio = 0.7")
    data = parse(path)
    assert data["agent"]["compact_ratio"] == 0.7
    assert data["providers"][0]["compact_ratio"] == 0.5  # array tables untouched


def test_set_inserts_into_existing_table_after_multiline_value(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    set_key(path, "agent", "temperature", 0.2)
    data = parse(path)
    assert data["agent"]["temperature"] == 0.2
    assert data["agent"]["allow_like"] == ["a", "b"]
    assert "# comment in array" in path.read_text(encoding="utf-8")


def test_set_top_level_goes_before_first_table(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    set_key(path, "", "extra", "v")
    set_key(path, "", "default_model", "openai")
    data = parse(path)
    assert data["extra"] == "v"
    assert data["default_model"] == "openai"
    assert "agent" in data


def test_set_creates_file_and_table(tmp_path: Path) -> None:
    path = tmp_path / "new" / "c.toml"
    set_key(path, "agent", "compact_ratio", 0.75)
    set_key(path, "serve", "auth_mode", "token")
    assert parse(path) == {"agent": {"compact_ratio": 0.75}, "serve": {"auth_mode": "token"}}


def test_set_with_dotted_top_level_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('agent.temperature = 0.1\n[serve]\nauth_mode = "none"\n', encoding="utf-8")
    set_key(path, "agent", "temperature", 0.3)
    set_key(path, "agent", "compact_ratio", 0.7)
    assert parse(path)["agent"] == {"temperature": 0.3, "compact_ratio": 0.7}


def test_crlf_and_mode_preserved(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"[agent]\r\ntemperature = 0.1\r\n")
    os.chmod(path, 0o640)
    set_key(path, "agent", "compact_ratio", 0.7)
    assert path.read_bytes() == b"[agent]\r\ntemperature = 0.1\r\ncompact_ratio = 0.7\r\n"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_remove_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    assert remove_keys(path, "agent", ["allow_like", "missing"]) == ["allow_like"]
    data = parse(path)
    assert "allow_like" not in data["agent"]
    assert data["agent"]["compact_ratio"] == 0.8
    assert "# threshold" in path.read_text(encoding="utf-8")
    before = path.stat().st_mtime_ns
    assert remove_keys(path, "agent", ["nothing"]) == []
    assert path.stat().st_mtime_ns == before


def test_append_to_array_no_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "reasonix.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    assert append_to_array(path, "permissions", "allow", "Bash(go test:*)") is True
    assert append_to_array(path, "permissions", "allow", "Bash(go test:*)") is False
    assert parse(path)["permissions"]["allow"] == ["Read", "Bash(go test:*)"]
    fresh = tmp_path / "fresh.toml"
    assert append_to_array(fresh, "permissions", "allow", 'Bash(echo "hi")') is True
    assert parse(fresh) == {"permissions": {"allow": ['Bash(echo "hi")']}}


@pytest.mark.parametrize(
    ("text", "needle"),
    [("agent = { temperature = 0.1 }\n", "inline table"), ("[agent\nx = 1\n", "invalid TOML")],
)
def test_refused_edit_leaves_file_alone(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=needle):
        set_key(path, "agent", "compact_ratio", 0.7)
    assert path.read_text(encoding="utf-8") == text


def test_trailing_comment_survives_replacement(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    set_key(path, "", "default_model", "a#b")
    assert 'default_model = "a#b"   # keep me\n' in path.read_text(encoding="utf-8")
    assert parse(path)["default_model"] == "a#b"
    set_key(path, "", "default_model", "c")
    assert 'default_model = "c"   # keep me\n' in path.read_text(encoding="utf-8")


def test_write_follows_symlink(tmp_path: Path) -> None:
    if os.name != "posix":
        pytest.skip("symlinks need privileges on Windows")
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text("[agent]\n", encoding="utf-8")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    set_key(link, "agent", "compact_ratio", 0.7)
    assert link.is_symlink()
    assert parse(real) == {"agent": {"compact_ratio": 0.7}}
