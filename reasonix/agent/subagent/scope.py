"""A child's tool registry and tool context, narrowed to its grant (SUB-12…17, PERM-16).

:func:`narrow` runs while the child runtime is built (boot calls it with
the registry and tool context it made from the configuration) and is the
only place that decides what a child may call:

* read-only children keep only read-only tools (plus ``read_only_task`` and
  ``parallel_tasks``, whose children are read-only too);
* a profile's ``allowed-tools`` is a ceiling on top of that;
* writers keep the path-aware writers, bound to the claim through
  ``ctx.extra["write_paths"]`` (both ends of ``move_file``); ``bash`` stays
  only when the OS sandbox can rebind its write roots to the claim; any
  other writer the host cannot scope is dropped;
* no child can widen its write scope by asking (the write-scope gate goes).

MCP reaches a child only through its own ``use_capability`` frontend
(:func:`mcp_filter`): for claimed and read-only children every target not
proven read-only (``readOnlyHint`` true, no ``destructiveHint``) is refused
before any server process is started or restarted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.lazy import dataclass, replace
from reasonix.tool import Registry, ToolContext

from .claims import WriteClaim
from .ledger import PATH_WRITERS
from .tool_schemas import DELEGATION_TOOLS, READ_ONLY_DELEGATION

if TYPE_CHECKING:
    from typing import Any

__all__ = ["DELEGATION_TOOLS", "READ_ONLY_DELEGATION", "Narrowing", "mcp_filter", "narrow"]

_ALWAYS = ("complete_subtask", "use_capability")  # the contract and the child's own frontend


@dataclass(frozen=True)
class Narrowing:
    """What :func:`narrow` needs to know about the child."""

    read_only: bool
    claim: WriteClaim | None  # None for a read-only child
    allowed_tools: tuple[str, ...] | None  # the profile's ceiling


def bash_rebind(sandbox: Any, claim: WriteClaim) -> tuple[Any, str]:
    """``(settings, "")`` with bash's write roots rebound to ``claim``, or ``(None, why not)``."""
    from reasonix.permission.sandbox import SandboxSettings, backend_status

    if not isinstance(sandbox, SandboxSettings) or sandbox.mode == "off":
        return None, "the OS sandbox for bash is off, so it cannot enforce the claim"
    import os

    backend, problem = backend_status(sandbox, dict(os.environ))
    if not backend:
        return None, f"no OS sandbox can enforce the claim ({problem})"
    missing = [p for p in claim.paths if not p.exists()]
    if missing:
        return None, f"the claimed path {missing[0]} does not exist yet, so it cannot be bound"
    rebound = replace(
        sandbox,
        mode="enforce",  # never silently unsandboxed inside a claim
        write_roots=list(claim.paths),
        cache_roots=[],
        bind_workspace=False,
    )
    return rebound, ""


def narrow(registry: Registry, ctx: ToolContext, n: Narrowing) -> list[str]:
    """Narrow ``registry`` and ``ctx`` in place; returns "tool: why" for every removal."""
    removed: list[str] = []

    def drop(name: str, why: str) -> None:
        registry.remove(name)
        removed.append(f"{name}: {why}")

    ctx.extra.pop("write_scope", None)  # a child never asks to widen its scope
    for tool in registry.tools():
        name = tool.name
        if n.allowed_tools is not None and name not in n.allowed_tools and name not in _ALWAYS:
            drop(name, "not in the profile's allowed-tools")
        elif n.read_only and not tool.read_only and name not in READ_ONLY_DELEGATION:
            if name != "use_capability":
                drop(name, "read-only child")
        elif tool.read_only or name in _ALWAYS or name in DELEGATION_TOOLS:
            continue
        elif name in PATH_WRITERS:
            continue  # bound to the claim below
        elif name == "bash":
            if n.claim is not None and not n.claim.whole:
                rebound, why = bash_rebind(ctx.sandbox, n.claim)
                if rebound is None:
                    drop(name, why)
                else:
                    ctx.sandbox = rebound
        else:
            drop(name, "a writer the host cannot bind to the claim")
    if n.claim is not None and not n.claim.whole:
        ctx.extra["write_paths"] = [str(p) for p in n.claim.paths]
        # bash's additional_write_dirs is judged against these roots: nothing beyond the claim
        ctx.write_roots = list(n.claim.paths)
    return removed


def mcp_filter(strict: bool) -> Callable[[str, dict[str, Any]], str | None] | None:
    """The ``use_capability`` allow filter of a child (None = every target allowed)."""
    if not strict:
        return None

    def allow(tool_id: str, spec: dict[str, Any]) -> str | None:
        hints = spec.get("annotations") or {}
        if not isinstance(hints, dict):
            hints = {}
        if hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True:
            return None
        return "this sub-agent may use only MCP tools proven read-only (readOnlyHint)"

    return allow
