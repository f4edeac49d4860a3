"""docs/COMPAT.md stays true: every row it calls supported or partly names a test that exists.

The table is the promise a Claude Code or Gemini CLI user reads; a row whose
test is renamed or deleted fails here, and so does a row with a status outside
the three the page explains. The Chinese twin has the same rows in the same order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATUSES = {"supported", "partly", "not"}
ZH_STATUSES = {"支持": "supported", "部分支持": "partly", "不支持": "not"}


def rows(doc: Path) -> list[list[str]]:
    """The cells of every body row of the first Markdown table in ``doc``."""
    out: list[list[str]] = []
    in_table = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if in_table and not set("".join(cells)) <= set("-: "):
                out.append(cells)
            in_table = True
        elif in_table:
            break
    return out


def test_every_supported_row_names_a_test_that_exists() -> None:
    table = rows(ROOT / "docs" / "COMPAT.md")
    assert len(table) >= 25
    for feature, status, _how, test in table:
        assert status in STATUSES, (feature, status)
        if status == "not":
            continue
        found = re.fullmatch(r"`(tests/[\w/]+\.py)::(test_\w+)`", test)
        assert found, f"{feature}: no test named ({test!r})"
        path, name = ROOT / found.group(1), found.group(2)
        assert path.is_file(), f"{feature}: {path} is gone"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in defined, f"{feature}: {path.name} has no {name}"


def test_the_chinese_table_has_the_same_rows_statuses_and_tests() -> None:
    en = rows(ROOT / "docs" / "COMPAT.md")
    zh = rows(ROOT / "docs" / "COMPAT.zh-CN.md")
    assert len(zh) == len(en)
    for (_f, status, _h, test), (_zf, zstatus, _zh, ztest) in zip(en, zh, strict=True):
        assert ZH_STATUSES.get(zstatus) == status, (zstatus, status)
        assert ztest == test
