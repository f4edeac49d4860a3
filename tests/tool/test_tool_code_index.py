"""code_index tool: Python via ast, regex outlines for other languages."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.builtin.code_index import TOOL

PY = """\
import typing

class Base:
    pass

class Shape(Base):
    def area(self, scale: float = 1.0) -> float:
        return 0.0

    async def fetch(self, *args, **kw):
        pass

def top(a, b=2) -> int:
    def inner():
        pass
    return 1

if typing.TYPE_CHECKING:
    def typed() -> None: ...
"""

SOURCES = {
    "web/app.ts": "export class Widget {\n  render(x: number): string {\n    return '';\n  }\n}\n"
    "export function build(a) {\n}\nexport const handler = async (req) => {\n};\n"
    "export interface Props {\n}\ntype Id = string;\n",
    "svc/main.go": "package main\n\ntype Server struct {\n}\n\n"
    "func (s *Server) Start(port int) error {\n\treturn nil\n}\n\nfunc main() {\n}\n",
    "core/lib.rs": "pub struct Store {}\nimpl Store {\n"
    "    pub fn open(path: &str) -> Self {\n    }\n}\n"
    "pub(crate) async fn load() {}\nenum Mode { A }\n",
    "j/App.java": "public class App {\n    public static void main(String[] args) {\n    }\n}\n",
    "c/util.c": "#define MAX 3\nstatic int add(int a, int b)\n{\n    return a + b;\n}\n"
    "struct point {\n};\n",
    "r/thing.rb": "module Tools\n  class Thing\n    def self.build(x)\n    end\n"
    "    def run\n    end\n  end\nend\n",
}


def run(root: Path, **args: object) -> ToolResult:
    return TOOL.execute(json.dumps(args), ToolContext(workspace=root))


def test_python_outline(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(PY)
    res = run(tmp_path, path="shapes.py")
    assert res.content.splitlines() == [
        "shapes.py",
        "  3: class Base",
        "  6: class Shape(Base)",
        "  7:   def area(self, scale: float=1.0) -> float",
        "  10:   async def fetch(self, *args, **kw)",
        "  13: def top(a, b=2) -> int",
        "  14:   def inner()",
        "  19: def typed() -> None",
    ]
    assert TOOL.read_only


def test_other_languages(tmp_path: Path) -> None:
    for rel, text in SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    out = run(tmp_path).content
    for expected in (
        "  1: export class Widget",
        "  2:   render(x: number): string",
        "  6: export function build(a)",
        "  8: export const handler = async (req) =>",
        "  10: export interface Props",
        "  3: type Server struct",
        "  6: func (s *Server) Start(port int) error",
        "  2: impl Store",
        "  3:   pub fn open(path: &str) -> Self",
        "  6: pub(crate) async fn load() {}",
        "  2:   public static void main(String[] args)",
        "  1: #define MAX 3",
        "  2: static int add(int a, int b)",
        "  6: struct point",
        "  3:     def self.build(x)",
        "  1: module Tools",
    ):
        assert expected in out.splitlines(), (expected, out)
    assert out.index("c/util.c") < out.index("core/lib.rs") < out.index("web/app.ts")


def test_query_and_errors(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(PY)
    (tmp_path / "broken.py").write_text("def ok():\n    pass\nclass Bad(:\n")
    (tmp_path / "notes.txt").write_text("def nothing(): pass\n")
    res = run(tmp_path, query="AREA")
    assert res.content == "shapes.py\n  7:   def area(self, scale: float=1.0) -> float"
    broken = run(tmp_path, path="broken.py").content
    assert "  1: def ok():" in broken  # syntax error: the regex fallback still outlines
    assert "not a supported source file" in run(tmp_path, path="notes.txt").content
    assert run(tmp_path, path="missing.py").is_error
    assert run(tmp_path, query="zzz").content.startswith("(no symbols matching")


def test_qa_fifo_and_binary_sources_are_skipped(tmp_path: Path) -> None:
    """QA: a FIFO named x.py hung the directory walk; a binary .py was outlined with NULs."""
    import os

    (tmp_path / "a.py").write_text("def a():\n    pass\n")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "blob.py").write_bytes(b"def b(): pass\x00\xff\n")
    res = run(tmp_path)
    assert res.content == "a.py\n  1: def a()"
    assert "\x00" not in run(tmp_path, path="blob.py").content
    assert run(tmp_path, path="pipe.py").content == "(no source files found under pipe.py)"
