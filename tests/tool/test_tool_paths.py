"""Workspace confinement: resolve_write / resolve_read / is_read_forbidden on real trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix.errors import PathDenied
from reasonix.tool import ToolContext
from reasonix.tool.paths import (
    display_path,
    is_read_forbidden,
    real_path,
    resolve_read,
    resolve_write,
    write_roots,
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (ws / "src").mkdir()
    (ws / "link_out").symlink_to(outside)
    (ws / "file_link").symlink_to(outside / "secret.txt")
    (ws / "dangling").symlink_to(outside / "nope.txt")
    return {"ws": ws, "outside": outside, "root": tmp_path}


def _ctx(tree: dict[str, Path], **kw: object) -> ToolContext:
    return ToolContext(workspace=tree["ws"], **kw)  # type: ignore[arg-type]


ESCAPES = [
    "../x.txt",
    "src/../../x.txt",
    "{outside}/x.txt",
    "link_out/x.txt",
    "link_out/secret.txt",
    "file_link",
    "dangling",
    "/proc/self/root{outside}/x.txt",
    "new/../../x.txt",
    "src/new/../x.txt",
]


@pytest.mark.parametrize("raw", ESCAPES)
def test_write_escapes_are_refused(tree: dict[str, Path], raw: str) -> None:
    path = raw.format(outside=tree["outside"])
    with pytest.raises(PathDenied) as info:
        resolve_write(_ctx(tree), path)
    assert "not allowed" in str(info.value) or "'..'" in str(info.value)


def test_symlinked_parent_directory_is_refused(tree: dict[str, Path]) -> None:
    # The workspace itself is reached through a symlinked parent: writes through
    # another symlinked parent pointing out must still be judged by the real path.
    alias = tree["root"] / "alias"
    alias.symlink_to(tree["ws"])
    ctx = ToolContext(workspace=alias)
    assert resolve_write(ctx, "src/a.py") == tree["ws"] / "src" / "a.py"
    (tree["ws"] / "src" / "deep").symlink_to(tree["outside"], target_is_directory=True)
    with pytest.raises(PathDenied):
        resolve_write(ctx, "src/deep/new/file.txt")


def test_inside_writes_resolve_to_real_paths(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree)
    assert resolve_write(ctx, "src/a.py") == tree["ws"] / "src" / "a.py"
    assert resolve_write(ctx, "new/dir/b.txt") == tree["ws"] / "new" / "dir" / "b.txt"
    assert resolve_write(ctx, str(tree["ws"] / "c")) == tree["ws"] / "c"
    assert resolve_write(ctx, "./src/./d") == tree["ws"] / "src" / "d"
    # '..' that stays inside through existing directories is fine
    assert resolve_write(ctx, "src/../e") == tree["ws"] / "e"


def test_cwd_is_the_base_for_relative_paths(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree, cwd=tree["ws"] / "src")
    assert resolve_write(ctx, "x.py") == tree["ws"] / "src" / "x.py"
    assert resolve_write(ctx, "../y.py") == tree["ws"] / "y.py"


def test_extra_roots_allow_writes(tree: dict[str, Path]) -> None:
    cfg = tree["root"] / "cfg"
    cfg.mkdir()
    ctx = _ctx(tree, write_roots=[tree["outside"]], config_dir=cfg)
    assert resolve_write(ctx, str(tree["outside"] / "x")) == tree["outside"] / "x"
    assert resolve_write(ctx, "link_out/y") == tree["outside"] / "y"
    assert resolve_write(ctx, str(cfg / "config.toml")) == cfg / "config.toml"
    assert write_roots(ctx) == [tree["ws"], tree["outside"], cfg]


def test_declared_write_paths_replace_the_roots(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree, extra={"write_paths": [tree["ws"] / "src"]})
    assert resolve_write(ctx, "src/ok.py") == tree["ws"] / "src" / "ok.py"
    with pytest.raises(PathDenied):
        resolve_write(ctx, "other.py")


def test_home_is_expanded(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree["ws"]))
    assert resolve_write(_ctx(tree), "~/h.txt") == tree["ws"] / "h.txt"


def test_invalid_paths(tree: dict[str, Path]) -> None:
    for bad in ("", "a\x00b"):
        with pytest.raises(PathDenied, match="invalid path"):
            resolve_write(_ctx(tree), bad)


def test_reads_outside_are_allowed(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree)
    assert resolve_read(ctx, "../outside/secret.txt") == tree["outside"] / "secret.txt"
    assert resolve_read(ctx, "file_link") == tree["outside"] / "secret.txt"


@pytest.mark.parametrize(
    "raw",
    [
        "{outside}",
        "{outside}/secret.txt",
        "../outside/secret.txt",
        "link_out/secret.txt",
        "file_link",
        "/proc/self/root{outside}/secret.txt",
        "link_out/missing/deeper.txt",
    ],
)
def test_forbid_read_blocks_entry_and_below(tree: dict[str, Path], raw: str) -> None:
    ctx = _ctx(tree, forbid_read=[tree["outside"]])
    path = raw.format(outside=tree["outside"])
    with pytest.raises(PathDenied, match="forbid_read"):
        resolve_read(ctx, path)
    assert is_read_forbidden(ctx, path)


def test_forbid_read_entry_that_is_a_symlink(tree: dict[str, Path]) -> None:
    # Forbidding the in-workspace symlink forbids its target too (real paths compared).
    ctx = _ctx(tree, forbid_read=[tree["ws"] / "link_out"])
    assert is_read_forbidden(ctx, str(tree["outside"] / "secret.txt"))
    assert is_read_forbidden(ctx, "link_out")
    assert not is_read_forbidden(ctx, "src")


def test_not_forbidden(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree, forbid_read=[tree["outside"]])
    assert not is_read_forbidden(ctx, "src")
    assert not is_read_forbidden(ctx, str(tree["root"] / "outsider"))  # prefix, not below
    assert resolve_read(ctx, "src") == tree["ws"] / "src"
    assert not is_read_forbidden(_ctx(tree), str(tree["outside"]))


def test_real_path_rejects_dotdot_in_missing_tail(tmp_path: Path) -> None:
    with pytest.raises(PathDenied, match=r"'\.\.'"):
        real_path("missing/../x", tmp_path)
    assert real_path("a/b", tmp_path) == Path(os.path.realpath(tmp_path)) / "a" / "b"


def test_display_path(tree: dict[str, Path]) -> None:
    ctx = _ctx(tree)
    assert display_path(ctx, tree["ws"] / "src" / "a.py") == os.path.join("src", "a.py")
    assert display_path(ctx, tree["outside"]) == str(tree["outside"])
    assert display_path(ctx, tree["ws"]) == "."
