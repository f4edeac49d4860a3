"""The parsed-TOML cache: same results, no TOML parser on an unchanged config."""

from __future__ import annotations

import datetime
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.config import tomlparse
from reasonix.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
TEXT = 'default_model = "a/b"\n[agent]\ncompact_ratio = 0.75\n[[providers]]\nname = "é"\n'


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REASONIX_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _cached_files(cache: Path) -> list[Path]:
    return sorted((cache / "toml").glob("*.json")) if (cache / "toml").is_dir() else []


def test_a_second_parse_comes_from_the_cache(_cache: Path) -> None:
    first = tomlparse.loads(TEXT, "a.toml")
    files = _cached_files(_cache)
    assert len(files) == 1 and stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert tomlparse.loads(TEXT, "a.toml") == first
    assert first == {"default_model": "a/b", "agent": {"compact_ratio": 0.75},
                     "providers": [{"name": "é"}]}  # fmt: skip


def test_an_unchanged_config_does_not_import_the_parser(_cache: Path) -> None:
    code = (
        "import sys\n"
        "from reasonix.config import tomlparse\n"
        f"got = tomlparse.loads({TEXT!r}, 'a.toml')['agent']\n"
        "print(got, bool({'tomllib', 'tomli'} & set(sys.modules)))\n"
    )
    env = {**os.environ, "REASONIX_CACHE_HOME": str(_cache), "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][-1] == "True" and runs[1][-1] == "False"
    assert runs[0][:-1] == runs[1][:-1]


def test_an_edit_is_a_new_text(_cache: Path) -> None:
    tomlparse.loads(TEXT, "a.toml")
    edited = TEXT.replace("0.75", "0.5")
    assert tomlparse.loads(edited, "a.toml")["agent"]["compact_ratio"] == 0.5
    assert len(_cached_files(_cache)) == 2


def test_dates_are_parsed_every_time(_cache: Path) -> None:
    text = "when = 2026-12-01T10:00:00Z\n"
    got = tomlparse.loads(text, "d.toml")
    assert isinstance(got["when"], datetime.datetime)
    assert _cached_files(_cache) == []
    assert isinstance(tomlparse.loads(text, "d.toml")["when"], datetime.datetime)


def test_a_damaged_cache_entry_is_parsed_again(_cache: Path) -> None:
    want = tomlparse.loads(TEXT, "a.toml")
    (entry,) = _cached_files(_cache)
    entry.write_text("{not json")
    assert tomlparse.loads(TEXT, "a.toml") == want


def test_an_unwritable_cache_only_means_parsing(_cache: Path) -> None:
    _cache.parent.mkdir(parents=True, exist_ok=True)
    _cache.write_text("a file, not a directory")
    assert tomlparse.loads(TEXT, "a.toml")["default_model"] == "a/b"


def test_syntax_errors_still_name_the_file_and_line(_cache: Path) -> None:
    with pytest.raises(ConfigError) as err:
        tomlparse.loads('a = 1\nb = "unclosed\n', "bad.toml")
    assert err.value.file == "bad.toml" and err.value.line == 2
    assert _cached_files(_cache) == []
    assert issubclass(tomlparse.TOMLDecodeError, ValueError)
