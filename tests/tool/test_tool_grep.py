"""grep tool: filtering rules, output format, caps, and rg/Python engine parity."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin._gitignore import IgnoreFile, parse_rules
from reasonix.tool.builtin.grep import TOOL

RG = shutil.which("rg")
NO_RG = "MISSING ripgrep (rg): apt-get install ripgrep; CI must run this half"
ENGINES = [
    "python",
    pytest.param(
        "rg",
        marks=pytest.mark.skipif(
            RG is None,
            reason=NO_RG,
        ),
    ),
]


def run(root: Path, engine: str = "python", **args: object) -> ToolResult:
    ctx = ToolContext(workspace=root, extra={"grep_engine": engine})
    return TOOL.execute(json.dumps(args), ctx)


def write(root: Path, rel: str, text: str | bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A fixture tree exercising every filtering rule."""
    root = tmp_path / "proj"
    # An ancestor .gitignore above the repo root must NOT apply (a .git marks the root).
    write(tmp_path, ".gitignore", "*.txt\n")
    (root / ".git").mkdir(parents=True)
    write(root, ".git/config.txt", "needle in git dir\n")
    write(root, ".gitignore", "build/\n/top.txt\n*.log\n!keep.log\n!.shown\ndocs/**/gen\n")
    write(root, "a.py", "x = 1\nneedle = 2\n# needle again\n")
    write(root, "top.txt", "needle anchored-ignored\n")
    write(root, "sub/top.txt", "needle anchored rule is root only\n")
    write(root, "build/out.py", "needle in build\n")
    write(root, "sub/build/deep.py", "needle dir rule at any depth\n")
    write(root, "x.log", "needle log\n")
    write(root, "keep.log", "needle kept by negation\n")
    write(root, ".hidden.py", "needle hidden\n")
    write(root, ".hdir/f.py", "needle hidden dir\n")
    write(root, ".shown", "needle whitelisted hidden\n")
    write(root, "bin.dat", b"needle\x00binary\n")
    write(root, "late.bin", b"needle\n" + b"x" * 9000 + b"\x00")
    write(root, "docs/a/b/gen/x.md", "needle generated\n")
    write(root, "docs/readme.md", "needle docs\n")
    write(root, "sub/.gitignore", "*.md\n!docs.md\n")
    write(root, "sub/notes.md", "needle md ignored by nested\n")
    write(root, "sub/docs.md", "needle re-included\n")
    write(root, "crlf.txt", "needle crlf\r\nplain\r\n")
    write(root, "bom.py", "\ufeffneedle after bom\n")
    write(root, "u16.txt", "needle utf16\n".encode("utf-16"))
    write(root, "latin.txt", b"caf\xe9 needle\n")
    write(
        root,
        "ctx.py",
        "".join(f"line {i}{' needle' if i in (5, 7, 20) else ''}\n" for i in range(1, 26)),
    )
    os.symlink(root / "a.py", root / "link.py")
    return root


EXPECTED_FILES = {
    "a.py",
    "bom.py",
    "crlf.txt",
    "ctx.py",
    "docs/readme.md",
    "keep.log",
    ".shown",
    "latin.txt",
    "sub/docs.md",
    "sub/top.txt",
    "u16.txt",
}


@pytest.mark.parametrize("engine", ENGINES)
def test_filtering_rules(tree: Path, engine: str) -> None:
    res = run(tree, engine, pattern="needle", output_mode="files_with_matches")
    assert not res.is_error, res.content
    assert set(res.content.splitlines()) == EXPECTED_FILES
    assert res.metadata["engine"] == engine


@pytest.mark.parametrize("engine", ENGINES)
def test_content_format_and_order(tree: Path, engine: str) -> None:
    res = run(tree, engine, pattern="needle", path="a.py")
    assert res.content == "a.py:2:needle = 2\na.py:3:# needle again"
    res = run(tree, engine, pattern=r"needle (crlf|after|utf16)")
    assert res.content.splitlines() == [
        "bom.py:1:needle after bom",
        "crlf.txt:1:needle crlf",
        "u16.txt:1:needle utf16",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_context_lines(tree: Path, engine: str) -> None:
    res = run(tree, engine, pattern="needle", path="ctx.py", context=1)
    assert res.content.splitlines() == [
        "ctx.py-4-line 4",
        "ctx.py:5:line 5 needle",
        "ctx.py-6-line 6",
        "ctx.py:7:line 7 needle",
        "ctx.py-8-line 8",
        "--",
        "ctx.py-19-line 19",
        "ctx.py:20:line 20 needle",
        "ctx.py-21-line 21",
    ]
    res = run(tree, engine, pattern="needle", path="ctx.py", before_context=2, after_context=0)
    assert res.content.splitlines()[:3] == [
        "ctx.py-3-line 3",
        "ctx.py-4-line 4",
        "ctx.py:5:line 5 needle",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_count_glob_type_ignore_case(tree: Path, engine: str) -> None:
    assert run(tree, engine, pattern="needle", output_mode="count", type="py").content == (
        "a.py:2\nbom.py:1\nctx.py:3"
    )
    assert run(tree, engine, pattern="NEEDLE", ignore_case=True, glob="*.md").content == (
        "docs/readme.md:1:needle docs\nsub/docs.md:1:needle re-included"
    )
    assert run(tree, engine, pattern="needle", glob="sub/**").content.count("\n") == 1
    excluded = run(tree, engine, pattern="needle", glob="!*.py", output_mode="files_with_matches")
    assert "a.py" not in excluded.content.splitlines() and "keep.log" in excluded.content
    assert run(tree, engine, pattern="NEEDLE").content == "(no matches)"


@pytest.mark.parametrize("engine", ENGINES)
def test_cap_note(tmp_path: Path, engine: str) -> None:
    write(tmp_path, "many.txt", "hit\n" * 250)
    res = run(tmp_path, engine, pattern="hit")
    lines = res.content.splitlines()
    assert len(lines) == 201
    assert lines[199] == "many.txt:200:hit"
    assert lines[200].startswith("[50 more matches not shown")


@pytest.mark.parametrize("engine", ENGINES)
def test_cap_across_files_with_context(tmp_path: Path, engine: str) -> None:
    for i in range(30):
        write(tmp_path, f"d{i % 3}/f{i:02}.txt", "".join(f"hit {n}\nmiss\n" for n in range(10)))
    res = run(tmp_path, engine, pattern="hit", after_context=1)
    lines = res.content.splitlines()
    assert lines[0] == "d0/f00.txt:1:hit 0" and lines[1] == "d0/f00.txt-2-miss"
    assert lines[-2] == "d1/f28.txt:19:hit 9"  # the 200th match: files sorted by path
    assert lines[-1].startswith("[100 more matches not shown")
    count = run(tmp_path, engine, pattern="hit", output_mode="count", glob="d2/*")
    assert (
        count.content.splitlines()[0] == "d2/f02.txt:10" and len(count.content.splitlines()) == 10
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_forbid_read(tree: Path, engine: str) -> None:
    ctx = ToolContext(workspace=tree, forbid_read=[tree / "sub"], extra={"grep_engine": engine})
    res = TOOL.execute(json.dumps({"pattern": "needle", "output_mode": "files_with_matches"}), ctx)
    assert set(res.content.splitlines()) == {f for f in EXPECTED_FILES if not f.startswith("sub/")}
    denied = TOOL.execute(json.dumps({"pattern": "needle", "path": "sub/docs.md"}), ctx)
    assert denied.is_error and "forbid_read" in denied.content


def test_errors_and_explicit_files(tree: Path) -> None:
    missing = run(tree, pattern="x", path="nope")
    assert missing.is_error and "does not exist" in missing.content
    bad = run(tree, pattern="(unclosed")
    assert bad.is_error and "invalid regular expression" in bad.content
    assert (
        run(tree, pattern="needle", path="bin.dat").content
        == "(bin.dat is a binary file; not searched)"
    )
    # Explicit files are searched even when hidden or ignored.
    assert run(tree, pattern="needle", path="x.log").content == "x.log:1:needle log"
    assert run(tree, pattern="needle", path=".hidden.py").content == ".hidden.py:1:needle hidden"
    assert run(tree, pattern="needle", type="nosuch").is_error
    assert json.loads("{}") == {} and run(tree, pattern="").is_error
    assert TOOL.execute("{bad", ToolContext(workspace=tree)).is_error


@pytest.mark.parametrize("engine", ENGINES)
def test_python_only_regex_features(tree: Path, engine: str) -> None:
    # Look-behind: ripgrep's default engine rejects it, so the Python engine answers.
    res = run(tree, engine, pattern=r"(?<=# )needle", path="a.py")
    assert res.content == "a.py:3:# needle again"
    assert (
        run(tree, engine, pattern=r"^[[:alpha:]]+ = 2$", path="a.py").content == "a.py:2:needle = 2"
    )
    assert run(tree, engine, pattern=r"\Aline 1\Z", path="ctx.py").content == "ctx.py:1:line 1"


def test_multiline_whole_text_hits_are_checked_per_line(tmp_path: Path) -> None:
    write(tmp_path, "m.txt", "a\nb   \n   c\n\nend")
    assert run(tmp_path, pattern=r"\s+c").content == "m.txt:3:   c"
    assert run(tmp_path, pattern=r"^$").content == "m.txt:4:"
    assert run(tmp_path, pattern=r"end$").content == "m.txt:5:end"
    assert run(tmp_path, pattern=r"b\s+c").content == "(no matches)"


@pytest.mark.skipif(RG is None, reason=NO_RG)
def test_engines_identical_on_fixture(tree: Path) -> None:
    cases: list[dict[str, object]] = [
        {"pattern": "needle"},
        {"pattern": "needle", "context": 2},
        {"pattern": r"line \d+", "output_mode": "count"},
        {"pattern": "NeEdLe", "ignore_case": True, "output_mode": "files_with_matches"},
        {"pattern": r"\bneedle\b", "glob": "*.{py,md}"},
        {"pattern": "é|needle", "path": "latin.txt"},
        {"pattern": "line", "after_context": 1, "path": "ctx.py"},
    ]
    for args in cases:
        py = run(tree, "python", **args)
        rg = run(tree, "rg", **args)
        assert py.content == rg.content, args
        assert rg.metadata["engine"] == "rg"


def test_gitignore_rule_parsing() -> None:
    rules = parse_rules("# c\n\n\\#lit\n\\!bang\ntrail\\ \nspace  \n/abs\nd/\na/**/z\n")
    ig = IgnoreFile("/r", rules)
    assert ig.match("#lit", False) and ig.match("x/!bang", False)
    assert ig.match("trail ", False) and ig.match("space", False)
    assert ig.match("abs", False) and ig.match("x/abs", False) is None
    assert ig.match("d", True) and ig.match("d", False) is None
    assert ig.match("a/z", False) and ig.match("a/b/c/z", False)
    bare = IgnoreFile("/r", parse_rules("*\n!\n"))
    assert bare.match("anything/at/all", True) is False  # a bare "!" whitelists (as ripgrep)


_NAMES = ["a", "b", "ab", "a.txt", "b.log", "x.py", "deep", "build", "ĉ.md", "[x]", "sp ace", ".h"]
_RULES = [
    "*.log", "a", "/a", "a/", "**/b", "deep/**", "deep/**/x.py", "!a.txt", "!*.py", "b*", "?b",
    "[ab].txt", "build/", "!build/", "a/**/b", "!deep/", "\\!x", "x.py ", "/deep/a/", "*.[tl]*",
    "[!a]*", "deep/*", "!/b", "\\[x\\]", "sp ace", "a**", "**a", "deep/**/", "[a-c]*", "!", "*/b",
]  # fmt: skip
_WORDS = [
    "foo",
    "bar",
    "Foo",
    "baz9",
    "  ",
    "\t",
    "",
    "é",
    "naïve",
    "foo_bar",
    "(",
    "1234",
    "Straße",
]
_PATTERNS = [
    r"foo", r"\bfoo\b", r"^foo", r"foo$", r"\s+", r"^\s*$", r"^$", r"[a-z]+\d", r"(foo|bar)",
    r"\w+$", r"\d{2,}", r"\(", r"\S+\s+\S+", r"é", r"[é]", r"\W", r"foo.*bar", r"^.{3}$",
]  # fmt: skip


def _random_tree(root: Path, rnd: random.Random, depth: int = 0) -> None:
    for name in rnd.sample(_NAMES, rnd.randint(2, 6)):
        p = root / name
        if depth < 3 and rnd.random() < 0.4 and "." not in name:
            p.mkdir(exist_ok=True)
            _random_tree(p, rnd, depth + 1)
        elif not p.exists():
            lines = [" ".join(rnd.choices(_WORDS, k=rnd.randint(0, 5))) for _ in range(6)]
            nl = rnd.choice(["\n", "\r\n"])
            p.write_text(nl.join(lines) + (nl if rnd.random() < 0.7 else ""), encoding="utf-8")
    if rnd.random() < 0.5:
        (root / ".gitignore").write_text("\n".join(rnd.sample(_RULES, rnd.randint(1, 5))) + "\n")


@pytest.mark.skipif(RG is None, reason=NO_RG)
def test_random_trees_engines_agree(tmp_path: Path) -> None:
    # Generated trees, ignore files and patterns: a cheap guard against the two
    # engines drifting apart (the same generator found no difference in 3000 runs).
    for seed in range(40):
        rnd = random.Random(seed)
        root = tmp_path / str(seed)
        (root / ".git").mkdir(parents=True)
        _random_tree(root, rnd)
        args: dict[str, object] = {"pattern": rnd.choice(_PATTERNS)}
        args["ignore_case"] = rnd.random() < 0.3
        if rnd.random() < 0.3:
            args["context"] = rnd.randint(1, 2)
        if rnd.random() < 0.3:
            args["output_mode"] = rnd.choice(["count", "files_with_matches"])
        py, rg = run(root, "python", **args), run(root, "rg", **args)
        assert py.content == rg.content, (seed, args)


@pytest.mark.parametrize("engine", ENGINES)
def test_qa_fifo_and_devices_are_never_opened(tmp_path: Path, engine: str) -> None:
    """QA: a FIFO in the tree hung the Python engine forever (its timeout cannot
    interrupt a blocking open); an explicit FIFO or /dev/zero hung rg until the timeout."""
    write(tmp_path, "a.txt", "needle\n")
    os.mkfifo(tmp_path / "pipe")
    os.mkfifo(tmp_path / "pipe.txt")
    assert run(tmp_path, engine, pattern="needle", timeout_seconds=5).content == "a.txt:1:needle"
    for path in ("pipe", "/dev/zero"):
        result = run(tmp_path, engine, pattern="needle", path=path, timeout_seconds=5)
        assert result.content == f"({path} is not a regular file; not searched)"


@pytest.mark.parametrize("engine", ENGINES)
def test_qa_file_name_with_a_newline(tmp_path: Path, engine: str) -> None:
    """QA: rg records were split at LF before NUL, so a name holding a LF lost its hits."""
    write(tmp_path, "a\nb.txt", "needle one\nneedle two\n")
    write(tmp_path, "b.txt", "other\n")
    assert run(tmp_path, engine, pattern="needle", output_mode="count").content == "a\nb.txt:2"
    text = run(tmp_path, engine, pattern="needle", context=1).content
    assert text == "a\nb.txt:1:needle one\na\nb.txt:2:needle two"


@pytest.mark.parametrize("engine", ENGINES)
def test_qa_huge_binary_is_skipped_without_reading_it_whole(tmp_path: Path, engine: str) -> None:
    """QA: the Python engine read a whole binary into memory before noticing the NUL."""
    with open(tmp_path / "disk.img", "wb") as fh:
        fh.truncate(1 << 30)  # sparse: 1 GiB of NUL bytes
    write(tmp_path, "a.txt", "needle\n")
    assert run(tmp_path, engine, pattern="needle").content == "a.txt:1:needle"
    write(tmp_path, "u16.txt", "needle".encode("utf-16"))
    assert run(tmp_path, engine, pattern="needle", path="u16.txt").content == "u16.txt:1:needle"
