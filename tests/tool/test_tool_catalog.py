"""The built-in tool catalog (tool/builtin/_catalog.py): drift against the tool classes,
and CatalogTool, the registry entry that imports its module on first use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix.errors import ConfigError
from reasonix.tool import (
    CatalogTool,
    Registry,
    Tool,
    ToolContext,
    builtin_names,
    canonical_json,
    register_builtin,
    register_catalog,
    unregister_builtin,
)
from reasonix.tool.base import FunctionTool
from reasonix.tool.builtin import BUILTIN_MODULES, load_all, load_catalog
from reasonix.tool.builtin._catalog import CATALOG
from reasonix.tool.catalog import CATALOG_PATH, catalog_entry, render_catalog

ROOT = Path(__file__).resolve().parents[2]


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix.cli.gen_catalog", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _live() -> dict[str, Tool]:
    """The live built-in tools, made by their registered factories (modules imported)."""
    load_all()
    reg = Registry()
    reg_all = Registry.from_builtins(builtin_names())
    for tool in reg_all.tools():
        if isinstance(tool, FunctionTool) and tool.fn.__module__ in BUILTIN_MODULES:
            reg.add(tool)
    return {t.name: t for t in reg.tools()}


def test_committed_catalog_matches_a_fresh_render() -> None:
    res = _gen("--check")
    assert res.returncode == 0, res.stderr + "\nrun: python -m reasonix.cli.gen_catalog"


def test_check_mode_fails_on_drift(tmp_path: Path) -> None:
    out = tmp_path / "_catalog.py"
    assert _gen("--output", str(out)).returncode == 0
    assert out.read_text(encoding="utf-8") == (ROOT / CATALOG_PATH).read_text(encoding="utf-8")
    assert _gen("--check", "--output", str(out)).returncode == 0
    out.write_text(out.read_text(encoding="utf-8").replace("Execute a", "Run a", 1), "utf-8")
    res = _gen("--check", "--output", str(out))
    assert res.returncode == 1 and "is out of date" in res.stderr


def test_every_builtin_is_in_the_catalog_as_its_class_has_it() -> None:
    live = _live()
    assert sorted(CATALOG) == sorted(live)
    assert {entry["module"] for entry in CATALOG.values()} == set(BUILTIN_MODULES)
    for name, tool in live.items():
        assert isinstance(tool, FunctionTool)
        assert CATALOG[name] == catalog_entry(tool, tool.fn.__module__), name
        # the catalog's parameters are already canonical: the request bytes cannot move
        entry_schema = CATALOG[name]["parameters"]
        assert json.dumps(entry_schema) == json.dumps(tool.schema), name


def test_a_changed_tool_renders_a_different_catalog() -> None:
    live = _live()
    entries = {n: catalog_entry(t, CATALOG[n]["module"]) for n, t in live.items()}
    committed = (ROOT / CATALOG_PATH).read_text(encoding="utf-8")
    assert render_catalog(entries) == committed
    entries["ls"] = {**entries["ls"], "read_only": False}
    assert render_catalog(entries) != committed


def test_the_rendered_literal_is_the_data() -> None:
    tricky = {
        "module": "m",
        "description": 'quotes \' and " and "two" \\ back\nnew\ttab \x01 ü 中',
        "read_only": True,
        "reads_only": False,
        "metadata": {"n": 3, "f": 0.5, "none": None, "list": []},
        "parameters": {"type": "object", "properties": {}, "required": ["b", "a"]},
    }
    text = render_catalog({"t": tricky})
    space: dict[str, object] = {}
    exec(compile(text, "<catalog>", "exec"), space)  # the generated module's own text
    assert space["CATALOG"] == {"t": tricky}
    with pytest.raises(TypeError, match="not JSON data"):
        render_catalog({"t": {**tricky, "metadata": {"x": object()}}})


def test_catalog_tools_load_their_module_on_first_execute(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from reasonix.tool import Registry, ToolContext\n"
        "from reasonix.tool.builtin import load_catalog\n"
        "load_catalog()\n"
        "reg = Registry.from_builtins(['ls', 'read_file'])\n"
        "ls = reg.get('ls')\n"
        "before = LOADED('ls')\n"
        "hint = getattr(ls, 'reads_only', None)\n"  # the gate asks this before a call
        "flags = (ls.read_only, ls.metadata, before, hint, LOADED('ls'))\n"
        "res = ls.execute('{}', ToolContext(workspace=Path(sys.argv[1])))\n"
        "print(flags, LOADED('ls'), LOADED('read_file'), ls.fn.__module__, repr(res.content))\n"
    ).replace("LOADED(", "(lambda n: 'reasonix.tool.builtin.' + n in sys.modules)(")
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "(True, {}, False, None, False) True False reasonix.tool.builtin.ls 'a.txt\\t6'"
    )


def test_a_catalog_tool_runs_as_the_real_tool(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n", encoding="utf-8")
    live = _live()
    lazy = CatalogTool("read_file", CATALOG["read_file"])
    assert isinstance(lazy, Tool)
    ctx = ToolContext(workspace=tmp_path)
    args = '{"path": "f.txt"}'
    got, want = lazy.execute(args, ctx), live["read_file"].execute(args, ctx)
    assert (got.content, got.is_error) == (want.content, want.is_error)
    assert "two" in got.content and not got.is_error
    assert lazy.resolve() is live["read_file"]  # the module's own registered instance
    assert canonical_json(lazy.schema) == canonical_json(lazy.resolve().schema)


def test_a_catalog_entry_whose_module_registers_nothing_is_an_error_result() -> None:
    entry = {**CATALOG["ls"], "module": "json"}  # imports fine, registers no tool
    tool = CatalogTool("zz_missing", entry)
    res = tool.execute("{}", ToolContext())
    assert res.is_error and "zz_missing: cannot load the tool" in res.content
    assert "did not register" in res.content


def test_plugin_tools_registered_at_run_time_sit_beside_the_catalog() -> None:
    load_catalog()
    plugin = FunctionTool(
        "zz_plugin", "a plugin tool", {"type": "object", "properties": {}}, lambda a, c: "ran"
    )
    register_builtin(plugin)
    try:
        reg = Registry.from_builtins(["zz_plugin", "glob"])
        assert reg.names() == ["glob", "zz_plugin"]
        assert reg.get("zz_plugin") is plugin
        assert reg.get("zz_plugin").execute("{}", ToolContext()).content == "ran"
        assert "zz_plugin" in Registry.from_builtins().names()
        with pytest.raises(ConfigError, match=r"unknown tool name\(s\) nope; known: .*zz_plugin"):
            Registry.from_builtins(["nope"])
    finally:
        unregister_builtin("zz_plugin")
    assert "zz_plugin" not in Registry.from_builtins().names()


def test_a_catalog_only_entry_becomes_a_catalog_tool() -> None:
    entry = {**CATALOG["ls"], "module": "json", "description": "only in the catalog"}
    register_catalog({"zz_catalog_only": entry})
    try:
        got = Registry.from_builtins(["zz_catalog_only"]).get("zz_catalog_only")
        assert isinstance(got, CatalogTool)
        assert (got.description, got.read_only) == ("only in the catalog", True)
    finally:
        from reasonix import tool as tool_pkg

        tool_pkg._catalog.pop("zz_catalog_only", None)


def test_the_shipped_catalog_is_canonical_so_it_is_used_as_it_is() -> None:
    """CatalogTool takes the catalog's parameters without canonicalising them again."""
    from reasonix.tool import canonicalize_schema

    for name, entry in CATALOG.items():
        params = entry["parameters"]
        again = canonicalize_schema(params)
        assert json.dumps(again) == json.dumps(params), name  # same keys, same order
