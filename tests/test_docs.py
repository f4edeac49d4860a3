"""Documentation checks: DOC-1 (both READMEs, linked), DOC-2 (en/zh structure), DOC-4 (links)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", ROOT / "README.zh-CN.md", *(ROOT / "docs").glob("*.md")],
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(\d+(?:\.\d+)*\.?)?", re.M)


def test_readmes_exist_and_link_each_other() -> None:
    en = (ROOT / "README.md").read_text(encoding="utf-8")
    zh = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "README.zh-CN.md" in en
    assert "README.md" in zh


def english_docs() -> list[Path]:
    return [p for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh-CN.md")]


@pytest.mark.parametrize("doc", english_docs(), ids=lambda p: p.name)
def test_every_doc_has_a_chinese_twin_with_the_same_headings(doc: Path) -> None:
    twin = doc.with_name(doc.name[: -len(".md")] + ".zh-CN.md")
    assert twin.is_file(), f"{twin.name} is missing"
    ours = [(lvl, num) for lvl, num in HEADING.findall(doc.read_text(encoding="utf-8"))]
    theirs = [(lvl, num) for lvl, num in HEADING.findall(twin.read_text(encoding="utf-8"))]
    assert ours == theirs


def test_readmes_have_the_same_headings() -> None:
    en = HEADING.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    zh = HEADING.findall((ROOT / "README.zh-CN.md").read_text(encoding="utf-8"))
    assert en == zh


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    text = doc.read_text(encoding="utf-8")
    # links inside fenced code blocks are examples, not links
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not (doc.parent / path).exists():
            broken.append(target)
    assert not broken, f"{doc.name}: broken links {broken}"


def test_spec_status_table_names_every_requirement_area() -> None:
    spec = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    for area in ("ARCH", "PROV", "TOOL", "MCP", "LOOP", "COORD", "CTX", "MEM", "PERM",
                 "CMD", "REF", "SUB", "CFG", "ERR", "STYLE", "DIST", "DOC", "REMOTE"):  # fmt: skip
        assert re.search(rf"^\| {area}\b", spec, re.M), area
