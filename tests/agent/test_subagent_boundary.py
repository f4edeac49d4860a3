"""SUB-25: one construction primitive; SUB-4: no profile name in any schema.

The spawn-boundary test lists, with ``ast``, every module that touches the
low-level child construction — calling the ChildFactory port, building
``RuntimeOptions(child=…)`` or calling ``build_child_runtime`` — and every
module that calls ``run_profile_spec``; a new caller of either fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from reasonix.agent.subagent.profile import builtin_skills
from reasonix.agent.subagent.tools import contract_tools

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "reasonix"

# The only places that may construct a child below the primitive.
LOW_LEVEL = {
    "reasonix/agent/subagent/spawn.py": {"factory"},  # TaskTool.run_profile_spec itself
    "reasonix/boot/subagents.py": {"child=", "build_runtime"},  # the ChildFactory port
    "reasonix/boot/runtime.py": {"build_child_runtime"},  # build_runtime's dispatch
}
# Every entry point compiles a ProfileExecSpec and calls the primitive.
ENTRY_POINTS = {
    "reasonix/agent/subagent/spawn.py",  # the definition
    "reasonix/agent/subagent/tools.py",  # task, read_only_task, parallel_tasks, fleet, run_skill
    "reasonix/boot/subagents.py",  # /<profile> task
    "reasonix/cli/subagent_cmd.py",  # reasonix subagent run|try
}


def _touches(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if isinstance(fn, ast.Attribute) and name == "factory":
                found.add("factory")  # the ChildFactory port, held by a TaskTool
            if name == "build_child_runtime":
                found.add("build_child_runtime")
            if name == "RuntimeOptions" and any(k.arg == "child" for k in node.keywords):
                found.add("child=")
            if name == "build_runtime" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Name) and arg.id == "child":
                    found.add("build_runtime")
            if name == "run_profile_spec":
                found.add("run_profile_spec")
        if isinstance(node, ast.FunctionDef) and node.name == "run_profile_spec":
            found.add("run_profile_spec")
    return found


def test_only_the_primitive_constructs_children() -> None:
    low: dict[str, set[str]] = {}
    entries: set[str] = set()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        touched = _touches(ast.parse(path.read_text(encoding="utf-8")))
        if touched - {"run_profile_spec"}:
            low[rel] = touched - {"run_profile_spec"}
        if "run_profile_spec" in touched:
            entries.add(rel)
    assert low == LOW_LEVEL, "a new module builds children below the primitive"
    assert entries == ENTRY_POINTS, "a new entry point must go through run_profile_spec"


def test_the_checker_sees_a_new_caller(tmp_path: Path) -> None:
    probe = "def f(opts, prim):\n    RuntimeOptions(child=opts)\n    prim.factory(opts)\n"
    assert _touches(ast.parse(probe)) == {"child=", "factory"}


def test_no_profile_name_in_any_tool_schema_or_description() -> None:
    """SUB-4: the schemas are the same for every project (profiles come from the index)."""
    names = [s.name for s in builtin_skills()]
    for tool in contract_tools():
        text = tool.description + repr(tool.schema)
        for name in names:
            assert name not in text.lower().replace("explored", ""), (tool.name, name)


def test_the_task_tools_accept_what_sub_4_lists() -> None:
    tools = {t.name: t for t in contract_tools()}
    assert set(tools) == {"task", "read_only_task", "parallel_tasks", "fleet", "run_skill"}
    assert {"prompt", "profile", "model", "effort", "write_paths"} <= set(
        tools["task"].schema["properties"]
    )
    assert "write_paths" not in tools["read_only_task"].schema["properties"]
    fleet_item = tools["fleet"].schema["properties"]["tasks"]["items"]["properties"]
    assert {"id", "depends_on", "write_paths"} <= set(fleet_item)
    assert not {"condition", "when", "if"} & set(fleet_item)  # SUB-21: ids and edges only
    batch = tools["parallel_tasks"].schema["properties"]["tasks"]
    assert (batch["minItems"], batch["maxItems"]) == (2, 64)
    assert tools["read_only_task"].read_only and tools["parallel_tasks"].read_only
    assert not tools["task"].read_only and not tools["fleet"].read_only
