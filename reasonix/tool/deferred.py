"""A tool whose name, description and schema are known before its implementation is loaded.

The request carries every tool's schema from the first turn, but most tools
are never called in a run. :class:`DeferredTool` answers what the request
and the permission gate read (``name``, ``description``, ``schema``,
``read_only``, ``metadata``) from data, and calls ``make`` for the real tool
the first time anything else is needed — ``execute``, or a per-call hint
such as ``reads_only``. The built-in tools use the generated catalog for the
same purpose (:class:`reasonix.tool.CatalogTool`); this is the shape for tools
wired by the runtime (delegation, memory).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from reasonix.tool import Tool, ToolContext, ToolResult, canonicalize_schema

__all__ = ["DeferredTool"]


class DeferredTool:
    """A tool made by ``make()`` on first use; until then, only its declared surface."""

    def __init__(
        self,
        name: str,
        description: str,
        schema: Mapping[str, Any],
        make: Callable[[], Tool],
        *,
        read_only: bool = False,
        metadata: Mapping[str, Any] | None = None,
        hints: bool = False,
    ) -> None:
        self.name, self.description = name, description
        self.schema: dict[str, Any] = canonicalize_schema(dict(schema))
        self.read_only = read_only
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._make = make
        self._hints = hints  # the real tool answers reads_only(args)
        self._lock = threading.Lock()
        self._real: Tool | None = None

    def resolve(self) -> Tool:
        """The real tool (made on the first call)."""
        with self._lock:
            if self._real is None:
                self._real = self._make()
            return self._real

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        """Run the real tool; one that cannot be made becomes an error result."""
        try:
            tool = self.resolve()
        except Exception as err:  # noqa: BLE001 - a tool that cannot load must not crash the loop
            return ToolResult.error(
                f"{self.name}: cannot load the tool ({type(err).__name__}: {err})"
            )
        return tool.execute(args_json, ctx)

    def __getattr__(self, attr: str) -> Any:
        # only reached for what the declaration does not carry
        if attr.startswith("_") or (attr == "reads_only" and not self._hints):
            raise AttributeError(attr)
        return getattr(self.resolve(), attr)

    def __repr__(self) -> str:
        return f"DeferredTool({self.name!r})"
