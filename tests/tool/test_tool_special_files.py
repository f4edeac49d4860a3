"""Issue 12 item 1 for the tools: a FIFO, device or socket planted in a workspace
(under an ignore-file name, as a source file, or as the file the model names)
never hangs or floods a tool; it is skipped by searches and refused by reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import plant

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin import code_index, glob, grep, ls, read_file

pytestmark = pytest.mark.timeout(30)
SPECIAL = ("fifo", "dev-zero", "socket")


def run(tool: object, ctx: ToolContext, **args: object) -> ToolResult:
    return tool.TOOL.execute(json.dumps(args), ctx)  # type: ignore[attr-defined, no-any-return]


def _workspace(tmp_path: Path, engine: str = "python") -> ToolContext:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_text("def needle():\n    return 1\n")
    return ToolContext(workspace=ws, extra={"grep_engine": engine})


@pytest.mark.parametrize("shape", SPECIAL)
@pytest.mark.parametrize("name", [".gitignore", "pkg/.ignore", ".rgignore"])
def test_a_special_ignore_file_does_not_stop_a_walk(tmp_path: Path, name: str, shape: str) -> None:
    ctx = _workspace(tmp_path)
    plant(ctx.workspace / name, shape)
    assert "pkg/a.py" in run(glob, ctx, pattern="**/*.py").content
    assert "a.py" in run(ls, ctx, path="pkg").content
    found = run(grep, ctx, pattern="needle")
    assert "pkg/a.py" in found.content and not found.is_error


@pytest.mark.parametrize("engine", ["python", "auto"])
@pytest.mark.parametrize("shape", SPECIAL)
def test_a_special_source_file_is_skipped_or_refused(
    tmp_path: Path, shape: str, engine: str
) -> None:
    ctx = _workspace(tmp_path, engine)
    plant(ctx.workspace / "pkg" / "b.py", shape)
    found = run(grep, ctx, pattern="needle")
    assert "pkg/a.py" in found.content
    named = run(grep, ctx, pattern="needle", path="pkg/b.py")
    assert "pkg/a.py" not in named.content
    outline = run(code_index, ctx, path="pkg")
    assert "needle" in outline.content
    read = run(read_file, ctx, path="pkg/b.py")
    assert read.is_error and "not a regular file" in read.content
