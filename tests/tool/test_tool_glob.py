"""glob tool: patterns, ordering, caps, ignore rules, forbid_read."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import glob as glob_mod
from reasonix.tool.builtin.glob import TOOL


def run(ctx: ToolContext, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ctx)


def touch(root: Path, rel: str, mtime: float = 1_000_000) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(rel)
    os.utime(p, (mtime, mtime))


def make_tree(root: Path) -> None:
    touch(root, "a.py", 100)
    touch(root, "pkg/b.py", 300)
    touch(root, "pkg/deep/c.py", 200)
    touch(root, "pkg/deep/c.ts", 200)
    touch(root, "pkg/x.tsx", 50)
    touch(root, ".github/ci.yml", 10)
    touch(root, "node_modules/m/index.py", 999)
    touch(root, "dist/gen.py", 999)
    touch(root, ".gitignore", 1)
    (root / ".gitignore").write_text("dist/\n")


def test_recursive_newest_first(tmp_path: Path) -> None:
    make_tree(tmp_path)
    res = run(ToolContext(workspace=tmp_path), pattern="**/*.py")
    assert res.content.splitlines() == ["pkg/b.py", "pkg/deep/c.py", "a.py"]
    assert TOOL.read_only


def test_pattern_forms(tmp_path: Path) -> None:
    make_tree(tmp_path)
    ctx = ToolContext(workspace=tmp_path)
    assert run(ctx, pattern="*.py").content == "a.py"
    assert run(ctx, pattern="pkg/*.py").content == "pkg/b.py"
    assert run(ctx, pattern="pkg/**/c.?s").content == "pkg/deep/c.ts"
    assert run(ctx, pattern="**/*.{ts,tsx}").content.splitlines() == ["pkg/deep/c.ts", "pkg/x.tsx"]
    assert run(ctx, pattern="[ab].py").content == "a.py"
    assert run(ctx, pattern="*.py", path="pkg").content == "pkg/b.py"
    assert run(ctx, pattern="**/*.yml").content == ".github/ci.yml"
    assert run(ctx, pattern=str(tmp_path / "pkg" / "*.py")).content == "pkg/b.py"
    assert run(ctx, pattern="./pkg/*.py").content == "pkg/b.py"
    assert run(ctx, pattern="dist/gen.py").content == "dist/gen.py"  # a plain path, though ignored
    assert run(ctx, pattern="pkg/").content == "pkg/b.py\npkg/x.tsx"
    assert run(ctx, pattern="**/*.py", path="dist").content == "dist/gen.py"


def test_bare_name_falls_back_to_any_depth(tmp_path: Path) -> None:
    make_tree(tmp_path)
    res = run(ToolContext(workspace=tmp_path), pattern="c.ts")
    assert res.content.splitlines() == [
        "(no match directly in .; showing matches at any depth)",
        "pkg/deep/c.ts",
    ]


def test_cap_errors_forbid(tmp_path: Path) -> None:
    make_tree(tmp_path)
    for i in range(12):
        touch(tmp_path, f"many/f{i:02}.txt", 1000 + i)
    ctx = ToolContext(workspace=tmp_path)
    old = glob_mod.MAX_RESULTS
    glob_mod.MAX_RESULTS = 5
    try:
        res = run(ctx, pattern="many/*.txt")
    finally:
        glob_mod.MAX_RESULTS = old
    lines = res.content.splitlines()
    assert lines[0] == "many/f11.txt" and len(lines) == 6
    assert lines[-1].startswith("[7 more files not shown")
    assert run(ctx, pattern="*.nothing").content.startswith("(no matches")
    assert run(ctx, pattern="x", path="nope").is_error
    assert run(ctx, pattern="").is_error
    assert run(ctx).is_error
    forbidden = ToolContext(workspace=tmp_path, forbid_read=[tmp_path / "pkg"])
    assert run(forbidden, pattern="**/*.py").content == "a.py"


def test_qa_brace_bomb_is_refused_quickly(tmp_path: Path) -> None:
    """QA: twenty `{a,b}` groups built a million regexes (glob hung; grep ignored its timeout)."""
    from reasonix.tool.builtin import grep as grep_mod

    (tmp_path / "a.txt").write_text("x\n")
    bomb = "{a,b}" * 20
    ctx = ToolContext(workspace=tmp_path)
    t0 = time.monotonic()
    res = TOOL.execute(json.dumps({"pattern": bomb}), ctx)
    assert res.is_error and "expands to more than 1024 patterns" in res.content
    assert bomb in res.content
    res = grep_mod.TOOL.execute(json.dumps({"pattern": "x", "glob": bomb}), ctx)
    assert res.is_error and "expands to more than 1024 patterns" in res.content
    assert time.monotonic() - t0 < 10
    ok = TOOL.execute(json.dumps({"pattern": "{a,b,c}.{txt,md}"}), ctx)
    assert ok.content == "a.txt"


def _engines_tree(root: Path) -> None:
    make_tree(root)
    touch(root, "pkg/.hidden/h.py", 5)
    touch(root, "pkg/.env.py", 6)
    touch(root, "pkg/gen/skip.py", 7)
    touch(root, "pkg/gen/keep.py", 8)
    touch(root, "pkg/.gitignore", 1)
    (root / "pkg/.gitignore").write_text("gen/*\n!gen/keep.py\n*.log\n")
    touch(root, "pkg/deep/run.log", 9)
    touch(root, "pkg/__pycache__/c.py", 9)
    touch(root, "lib/.git/objects.py", 9)  # a nested repository's git directory
    touch(root, "lib/node_modules.py", 11)  # a file named like a heavy directory stays
    os.symlink(root / "a.py", root / "link.py")  # symlinks are not followed or listed


def test_the_ripgrep_listing_equals_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """glob lists a tree through ripgrep when it is installed; the results are the walker's."""
    real = shutil.which("rg")
    if real is None:
        pytest.skip("ripgrep (rg) is MISSING")
    calls, tools = tmp_path / "rg-calls", tmp_path / "bin"
    tools.mkdir()
    (tools / "rg").write_text(f'#!/bin/sh\necho called >> "{calls}"\nexec "{real}" "$@"\n')
    (tools / "rg").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    tmp_path = tmp_path / "ws"
    _engines_tree(tmp_path)
    for pattern in ("**/*.py", "**/*", "pkg/**/*.log", "*.py", "**/gen/*.py", "lib/*"):
        got = {
            engine: run(
                ToolContext(workspace=tmp_path, extra={"grep_engine": engine}), pattern=pattern
            ).content
            for engine in ("rg", "python")
        }
        assert got["rg"] == got["python"], pattern
    listed = run(ToolContext(workspace=tmp_path, extra={"grep_engine": "rg"}), pattern="**/*")
    names = set(listed.content.splitlines())
    assert {"pkg/gen/keep.py", "pkg/.env.py", "lib/node_modules.py"} <= names
    assert not {"pkg/gen/skip.py", "pkg/deep/run.log", "link.py", "dist/gen.py"} & names
    assert len(calls.read_text().splitlines()) == 7  # the "rg" runs, and only those, used it
