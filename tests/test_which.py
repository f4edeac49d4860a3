"""reasonix.which: the same answer as ``shutil.which`` on real directories and files."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.which import which

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX lookup (Windows delegates)")

# What a PATH entry can be: a folder with the program executable, with it not executable,
# with a folder of that name, with a symlink to the program, without it, or missing.
KINDS = ("exec", "plain", "dir", "link", "empty", "missing")


def _tree(root: Path, kinds: list[str], name: str) -> list[str]:
    target = root / "real-program"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o755)
    folders = []
    for n, kind in enumerate(kinds):
        folder = root / f"d{n}"
        folders.append(str(folder))
        if kind == "missing":
            continue
        folder.mkdir()
        entry = folder / name
        if kind == "exec":
            entry.write_text("#!/bin/sh\n")
            entry.chmod(0o755)
        elif kind == "plain":
            entry.write_text("data\n")
            entry.chmod(0o644)
        elif kind == "dir":
            entry.mkdir()
        elif kind == "link":
            entry.symlink_to(target)
    return folders


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(KINDS), max_size=5),
    repeat=st.booleans(),
    blank=st.booleans(),
)
def test_a_search_of_path_agrees_with_shutil(
    tmp_path_factory: pytest.TempPathFactory, kinds: list[str], repeat: bool, blank: bool
) -> None:
    root = tmp_path_factory.mktemp("which")
    folders = _tree(root, kinds, "prog")
    if repeat and folders:
        folders.append(folders[0])
    if blank:
        folders.insert(0, "")  # an empty entry means the current directory
    path = os.pathsep.join(folders)
    assert which("prog", path=path) == shutil.which("prog", path=path)


def test_a_name_with_a_folder_is_checked_as_it_is(tmp_path: Path) -> None:
    program = tmp_path / "tool"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert which(str(program)) == shutil.which(str(program)) == str(program)
    program.chmod(0o644)
    assert which(str(program)) is None and shutil.which(str(program)) is None


def test_an_empty_path_finds_nothing_and_the_default_is_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert which("sh", path="") is None and shutil.which("sh", path="") is None
    assert which("sh") == shutil.which("sh") is not None
    monkeypatch.delenv("PATH")
    assert which("sh") == shutil.which("sh")
