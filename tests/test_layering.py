"""DESIGN.md §2: the import rules, checked with ``ast`` over every module.

Imports inside functions count, and so do ``importlib.import_module`` calls
with a literal ``reasonix.…`` string. Parents never import their built-in
children, and the top-level packages form no cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "reasonix"

CORE = "core"  # reasonix.errors, reasonix.cancel, reasonix.lazy (deferred dataclasses)
ALLOWED: dict[str, set[str]] = {
    "cli": {
        "serve",
        "acp",
        "boot",
        "agent",
        "command",
        "plugin",
        "config",
        "tool",
        "provider",
        "permission",
        "remote",
        CORE,
    },
    "serve": {"boot", "agent", "command", "plugin", "config", "tool", "provider", "permission",
              CORE},
    "acp": {"boot", "agent", "command", "plugin", "config", "tool", "provider", "permission",
            CORE},
    "boot": {"agent", "command", "plugin", "config", "tool", "provider", "permission", CORE},
    "agent": {"command", "plugin", "config", "tool", "provider", "permission", CORE},
    "command": {"config", "tool", "provider", "permission", CORE},
    "plugin": {"config", "tool", "provider", "permission", CORE},
    "tool": {"permission", CORE},
    "provider": {CORE},
    "permission": {CORE},
    "config": {CORE},
    "remote": {CORE},
    CORE: {CORE},
}  # fmt: skip
# Built-in children that register themselves; their parent package's own
# modules must never import them (ARCH-3).
BUILTIN_CHILDREN = {
    "reasonix.provider": ("reasonix.provider.openai", "reasonix.provider.anthropic",
                          "reasonix.provider.responses"),
    "reasonix.tool": ("reasonix.tool.builtin",),
}  # fmt: skip


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in (
        "errors",
        "cancel",
        "lazy",
        "lazy_light",
        "slices",
        "idle",
        "digest",
        "charsets",
        "which",
        "pids",
        "protocols",
        "__main__",
        "_pyzarchive",
        "_pyzboot",
        "_pyzmain",
        "_codecache",
        "_version",
    ):
        # the entry points (python -m, the .pyz's) sit above everything, like the CLI
        entry = ("__main__", "_pyzarchive", "_pyzboot", "_pyzmain")
        return "cli" if len(parts) > 1 and parts[1] in entry else CORE
    return parts[1]


def imported_modules(path: Path, this: str = "") -> list[tuple[int, str]]:
    """Every reasonix module named by an import in ``path``, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    this = this or module_name(path)
    package = this if path.name == "__init__.py" else this.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            # `from reasonix import agent` names a sub-package, not an attribute
            for alias in node.names:
                candidate = f"{mod}.{alias.name}"
                if (PKG.parent / candidate.replace(".", "/")).exists() or (
                    PKG.parent / (candidate.replace(".", "/") + ".py")
                ).exists():
                    found.append((node.lineno, candidate))
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((node.lineno, arg.value))
    return [(line, m) for line, m in found if m == "reasonix" or m.startswith("reasonix.")]


def all_modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "_vendor" not in p.parts)


def test_every_import_follows_the_layering() -> None:
    problems = []
    for path in all_modules():
        src = layer_of(module_name(path))
        for line, target in imported_modules(path):
            dst = layer_of(target)
            if dst != src and dst not in ALLOWED[src]:
                rel = path.relative_to(ROOT)
                problems.append(f"{rel}:{line}: {src} may not import {dst} ({target})")
    assert not problems, "\n".join(problems)


def test_parents_never_import_builtin_children() -> None:
    problems = []
    for path in all_modules():
        mod = module_name(path)
        for parent, children in BUILTIN_CHILDREN.items():
            inside_parent = mod == parent or mod.startswith(parent + ".")
            inside_child = any(mod == c or mod.startswith(c + ".") for c in children)
            if not inside_parent or inside_child:
                continue
            for line, target in imported_modules(path):
                if any(target == c or target.startswith(c + ".") for c in children):
                    problems.append(f"{path.relative_to(ROOT)}:{line}: imports child {target}")
    assert not problems, "\n".join(problems)


def test_no_cycles_between_top_level_packages() -> None:
    graph: dict[str, set[str]] = {}
    for path in all_modules():
        src = layer_of(module_name(path))
        for _, target in imported_modules(path):
            dst = layer_of(target)
            if dst != src:
                graph.setdefault(src, set()).add(dst)

    visiting: set[str] = set()
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> None:
        if node in done:
            return
        assert node not in visiting, f"import cycle: {' -> '.join([*trail, node])}"
        visiting.add(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*trail, node])
        visiting.discard(node)
        done.add(node)

    for node in sorted(graph):
        visit(node, [])


def test_only_frontends_import_boot() -> None:
    """boot is the composition root: cli, serve and acp build through it; nothing below
    may import it (sub-agent spawns receive a factory from boot as a port instead)."""
    importers = {layer for layer, allowed in ALLOWED.items() if "boot" in allowed}
    assert importers == {"cli", "serve", "acp"}


def test_frontends_never_construct_an_agent() -> None:
    """One runtime, many frontends: no module outside boot/ and agent/ calls Agent(...)."""
    problems = []
    for path in all_modules():
        layer = layer_of(module_name(path))
        if layer in ("boot", "agent"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if name in ("Agent", "Coordinator"):
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: builds {name}")
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    """The rules above are not vacuous: an upward import inside a function is seen."""
    bad = tmp_path / "probe.py"
    bad.write_text("def f():\n    import reasonix.agent.loop\n    from ..agent import x\n")
    found = imported_modules(bad, "reasonix.provider.probe")
    assert (2, "reasonix.agent.loop") in found
    assert (3, "reasonix.agent") in found
    assert "agent" not in ALLOWED[layer_of("reasonix.provider.probe")]


@pytest.mark.parametrize(
    ("parent", "children"),
    [("reasonix.provider", "kinds()"), ("reasonix.tool", "builtin_names()")],
)
def test_importing_a_parent_leaves_its_registry_empty(parent: str, children: str) -> None:
    code = f"import {parent} as p; print(p.{children})"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
