"""The tool contract: Tool protocol, ToolResult, ToolContext and the registries.

Built-in tools live in ``reasonix.tool.builtin`` and register themselves with
:func:`register_builtin` when imported — the same door plugin tools use. Each
run builds its own :class:`Registry` from the enabled built-ins plus plugin
tools; the agent only sees that registry.

Before a run starts, the built-ins are known as data: ``reasonix.tool.builtin``
hands its generated catalog to :func:`register_catalog`, and the registry holds a
:class:`CatalogTool` for each, which imports the tool's module only when the
model first calls it (the request's tool schemas need no tool module).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from reasonix.cancel import Cancel
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass, field

from .ports import ToolPorts

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONTENT_LIMIT_BYTES",
    "CatalogTool",
    "DeferredTool",
    "Registry",
    "Tool",
    "ToolContext",
    "ToolResult",
    "builtin_names",
    "canonical_json",
    "canonicalize_schema",
    "clip_content",
    "register_builtin",
    "register_catalog",
    "unregister_builtin",
]

CONTENT_LIMIT_BYTES = 32768  # D18: what the provider may see of one tool result
_CLIP_MARKER = "\n[... {n} bytes omitted; the full result is kept locally ...]\n"


@dataclass
class ToolResult:
    """What a tool call produced.

    ``content`` is provider-visible and at most 32768 UTF-8 bytes;
    ``raw_content`` is the full local text (equal to content when short).
    """

    content: str
    is_error: bool = False
    raw_content: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.raw_content:
            self.raw_content = self.content
        self.content = clip_content(self.content)

    @classmethod
    def error(cls, message: str, **metadata: Any) -> ToolResult:
        """An error result the model can read."""
        return cls(content=message, is_error=True, metadata=dict(metadata))


class ToolContext:
    """Per-call environment handed to :meth:`Tool.execute`.

    Fields may grow; every field has a default so tests can build one cheaply:
    ``workspace`` the current directory, lists and ``extra`` empty, a fresh
    :class:`~reasonix.cancel.Cancel` and local :class:`~.ports.ToolPorts`.
    ``secrets`` are Reasonix's own secret files (config.paths.secret_paths()): never
    read, never written. ``sandbox`` holds the permission.sandbox settings (None: run
    unsandboxed); ``ports`` is where file and bash I/O goes when a frontend owns it
    (ACP); ``call_id`` the tool call being executed (set per call by the agent).

    A plain class, not a dataclass: every run makes one before its first request and
    copies it per call with :meth:`replace` (issue 39).
    """

    def __init__(
        self,
        workspace: Path | None = None,
        cwd: Path | None = None,
        write_roots: list[Path] | None = None,
        forbid_read: list[Path] | None = None,
        secrets: list[Path] | None = None,
        cancel: Cancel | None = None,
        bash_timeout: float = 120.0,
        sandbox: Any = None,
        session_id: str = "",
        state_dir: Path | None = None,
        config_dir: Path | None = None,
        progress: Callable[[str], None] | None = None,
        headless: bool = True,
        extra: dict[str, Any] | None = None,
        ports: ToolPorts | None = None,
        call_id: str = "",
    ) -> None:
        self.workspace: Path = Path.cwd() if workspace is None else workspace
        self.cwd = cwd
        self.write_roots: list[Path] = [] if write_roots is None else write_roots
        self.forbid_read: list[Path] = [] if forbid_read is None else forbid_read
        self.secrets: list[Path] = [] if secrets is None else secrets
        self.cancel: Cancel = Cancel() if cancel is None else cancel
        self.bash_timeout = bash_timeout
        self.sandbox = sandbox
        self.session_id = session_id
        self.state_dir = state_dir
        self.config_dir = config_dir
        self.progress = progress
        self.headless = headless
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.ports: ToolPorts = ToolPorts() if ports is None else ports
        self.call_id = call_id

    def replace(self, **changes: Any) -> ToolContext:
        """A new context with ``changes`` and every other field as here (the same objects,
        as :func:`dataclasses.replace` gives); TypeError for an unknown field."""
        return ToolContext(**{**vars(self), **changes})


@runtime_checkable
class Tool(Protocol):
    """A capability the model can call."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        """Run the tool with raw JSON arguments; never raise for ordinary failures."""
        ...


def clip_content(text: str, limit: int = CONTENT_LIMIT_BYTES) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes as head + marker + tail.

    Cuts fall on character boundaries; the marker says how much was omitted.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # lone surrogates (from a broken file name or a model) cannot go on the wire
        text = text.encode("utf-8", "replace").decode("utf-8")
        data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    omitted_guess = len(data) - limit
    marker = _CLIP_MARKER.format(n=omitted_guess)
    budget = limit - len(marker.encode("utf-8")) - 16
    head_b = budget * 3 // 4
    tail_b = budget - head_b
    head = data[:head_b].decode("utf-8", errors="ignore")
    tail = data[len(data) - tail_b :].decode("utf-8", errors="ignore")
    omitted = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return head + _CLIP_MARKER.format(n=omitted) + tail


def canonicalize_schema(value: Any) -> Any:
    """Return ``value`` with dict keys sorted recursively and ``required`` sorted (D23)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key in sorted(value):
            item = canonicalize_schema(value[key])
            if key == "required" and isinstance(item, list):
                item = sorted(item)
            out[key] = item
        return out
    if isinstance(value, list):
        return [canonicalize_schema(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON text of ``value``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_builtin_lock = threading.Lock()
_builtins: dict[str, Callable[[], Tool]] = {}
# name -> catalog entry of a built-in known as data (see register_catalog)
_catalog: dict[str, Mapping[str, Any]] = {}


def register_builtin(factory: Callable[[], Tool] | Tool, name: str | None = None) -> None:
    """Register a built-in tool (a Tool instance or a zero-argument factory)."""
    if isinstance(factory, Tool):
        instance = factory
        tool_name = name or instance.name

        def make() -> Tool:
            return instance

        maker: Callable[[], Tool] = make
    else:
        maker = factory
        tool_name = name or maker().name
    with _builtin_lock:
        _builtins[tool_name] = maker


def unregister_builtin(name: str) -> None:
    """Forget a registered built-in (tests and plugin unloading)."""
    with _builtin_lock:
        _builtins.pop(name, None)


def builtin_names() -> list[str]:
    """Names of every built-in registered by import (catalog entries not included), sorted."""
    with _builtin_lock:
        return sorted(_builtins)


def register_catalog(entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Know built-ins as data: name -> entry (``module``, ``description``, ``read_only``,
    ``metadata``, ``reads_only``, ``parameters``), as ``reasonix.tool.builtin`` generates.

    :meth:`Registry.from_builtins` then offers each one as a :class:`CatalogTool`
    without importing its module; a tool registered by import wins over its entry.
    """
    with _builtin_lock:
        _catalog.update(entries)


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
        canonical: bool = False,
    ) -> None:
        self.name, self.description = name, description
        # ``canonical``: the schema is canonical already (generated data, never mutated)
        self.schema: dict[str, Any] = dict(schema) if canonical else canonicalize_schema(schema)
        self.canonical_schema = self.schema  # Registry.add need not canonicalise it again
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


class CatalogTool(DeferredTool):
    """A built-in known from its catalog entry; its module is imported on first use.

    ``name``, ``description``, ``schema``, ``read_only`` and ``metadata`` come from
    the entry (what the request and the permission gate read). ``execute`` and any
    other attribute load the real tool: the entry's module is imported, registers
    itself, and the registered factory makes the tool.
    """

    def __init__(self, name: str, entry: Mapping[str, Any]) -> None:
        self._module: str = entry["module"]
        super().__init__(
            name, entry["description"], entry["parameters"], self._load,
            read_only=bool(entry["read_only"]), metadata=entry.get("metadata"),
            hints=bool(entry.get("reads_only")), canonical=True,  # the catalog is canonical
        )  # fmt: skip

    def _load(self) -> Tool:
        import importlib  # only when a tool is first used

        importlib.import_module(self._module)
        with _builtin_lock:
            maker = _builtins.get(self.name)
        if maker is None:
            raise LookupError(f"module {self._module} did not register {self.name!r}")
        real = maker()
        real.schema = canonicalize_schema(real.schema)  # as Registry.add does (D23)
        return real

    @property
    def module(self) -> str:
        """The module that implements the tool (imported on first use)."""
        return self._module

    def __repr__(self) -> str:
        return f"CatalogTool({self.name!r}, module={self._module!r})"


class Registry:
    """The tools of one run, in a stable sorted order."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    @classmethod
    def from_builtins(cls, enabled: Iterable[str] = ()) -> Registry:
        """A registry of the enabled built-ins (empty ``enabled`` = all of them).

        A built-in registered by import is made by its factory; one known only
        from the catalog becomes a :class:`CatalogTool` (no module imported).
        """
        wanted = list(enabled)
        with _builtin_lock:
            makers = dict(_builtins)
            entries = dict(_catalog)
        known = sorted(set(makers) | set(entries))
        unknown = [n for n in wanted if n not in known]
        if unknown and known:
            raise ConfigError(
                f"unknown tool name(s) {', '.join(unknown)}; known: {', '.join(known)}",
                key="tools.enabled",
            )
        reg = cls()
        for tool_name in known:
            if not wanted or tool_name in wanted:
                maker = makers.get(tool_name)
                reg.add(
                    maker() if maker is not None else CatalogTool(tool_name, entries[tool_name])
                )
        return reg

    def add(self, tool: Tool) -> None:
        """Insert a tool; its schema is canonicalised on the way in (D23)."""
        if getattr(tool, "canonical_schema", None) is not tool.schema:
            tool.schema = canonicalize_schema(tool.schema)
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        """Drop a tool by name (no error when absent)."""
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Tool names in the stable order."""
        return sorted(self._tools)

    def tools(self) -> list[Tool]:
        """Tools in the stable order."""
        return [self._tools[n] for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """Provider-neutral schema dicts (name, description, parameters), stably ordered."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.schema}
            for t in self.tools()
        ]
