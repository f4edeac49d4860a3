"""DOC-3 tool contract docs, the built-in module list, and per-tool contract rules."""

from __future__ import annotations

import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import reasonix.tool.builtin as builtin_pkg
from reasonix.tool import Registry, ToolContext, builtin_names, canonical_json
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin import BUILTIN_MODULES, load_all
from reasonix.tool.contract import CONTRACT_FILES, drifted, render_contract

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

MINE = {
    "delete_range": False,
    "delete_symbol": False,
    "edit_file": False,
    "move_file": False,
    "multi_edit": False,
    "notebook_edit": False,
    "read_file": True,
    "todo_write": True,
    "web_fetch": True,
    "write_file": False,
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    load_all()
    return Registry.from_builtins()


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix.cli.gen_contract", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_committed_docs_match_a_fresh_render() -> None:
    # A fresh process sees exactly the modules in BUILTIN_MODULES, like the generator.
    res = _gen("--check")
    assert res.returncode == 0, res.stderr + "\nrun: make contract"


def test_check_mode_fails_on_drift(tmp_path: Path) -> None:
    assert _gen("--docs", str(tmp_path)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(CONTRACT_FILES)
    en = tmp_path / "TOOL_CONTRACT.md"
    en.write_text(en.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    res = _gen("--check", "--docs", str(tmp_path))
    assert res.returncode == 1 and "TOOL_CONTRACT.md is out of date" in res.stderr


def test_a_changed_description_is_detected(registry: Registry) -> None:
    tool = registry.get("read_file")
    assert isinstance(tool, FunctionTool)
    changed = Registry()
    for t in registry.tools():
        changed.add(t)
    changed.add(
        FunctionTool(
            tool.name,
            tool.description + " Changed.",
            tool.schema,
            tool.fn,
            tool.read_only,
            tool.metadata,
        )
    )
    committed = (DOCS / "TOOL_CONTRACT.md").read_text(encoding="utf-8")
    assert render_contract(changed, "en") != committed
    assert drifted(changed, DOCS) == sorted(CONTRACT_FILES)


def test_docs_carry_flags_descriptions_and_canonical_schemas(registry: Registry) -> None:
    for name, lang in CONTRACT_FILES.items():
        text = (DOCS / name).read_text(encoding="utf-8")
        for tool in MINE:
            t = registry.get(tool)
            assert t is not None
            flag = "true" if t.read_only else "false"
            assert f"| `{tool}` | {flag} | " in text, (name, tool)
            block = re.search(rf"### `{tool}`\n\n```json\n(.*)\n```", text)
            assert block is not None, (name, tool)
            assert block.group(1) == canonical_json(t.schema)
            assert json.loads(block.group(1)) == t.schema
        assert lang in ("en", "zh")


def test_every_builtin_module_is_listed() -> None:
    modules = {
        f"reasonix.tool.builtin.{m.name}"
        for m in pkgutil.iter_modules(builtin_pkg.__path__)
        if not m.name.startswith("_")
    }
    missing = sorted(modules - set(BUILTIN_MODULES))
    assert not missing, f"add {missing} to BUILTIN_MODULES in reasonix/tool/builtin/__init__.py"
    assert set(BUILTIN_MODULES) <= modules
    assert list(BUILTIN_MODULES) == sorted(BUILTIN_MODULES)


def test_read_only_flags_tool17(registry: Registry) -> None:
    assert set(MINE) <= set(builtin_names())
    for name, flag in MINE.items():
        tool = registry.get(name)
        assert tool is not None and tool.read_only is flag, name


@pytest.mark.parametrize("name", sorted(MINE))
def test_schemas_are_well_formed(registry: Registry, name: str) -> None:
    tool = registry.get(name)
    assert tool is not None
    schema = tool.schema
    assert schema["type"] == "object"
    props = schema["properties"]
    assert set(schema["required"]) <= set(props)
    assert schema["required"] == sorted(schema["required"])
    assert all(p.get("description") for p in props.values())
    assert len(tool.description) > 80  # written for a model: what, when, instead of what


@pytest.mark.parametrize("name", sorted(MINE))
def test_bad_arguments_are_error_results_tool6(
    registry: Registry, name: str, tmp_path: Path
) -> None:
    tool = registry.get(name)
    assert tool is not None
    ctx = ToolContext(workspace=tmp_path)
    for raw in ("{bad", "{}", "[]"):
        res = tool.execute(raw, ctx)
        assert res.is_error, (name, raw)
        assert res.content.startswith(f"{name}: ")
