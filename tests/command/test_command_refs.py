"""``@`` references over real files (REF-1…7, D25): literal mentions, caps, listings, refusals."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reasonix.command import refs
from reasonix.command.refs import FILE_CAP, TOTAL_CAP, complete_reference, expand_references
from reasonix.errors import PluginError


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    (d / "README.md").write_text("# Readme\nhello\n")
    return d


def expand(text: str, ws: Path, **kw: Any) -> tuple[str, list[str]]:
    return expand_references(text, workspace=ws, forbid_read=kw.pop("forbid_read", ()), **kw)


LITERAL = [
    "ping @alice and bob@example.com",  # REF-2: a mention and an e-mail address
    "see @missing/file.py please",
    "decorate with @property",
    "email me@example.com or @ alone",
    "`@README.md` inside backticks is code",
]


@pytest.mark.parametrize("text", LITERAL)
def test_what_is_not_an_existing_path_stays_literal(ws: Path, text: str) -> None:
    assert expand(text, ws) == (text, [])


def test_a_file_is_attached_before_the_typed_text(ws: Path) -> None:
    out, notes = expand("summarise @README.md.", ws)
    assert notes == []
    assert out == '<file path="README.md">\n# Readme\nhello\n</file>\n\nsummarise @README.md.'


def test_several_references_quoted_deduplicated_and_outside_the_workspace(
    ws: Path, tmp_path: Path
) -> None:
    (ws / "my notes.txt").write_text("spaced")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("outside")
    text = f'@"my notes.txt" and (@README.md) twice @README.md, @{outside}'
    out, notes = expand(text, ws)
    assert notes == []
    blocks = out.split("\n\n")
    assert blocks[0] == '<file path="my notes.txt">\nspaced\n</file>'
    assert blocks[1].startswith('<file path="README.md">')
    assert blocks[2] == f'<file path="{outside}">\noutside\n</file>'
    assert blocks[3] == text and out.count("<file") == 3


def test_a_large_file_is_capped_and_a_binary_one_noted(ws: Path) -> None:
    (ws / "big.log").write_bytes(b"0123456789abcdef\n" * (10 * 1024 * 1024 // 17))  # ~10 MB
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(300))
    out, notes = expand("look at @big.log and @logo.png", ws)
    assert notes == []
    big = out.split("</file>")[0]
    assert "[… truncated: the first 262,144 of 10,485," in big
    assert FILE_CAP <= len(big.encode()) < FILE_CAP + 300
    assert '<file path="logo.png">\n[binary file, 316 bytes: not shown]\n</file>' in out


def test_the_cut_falls_on_a_character_boundary(ws: Path) -> None:
    (ws / "zh.txt").write_text("汉字" * (FILE_CAP // 3))  # 6-byte pairs: the cap splits one
    out, _ = expand("@zh.txt", ws)
    body = out.split("\n", 1)[1].split("\n[…")[0]
    assert "\ufffd" not in body and set(body) == {"汉", "字"}


def test_the_turn_carries_at_most_one_mebibyte(ws: Path) -> None:
    names = [f"f{i}.txt" for i in range(6)]
    for n in names:
        (ws / n).write_text("x" * (FILE_CAP - 100))
    out, notes = expand(" ".join("@" + n for n in names), ws)
    assert out.count("<file") == TOTAL_CAP // FILE_CAP
    assert len(notes) == 2 and all("1 MiB" in n for n in notes)


def test_a_directory_is_listed_depth_first_without_noise(ws: Path) -> None:
    tree = [
        "src/app.py", "src/util/strings.py", "src/util/__pycache__/strings.pyc",
        "docs/guide.md", "node_modules/left-pad/index.js", ".git/HEAD", "build/out.bin",
        "debug.log", "keep.log", ".github/workflows/ci.yml",
    ]  # fmt: skip
    for rel in tree:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    (ws / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (ws / "src" / "link").symlink_to("app.py")
    out, notes = expand("what is in @./ here", ws)
    assert notes == []
    listing = out.split("\n\n")[0]
    assert listing == "\n".join(
        [
            '<directory path=".">',
            ".github/", ".github/workflows/", ".github/workflows/ci.yml",
            ".gitignore", "README.md", "docs/", "docs/guide.md", "keep.log",
            "src/", "src/app.py", "src/link -> app.py", "src/util/", "src/util/strings.py",
            "</directory>",
        ]
    )  # fmt: skip


def test_a_huge_directory_listing_is_capped(ws: Path) -> None:
    many = ws / "many"
    many.mkdir()
    for i in range(refs.DIR_ENTRIES + 25):
        (many / f"f{i:04d}").write_text("")
    out, _ = expand("@many", ws)
    assert "[… 25 more entries not listed" in out


def test_forbid_read_is_honoured(ws: Path, tmp_path: Path) -> None:
    secret = ws / "secrets"
    secret.mkdir()
    (secret / "key.pem").write_text("PRIVATE")
    (ws / "ok.txt").write_text("fine")
    out, notes = expand("@secrets/key.pem @secrets @ok.txt", ws, forbid_read=[secret])
    assert "PRIVATE" not in out and '<file path="ok.txt">' in out
    assert len(notes) == 2 and all("forbid_read" in n for n in notes)
    listing, _ = expand("@.", ws, forbid_read=[secret])
    assert "secrets" not in listing.split("\n\n")[0]  # a listing drops forbidden entries


def test_reasonix_keys_are_never_attached(ws: Path) -> None:
    from reasonix.config.paths import home_dir

    home_dir().mkdir(parents=True, exist_ok=True)
    env = home_dir() / ".env"
    env.write_text("DEEPSEEK_API_KEY=sk-secret\n")
    out, notes = expand(f"@{env}", ws)
    assert "sk-secret" not in out and len(notes) == 1 and "keys" in notes[0]


def test_a_fifo_is_never_opened(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    out, notes = expand("read @pipe", ws)
    assert out == "read @pipe" and "not a regular file" in notes[0]


def test_mcp_resources_and_their_failures(ws: Path) -> None:
    calls: list[tuple[str, str]] = []

    def read(server: str, uri: str) -> str:
        calls.append((server, uri))
        if server != "docs":
            raise PluginError(f"no MCP server named {server!r}")
        if uri.endswith("broken"):
            raise PluginError("MCP server docs rejected resources/read: not found")
        return "guide text\n"

    text = "use @docs:file:///guide.md and @docs:file:///broken and @other:x://y and @alice:hi"
    out, notes = expand(text, ws, read_resource=read)
    assert out == f'<resource ref="docs:file:///guide.md">\nguide text\n</resource>\n\n{text}'
    assert calls == [("docs", "file:///guide.md"), ("docs", "file:///broken"), ("other", "x://y")]
    assert len(notes) == 2 and "not found" in notes[0] and "other" in notes[1]
    assert expand("@docs:file:///guide.md", ws) == ("@docs:file:///guide.md", [])  # no reader


# -- autocomplete (REF-6) -------------------------------------------------------------------


@pytest.fixture
def counted_scandir(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    yield seen


def test_completion_reads_one_level_per_step(ws: Path, counted_scandir: list[str]) -> None:
    deep = ws / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("x")
    (ws / "a" / "b" / "notes.md").write_text("x")
    (ws / ".hidden").write_text("x")
    resources = [{"server": "docs", "uri": "file:///guide.md", "name": "guide"}]
    top = complete_reference("@", workspace=ws, resources=resources)
    assert [c.text for c in top] == ["@README.md", "@a/", "@docs:file:///guide.md"]
    assert top[1].description == "directory" and "guide" in top[2].description
    steps = ["@a/", "@a/b/", "@a/b/c/", "@a/b/c/d/"]
    got = [[c.text for c in complete_reference(s, workspace=ws)] for s in steps]
    assert got == [["@a/b/"], ["@a/b/c/", "@a/b/notes.md"], ["@a/b/c/d/"], ["@a/b/c/d/leaf.txt"]]
    assert len(counted_scandir) == 5  # one directory read per step, never a walk
    assert [c.text for c in complete_reference("@.h", workspace=ws)] == ["@.hidden"]
    assert [c.text for c in complete_reference("@gui", workspace=ws, resources=resources)] == [
        "@docs:file:///guide.md"
    ]
    assert complete_reference("@nothing/here/", workspace=ws) == []
