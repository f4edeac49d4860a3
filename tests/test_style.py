"""Source-level rules: ERR-1, STYLE-1, STYLE-3, STYLE-4, STYLE-6, ARCH-1."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "reasonix"
MODULES = sorted(p for p in PKG.rglob("*.py") if "_vendor" not in p.parts)
PRINTING_ALLOWED = ("reasonix/cli/", "reasonix/__main__.py", "reasonix/_pyzmain.py")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# Modules that legitimately hold CJK text (directive tables, tokenizer tests data).
# vocabulary data: Chinese stop words, token classes, constraint words of loss reports
CJK_ALLOWED = {
    "reasonix/agent/memory/bm25.py",
    "reasonix/agent/tokens.py",
    "reasonix/agent/loss.py",
}
CJK_ALLOWED_DIRS = ("reasonix/command/", "reasonix/agent/directives")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_arch1_package_directories_exist() -> None:
    wanted = [
        "cli", "config", "provider", "tool", "tool/builtin", "permission", "command",
        "plugin", "remote", "remote/sftpfs", "remote/bootstrap", "remote/forward", "agent",
    ]  # fmt: skip
    missing = [d for d in wanted if not (PKG / d / "__init__.py").is_file()]
    assert not missing


def test_err1_library_code_never_prints_or_exits() -> None:
    problems = []
    for path in MODULES:
        if rel(path).startswith(PRINTING_ALLOWED):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id in ("print", "exit", "quit"):
                    problems.append(f"{rel(path)}:{node.lineno}: {fn.id}()")
                if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
                    dotted = f"{fn.value.id}.{fn.attr}"
                    if dotted in ("sys.exit", "os._exit"):
                        problems.append(f"{rel(path)}:{node.lineno}: {dotted}()")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                inner = node.value
                if (
                    isinstance(inner.value, ast.Name)
                    and inner.value.id == "sys"
                    and inner.attr in ("stdout", "stderr")
                    and node.attr == "write"
                ):
                    problems.append(f"{rel(path)}:{node.lineno}: sys.{inner.attr}.write")
    assert not problems, "\n".join(problems)


def test_style6_runtime_imports_only_the_stdlib() -> None:
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in stdlib or top == "reasonix" or top == "tomli":
                    continue
                problems.append(f"{rel(path)}:{node.lineno}: imports {name}")
    assert not problems, "\n".join(problems)


def test_tomli_is_only_used_below_311() -> None:
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*import tomli\b|^\s*from tomli\b", text, re.M):
            assert "version_info" in text, f"{rel(path)} imports tomli without a version guard"


def test_style4_public_names_have_docstrings() -> None:
    problems = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not ast.get_docstring(tree):
            problems.append(f"{rel(path)}: module docstring")
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name.startswith("_"):
                    continue
                if not ast.get_docstring(node):
                    problems.append(f"{rel(path)}:{node.lineno}: {node.name}")
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if (
                            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and not item.name.startswith("_")
                            and not ast.get_docstring(item)
                            and not any(
                                isinstance(d, ast.Name) and d.id == "overload"
                                for d in item.decorator_list
                            )
                        ):
                            problems.append(f"{rel(path)}:{item.lineno}: {node.name}.{item.name}")
    assert not problems, "missing docstrings:\n" + "\n".join(problems)


def test_style1_code_is_english() -> None:
    problems = []
    for path in MODULES:
        r = rel(path)
        if r in CJK_ALLOWED or r.startswith(CJK_ALLOWED_DIRS):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CJK.search(line):
                problems.append(f"{r}:{n}")
    assert not problems, "CJK text outside the allowlist:\n" + "\n".join(problems)


def test_style3_module_names_are_lowercase() -> None:
    bad = [rel(p) for p in MODULES if p.stem != p.stem.lower()]
    bad += [rel(d) for d in PKG.rglob("*") if d.is_dir() and d.name != d.name.lower()]
    assert not bad
