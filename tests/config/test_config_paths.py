"""paths: home/state/cache resolution and project slugs (CFG-2, CFG-3, CFG-4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonix.config import paths


def test_home_follows_reasonix_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "h"))
    assert paths.home_dir() == tmp_path / "h"
    assert paths.user_config_path() == tmp_path / "h" / "config.toml"
    assert paths.env_path() == tmp_path / "h" / ".env"
    assert paths.state_dir() == tmp_path / "h"
    assert paths.cache_dir() == tmp_path / "h" / "cache"


def test_home_default_is_dot_reasonix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REASONIX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    if os.name != "nt":
        assert paths.home_dir() == tmp_path / ".reasonix"


def test_state_and_cache_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REASONIX_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("REASONIX_CACHE_HOME", str(tmp_path / "cache"))
    assert paths.state_dir() == tmp_path / "state"
    assert paths.cache_dir() == tmp_path / "cache"
    # state moves, config and keys do not (CFG-3)
    assert paths.user_config_path().parent != tmp_path / "state"
    assert paths.sessions_dir(tmp_path).parent == tmp_path / "state" / "sessions"


def test_project_files(tmp_path: Path) -> None:
    assert paths.project_config_path(tmp_path) == tmp_path / "reasonix.toml"
    assert paths.project_env_path(tmp_path) == tmp_path / ".env"
    assert paths.project_mcp_path(tmp_path) == tmp_path / ".mcp.json"


@pytest.mark.parametrize(
    ("a", "b"),
    [("/home/ann/src/My App", "/home/ann/src/My_App"), ("/x/a b", "/x/a-b"), ("/p", "/P")],
)
def test_project_slug_is_stable_safe_and_distinct(a: str, b: str) -> None:
    slug = paths.project_slug(a)
    assert slug == paths.project_slug(a)
    assert slug != paths.project_slug(b)
    assert all(c.isalnum() or c in "._-" for c in slug)
    assert not slug.startswith(("-", "."))


def test_project_slug_is_readable_and_bounded() -> None:
    assert paths.project_slug("/home/ann/src/reasonix").startswith("home-ann-src-reasonix-")
    long = "/" + "/".join(["deep"] * 50) + "/project"
    slug = paths.project_slug(long)
    assert len(slug) <= 48 + 9
    assert "project" in slug
    assert paths.project_slug("/").startswith("root-")


def test_data_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("REASONIX_STATE_HOME", str(tmp_path / "s"))
    assert paths.commands_dir() == tmp_path / "h" / "commands"
    assert paths.skills_dir() == tmp_path / "h" / "skills"
    assert paths.archive_dir() == tmp_path / "s" / "archive"
    assert paths.memory_dir() == tmp_path / "s" / "memory"


@given(st.text())
def test_the_slug_dashes_what_the_pattern_would(text: str) -> None:
    import re

    from reasonix.config.paths import _dashed

    assert _dashed(text) == re.sub(r"[^A-Za-z0-9._-]+", "-", text)
