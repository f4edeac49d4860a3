"""glob's shortcuts on big trees: the cheap literal tests before the regex and the depth
cap on ripgrep's walk must never lose a match (issue 38, item 2)."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from reasonix.tool import ToolContext
from reasonix.tool.builtin.glob import TOOL, _compile, literal_needs, max_depth

PATTERNS = [
    "**/d3/**/*.py",
    "**/*.py",
    "*.py",
    "*/*.py",
    "src/**/main.go",
    "**/src/*.go",
    "**/*.{ts,tsx}",
    "{a,src}/**/x.py",
    "{a/*,*}.py",
    "pkg/**/c.?s",
    "**/m?.py",
    "**/d3",
    "**",
    "*",
    "a[/]b/*.py",
    "[ab]/*.py",
    "a\\*/x.py",
    "**/a/b/*",
    "*/",
]

SEGMENTS = ["a", "b", "d3", "src", "x.py", "m1.py", "c.ts", "c.tsx", "main.go", ".h", "a*"]


def _names(lead: str) -> list[str]:
    names = []
    for depth in (1, 2, 3, 4):
        for parts in itertools.product(SEGMENTS, repeat=depth):
            names.append(lead + "/".join(parts))
    return names


@pytest.mark.parametrize("lead", ["./", "/work/repo/"])
def test_the_literal_tests_never_drop_a_match(lead: str) -> None:
    names = _names(lead)
    dropped_somewhere = False
    for pattern in PATTERNS:
        rx = _compile(pattern)
        full = re.compile(re.escape(lead) + "(?:" + rx.pattern + ")", rx.flags)
        needs, ends = literal_needs(pattern)
        for name in names:
            passes = all(piece in name for piece in needs) and (not ends or name.endswith(ends))
            if full.fullmatch(name):
                assert passes, (pattern, name, needs, ends)
            dropped_somewhere |= not passes
    assert dropped_somewhere  # they do prune


def test_what_the_literal_tests_require() -> None:
    assert literal_needs("**/d3/**/*.py") == (("/d3/",), (".py",))
    assert literal_needs("src/**/main.go") == (("/src/",), ("/main.go",))
    assert literal_needs("**/*.{ts,tsx}") == ((), (".ts", ".tsx"))
    assert literal_needs("{a,src}/**/x.py") == ((), ("/x.py",))  # no segment in both
    assert literal_needs("**/a/b/*") == (("/a/", "/b/"), ())
    assert literal_needs("a[/]b/*.py") == ((), ())  # a class may match "/": nothing certain
    assert literal_needs("**") == ((), ())


def test_the_depth_cap() -> None:
    assert max_depth("*.py") == 1
    assert max_depth("*/*.py") == 2
    assert max_depth("{a/*,*}.py") == 2
    assert max_depth("a/b/c/*") == 4
    assert max_depth("**/*.py") is None
    assert max_depth("a**/x") is None  # "**" anywhere: not bounded, to be safe
    assert max_depth("[/]/*.py") is None


def _touch(root: Path, rel: str, mtime: float) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(rel)
    os.utime(p, (mtime, mtime))


def test_pruned_listings_find_what_the_full_walk_finds(tmp_path: Path) -> None:
    """Each pattern's answer from ripgrep (depth-capped, literal-filtered) equals the walker's
    and the expected files, ignore rules and hidden files included."""
    if shutil.which("rg") is None:
        pytest.skip("ripgrep (rg) is MISSING")
    files = [
        "x.py", "a/x.py", "a/b/x.py", "a/b/c/x.py", "src/d3/main.go", "src/main.go",
        "pkg/d3/e1/m1.py", "pkg/d3/m2.py", "pkg/d30/m3.py", "pkg/xd3/m4.py", "d3/m5.py",
        "pkg/d3/gen/m6.py", "pkg/.hid/d3/m7.py", "pkg/d3/m8.pyc", "a/c.ts", "a/b/c.tsx",
    ]  # fmt: skip
    for i, rel in enumerate(files):
        _touch(tmp_path, rel, 1000 + i)
    (tmp_path / "pkg" / ".gitignore").write_text("gen/\n")
    expected = {
        "**/d3/**/*.py": ["pkg/.hid/d3/m7.py", "d3/m5.py", "pkg/d3/m2.py", "pkg/d3/e1/m1.py"],
        "*/*.py": ["d3/m5.py", "a/x.py"],
        "*/*/*.py": ["pkg/xd3/m4.py", "pkg/d30/m3.py", "pkg/d3/m2.py", "a/b/x.py"],
        "*/d3/*.py": ["pkg/d3/m2.py"],
        "src/**/main.go": ["src/main.go", "src/d3/main.go"],
        "**/*.{ts,tsx}": ["a/b/c.tsx", "a/c.ts"],
        "{a/*,*/*/*}.py": ["pkg/xd3/m4.py", "pkg/d30/m3.py", "pkg/d3/m2.py", "a/b/x.py", "a/x.py"],
        "**/b/*": ["a/b/c.tsx", "a/b/x.py"],
    }
    for pattern, want in expected.items():
        for engine in ("rg", "python"):
            ctx = ToolContext(workspace=tmp_path, extra={"grep_engine": engine})
            got = TOOL.execute(json.dumps({"pattern": pattern}), ctx).content.splitlines()
            assert got == want, (pattern, engine)


def test_the_walker_stops_at_the_depth_cap(tmp_path: Path) -> None:
    """Without ripgrep the walker opens no folder below the cap, and yields every file
    above it."""
    from reasonix.cancel import Cancel
    from reasonix.tool.builtin._walk import walk_files

    for rel in ("top.py", "a/one.py", "a/b/two.py", "a/b/c/three.py"):
        _touch(tmp_path, rel, 1000)
    root = str(tmp_path)

    def rels(depth: int | None) -> list[str]:
        walk = walk_files(root, Cancel(), max_depth=depth)
        return sorted(os.path.relpath(p, root) for p in walk)

    assert rels(1) == ["top.py"]
    assert rels(2) == ["a/one.py", "top.py"]
    assert rels(3) == ["a/b/two.py", "a/one.py", "top.py"]
    assert rels(None) == ["a/b/c/three.py", "a/b/two.py", "a/one.py", "top.py"]
