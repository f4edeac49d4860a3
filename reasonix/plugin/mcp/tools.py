"""MCP tools as Reasonix tools: direct ``mcp__<server>__<tool>`` and ``use_capability``.

``use_capability`` also serves *local capabilities*: in-process handlers a
frontend registers under a ``server``/``tool`` pair (the agent's
``session``/``tool_result`` pager, CTX-5). They are listed, inspected and
called exactly like MCP targets, without this layer knowing what they do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from reasonix.errors import ReasonixError
from reasonix.plugin.mcp.render import tool_id
from reasonix.tool import Tool, ToolContext, ToolResult

if TYPE_CHECKING:  # types only: use_capability must not pull in the transports
    from typing import Any

    from reasonix.plugin.mcp.catalog import ToolSearch
    from reasonix.plugin.mcp.runtime import ProgressSink, ServerRuntime

__all__ = [
    "LocalCapability",
    "McpTool",
    "UseCapabilityTool",
    "parse_arguments",
    "progress_sink",
]

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

# (tool id, tool spec) -> None to allow, or the reason for refusing (annotations only).
if TYPE_CHECKING:
    Allow = Callable[[str, dict[str, Any]], "str | None"]


def parse_arguments(args_json: str) -> dict[str, Any] | ToolResult:
    """The arguments object, or an error result the model can act on."""
    if not args_json.strip():
        return {}
    try:
        value = json.loads(args_json)
    except ValueError as exc:
        return ToolResult.error(f"arguments are not valid JSON: {exc}")
    if not isinstance(value, dict):
        return ToolResult.error("arguments must be a JSON object")
    return value


def progress_sink(ctx: ToolContext, label: str) -> ProgressSink | None:
    """Turn ``notifications/progress`` into ``ctx.progress`` text (TOOL-19, MCP-13)."""
    report = ctx.progress
    if report is None:
        return None

    def sink(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        report(f"{label}: {amount}" + (f" {message}" if message else ""))

    return sink


class LocalCapability(NamedTuple):
    """An in-process ``use_capability`` target, e.g. server ``session``, tool ``tool_result``.

    ``run(arguments, ctx)`` returns the result (text or a ToolResult) and may
    raise :class:`~reasonix.errors.ReasonixError` for a model-readable error.
    ``read_only`` calls pass the permission gate as readers. A named tuple, not a
    dataclass: an immutable record every run with a session pager makes (issue 39).
    """

    server: str
    tool: str
    description: str
    run: Callable[[dict[str, Any], ToolContext], ToolResult | str]
    # read-only, shared by every default: :attr:`spec` hands out a copy
    input_schema: Mapping[str, Any] = MappingProxyType(EMPTY_SCHEMA)
    read_only: bool = True

    @property
    def spec(self) -> dict[str, Any]:
        """The target described like an MCP ``tools/list`` entry (for inspect and ``allow``)."""
        return {
            "name": self.tool,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
            "annotations": {"readOnlyHint": self.read_only},
        }


class McpTool:
    """One remote tool adapted to the Tool protocol (MCP-14, MCP-15)."""

    def __init__(self, runtime: ServerRuntime, spec: dict[str, Any]) -> None:
        self.runtime = runtime
        self.remote_name = str(spec.get("name", ""))
        self.name = tool_id(runtime.name, self.remote_name)
        self.description = str(spec.get("description") or spec.get("title") or self.remote_name)
        schema = spec.get("inputSchema")
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else dict(EMPTY_SCHEMA)
        annotations = spec.get("annotations")
        hints = annotations if isinstance(annotations, dict) else {}
        self.read_only = hints.get("readOnlyHint") is True
        self.destructive = hints.get("destructiveHint") is True

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        """Call the remote tool; failures come back as error results."""
        args = parse_arguments(args_json)
        if isinstance(args, ToolResult):
            return args
        return self.runtime.call_tool(
            self.remote_name, args, ctx.cancel, progress_sink(ctx, self.name)
        )


_DESCRIPTION = """Reach tools of the configured MCP servers, including servers still starting.
action "list": every server with its state and tools (optionally only `server`).
action "inspect": the description and input schema of `server`/`tool`.
action "call": call `server`/`tool` with `arguments` (an object)."""
# When MCP tools are deferred (issue 37) the proxy is their only entry point.
_DESCRIPTION_SEARCH = """Reach tools of the configured MCP servers; they are not in your tool list.
action "search": the tools best matching `query`, with their input schemas.
action "list": every server with its state and tools (optionally only `server`).
action "inspect": the description and input schema of `server`/`tool`.
action "call": call `server`/`tool` (or `tool` "mcp__server__tool") with `arguments`."""
# A small context window (issue 37, item 4): built-in tools beyond the core set are here too.
_DESCRIPTION_SMALL = """Reach the tools not in your tool list: more built-in tools \
(multi_edit, move_file, todo_write, web_fetch, memory, task, ...) and MCP servers' tools.
action "search": the tools best matching `query`, with their input schemas.
action "list": all of them (optionally only `server`).
action "inspect": the full schema of `tool`.
action "call": call `tool` (a built-in's name or "mcp__server__tool") with `arguments`."""
BUILTIN = "builtin"  # the server name built-in targets are listed and searched under
SEARCH_LIMIT = 5  # results of a search: enough to choose from, few enough to stay small
_LOCAL_HEAD = "\nBuilt-in capabilities, reached the same way:"


class UseCapabilityTool:
    """The stable proxy tool (MCP-25, D21): its schema never changes during a session."""

    name = "use_capability"
    description = _DESCRIPTION
    read_only = False  # it can call writers; the permission layer decides per target

    def __init__(
        self,
        runtimes: Callable[[], dict[str, ServerRuntime]],
        allow: Allow | None = None,
        local: Sequence[LocalCapability] = (),
        strict: bool = False,
        search: ToolSearch | None = None,
    ) -> None:
        self._runtimes = runtimes
        # Built-in tools a small-window session reaches only through this proxy (issue 37,
        # item 4); set by boot with :meth:`offer_builtins`, empty otherwise.
        self._builtins: Callable[[], Sequence[Tool]] = tuple
        self._builtin_specs: tuple[tuple[str, ...], list[dict[str, Any]]] = ((), [])
        self._builtin_search: ToolSearch | None = None
        # the manager's shared index when MCP tools are deferred; None: no search action,
        # so a session without deferral sends the same bytes as before issue 37
        self._search = search
        # SUB-15: judge a target before any server process starts (or restarts); a
        # target of a server that is not live cannot be proven allowed and is refused.
        self._strict = strict
        # A frontend's filter (planner, sub-agent: COORD-15, SUB-15), asked
        # right before every dispatch so a changed policy applies at once.
        self._allow = allow
        # Local targets win over an MCP server of the same name for their exact tool.
        self._local = {(c.server, c.tool): c for c in local}
        head = _DESCRIPTION if search is None else _DESCRIPTION_SEARCH
        self.description = head
        if self._local:  # fixed at construction: the schema never changes in a session
            lines = [f'- server "{c.server}", tool "{c.tool}": {c.description}' for c in local]
            self.description = "\n".join([head, _LOCAL_HEAD, *lines])
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "inspect", "call"]},
                "server": {"type": "string", "description": "MCP server name"},
                "tool": {
                    "type": "string",
                    "description": "tool name as the server calls it (or mcp__server__tool)",
                },
                "arguments": {"type": "object", "description": "arguments for action call"},
            },
            "required": ["action"],
            "additionalProperties": False,
        }
        if search is not None:
            self.schema["properties"]["action"]["enum"].insert(0, "search")
            self.schema["properties"]["query"] = {
                "type": "string",
                "description": "words for action search",
            }

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        """Dispatch list / inspect / call."""
        args = parse_arguments(args_json)
        if isinstance(args, ToolResult):
            return args
        action = args.get("action")
        if action == "list":
            return self._list(str(args.get("server") or ""))
        if action == "search":
            return self._search_tools(str(args.get("query") or ""), ctx)
        local = self._local_target(args)
        if local is not None:
            return self._run_local(local, action, args, ctx)
        builtin = self._builtin_target(args)
        if builtin is not None:
            return self._run_builtin(builtin, action, args, ctx)
        early = self._strict_refusal(str(args.get("server") or ""), str(args.get("tool") or ""))
        if early:
            return ToolResult.error(f"use_capability refused this target: {early}")
        found = self._find(str(args.get("server") or ""), str(args.get("tool") or ""), ctx)
        if isinstance(found, ToolResult):
            return found
        runtime, spec = found
        refusal = self._refusal(runtime.name, spec)
        if refusal:
            return ToolResult.error(
                f"use_capability refused {tool_id(runtime.name, str(spec.get('name')))}: {refusal}"
            )
        if action == "inspect":
            return ToolResult(content=json.dumps(spec, indent=2, ensure_ascii=False))
        if action == "call":
            arguments = args.get("arguments") or {}
            if not isinstance(arguments, dict):
                return ToolResult.error("arguments must be an object")
            label = tool_id(runtime.name, str(spec.get("name")))
            return runtime.call_tool(
                str(spec.get("name")), arguments, ctx.cancel, progress_sink(ctx, label)
            )
        return ToolResult.error('action must be "list", "inspect" or "call"')

    def reads_only(self, args: dict[str, Any]) -> bool:
        """Whether this call only reads: ``list``, ``inspect``, or calling a read-only
        local capability. The agent's execute step asks this per call, so paging the
        session's own tool result is gated like a reader. An MCP call is judged through
        :meth:`gate_target` instead (as its target), so it counts as a writer here.
        """
        action = args.get("action")
        if action in ("search", "list", "inspect"):
            return True
        if action == "call" and (builtin := self._builtin_target(args)) is not None:
            hint = getattr(builtin, "reads_only", None)
            inner = args.get("arguments")
            inner = inner if isinstance(inner, dict) else {}
            return bool(builtin.read_only) or (callable(hint) and bool(hint(inner)))
        local = self._local_target(args) if action == "call" else None
        return local is not None and local.read_only

    def gate_target(self, args: dict[str, Any]) -> tuple[str, bool, dict[str, Any]] | None:
        """What the permission layer judges for a ``call`` of an MCP tool (issue 37):
        the target's ``mcp__server__tool`` id, its read-only hint and its arguments,
        so rules naming that tool and its hint apply exactly as to a direct call;
        None for other actions, local capabilities and unknown servers.

        Resolved from the known catalogue (live or cached): nothing is started.
        A tool not in the catalogue is judged as a writer under its id.
        """
        if args.get("action") != "call" or self._local_target(args) is not None:
            return None
        builtin = self._builtin_target(args)
        if builtin is not None:  # judged exactly as a direct call of the built-in
            inner = args.get("arguments")
            inner = inner if isinstance(inner, dict) else {}
            return builtin.name, self.reads_only(args), inner
        server, tool = str(args.get("server") or ""), str(args.get("tool") or "")
        runtimes = self._runtimes()
        if not server and tool.startswith("mcp__"):
            server = next((n for n in runtimes if tool.startswith(tool_id(n, ""))), "")
            tool = tool[len(tool_id(server, "")) :] if server else tool
        runtime = runtimes.get(server)
        if runtime is None or not tool:
            return None
        arguments = args.get("arguments")
        target_args = arguments if isinstance(arguments, dict) else {}
        spec = _spec_named(server, tool, runtime)
        if spec is None:
            return tool_id(server, tool), self.reads_only(args), target_args
        hints = spec.get("annotations")
        # a frontend that reads only (the planner's, COORD-15) keeps its reader verdict
        read_only = self.reads_only(args) or (
            isinstance(hints, dict) and hints.get("readOnlyHint") is True
        )
        return tool_id(server, str(spec.get("name"))), read_only, target_args

    # -- built-in targets (a small context window, issue 37 item 4) ------------------
    def offer_builtins(
        self, builtins: Callable[[], Sequence[Tool]], search: ToolSearch | None = None
    ) -> None:
        """Reach ``builtins()`` (the session's built-ins not in its tool list) through
        this proxy: searched, inspected and called by name, each call judged by the
        permission layer as a direct call of that built-in. ``search`` ranks them when
        MCP tools are not deferred (the MCP search covers them otherwise). The schema
        sent is unchanged: a session that offers them pins :meth:`small_schema`.
        """
        self._builtins = builtins
        self._builtin_search = search

    def small_schema(self) -> dict[str, Any]:
        """The provider schema (name, description, parameters) of this proxy for a
        small-window session: the ``search`` action, built-ins named in the description.
        """
        schema = json.loads(json.dumps(self.schema))  # a deep copy; the registry's stays
        props = schema["properties"]
        if "search" not in props["action"]["enum"]:
            props["action"]["enum"].insert(0, "search")
            props["query"] = {"type": "string", "description": "words for action search"}
        props["tool"]["description"] = (
            "a built-in tool's name, or the MCP tool name (or mcp__server__tool)"
        )
        lines = [
            f'- server "{c.server}", tool "{c.tool}": {c.description}' for c in self._local.values()
        ]
        description = "\n".join(
            [_DESCRIPTION_SMALL, _LOCAL_HEAD, *lines] if lines else [_DESCRIPTION_SMALL]
        )
        return {"name": self.name, "description": description, "parameters": schema}

    def _builtin_specs_now(self) -> list[dict[str, Any]]:
        """The reachable built-ins as MCP-like specs; the same list while they are the same
        (the search index is rebuilt only when the list changes)."""
        tools = list(self._builtins())
        names = tuple(t.name for t in tools)
        if names != self._builtin_specs[0]:
            specs = [
                {"name": t.name, "description": t.description, "inputSchema": t.schema}
                for t in tools
            ]
            self._builtin_specs = (names, specs)
        return self._builtin_specs[1]

    def _builtin_target(self, args: dict[str, Any]) -> Tool | None:
        server, tool = str(args.get("server") or ""), str(args.get("tool") or "")
        if server not in ("", BUILTIN) or not tool:
            return None
        return next((t for t in self._builtins() if t.name == tool), None)

    def _run_builtin(
        self, tool: Tool, action: Any, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        if action == "inspect":
            spec = {"name": tool.name, "description": tool.description, "inputSchema": tool.schema}
            return ToolResult(content=json.dumps(spec, indent=2, ensure_ascii=False))
        if action != "call":
            return ToolResult.error('action must be "search", "list", "inspect" or "call"')
        arguments = args.get("arguments") or {}
        if not isinstance(arguments, dict):
            return ToolResult.error("arguments must be an object")
        # the permission layer already judged this call as the built-in (gate_target)
        return tool.execute(json.dumps(arguments, ensure_ascii=False), ctx)

    def _local_target(self, args: dict[str, Any]) -> LocalCapability | None:
        server, tool = str(args.get("server") or ""), str(args.get("tool") or "")
        if not server and ":" in tool:  # "session:tool_result"
            server, _, tool = tool.partition(":")
        return self._local.get((server, tool))

    def _run_local(
        self, cap: LocalCapability, action: Any, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        refusal = self._refusal(cap.server, cap.spec)
        if refusal:
            return ToolResult.error(f"use_capability refused {cap.server}:{cap.tool}: {refusal}")
        if action == "inspect":
            return ToolResult(content=json.dumps(cap.spec, indent=2, ensure_ascii=False))
        if action != "call":
            return ToolResult.error('action must be "list", "inspect" or "call"')
        arguments = args.get("arguments") or {}
        if not isinstance(arguments, dict):
            return ToolResult.error("arguments must be an object")
        try:
            out = cap.run(arguments, ctx)
        except ReasonixError as exc:
            return ToolResult.error(f"{cap.server}:{cap.tool}: {exc}")
        return out if isinstance(out, ToolResult) else ToolResult(content=out)

    def _search_tools(self, query: str, ctx: ToolContext) -> ToolResult:
        """The best matching tools with their schemas, one JSON object a line (issue 37).

        The schemas reach the model as this tool result, appended to the
        conversation, so the tool list and the system prompt never change. Servers
        still starting (a first-ever start learning its tools) are waited for. The
        server of the best hit is started in the background (unless strict), so
        the call that usually follows does not wait for the whole start.
        """
        if not query.strip():
            return ToolResult.error('action "search" needs a `query`: words for what the tool does')
        k = SEARCH_LIMIT
        builtins = self._builtin_specs_now()
        search = self._search or (self._builtin_search if builtins else None)
        if search is None:
            return ToolResult.error('MCP tools are all in your tool list; use action "list"')
        catalogues: list[tuple[str, list[dict[str, Any]]]] = (
            [(BUILTIN, builtins)] if builtins else []
        )
        runtimes = self._runtimes()  # a small window's session searches direct MCP tools too
        for rt in runtimes.values():  # a server still starting has no catalogue yet: wait
            rt.settle(ctx.cancel)
        # a disabled server's tools (/mcp disable) are not offered until it is enabled
        catalogues += [(n, rt.tools) for n, rt in runtimes.items() if rt.state != "disabled"]
        # ask for more than k: refused targets are dropped after ranking
        hits = search.search(catalogues, query, k + 10 if self._allow else k)
        hits = [(server, spec) for server, spec in hits if not self._refusal(server, spec)][:k]
        kind = "MCP tool" if not builtins else "tool"
        if not hits:
            return ToolResult(content=f"no {kind} matches {query!r}; try other words or list")
        top = runtimes.get(hits[0][0])
        if top is not None and not self._strict:
            top.wake()
        lines = [
            f"{len(hits)} {kind}(s) for {query!r}. Call one with "
            '{"action": "call", "tool": "<tool>", "arguments": {...}}:'
        ]
        for server, spec in hits:
            name = str(spec.get("name"))
            entry = {
                "tool": name if server == BUILTIN else tool_id(server, name),
                "description": str(spec.get("description") or spec.get("title") or ""),
                "input_schema": spec.get("inputSchema") or dict(EMPTY_SCHEMA),
            }
            lines.append(json.dumps(entry, ensure_ascii=False, sort_keys=True))
        return ToolResult(content="\n".join(lines))

    def _list(self, only: str) -> ToolResult:
        runtimes = self._runtimes()
        local_servers = {server for server, _ in self._local}
        if only and only not in runtimes and only not in local_servers and only != BUILTIN:
            known = ", ".join([*runtimes, *sorted(local_servers - set(runtimes))])
            return ToolResult.error(f"no MCP server named {only!r}; known: {known}")
        lines: list[str] = []
        builtins = self._builtin_specs_now()
        if builtins and only in ("", BUILTIN):  # a small-window session's other built-ins
            lines.append(f"{BUILTIN} [built-in tools, call by name]")
            for spec in builtins:
                desc = str(spec.get("description") or "").strip().splitlines()
                lines.append(f"  - {spec.get('name')}" + (f": {desc[0][:120]}" if desc else ""))
        for server in sorted(local_servers):
            if only and server != only:
                continue
            lines.append(f"{server} [built-in]")
            for (s, _), cap in self._local.items():
                if s == server and not self._refusal(s, cap.spec):
                    lines.append(f"  - {cap.tool}: {cap.description[:120]}")
        for name, rt in runtimes.items():
            if only and name != only:
                continue
            head = f"{name} [{rt.state}]" + (f": {rt.error}" if rt.error else "")
            lines.append(head)
            if rt.state == "disabled":  # its tools refuse calls: not listed
                lines.append(f"  (disabled by the user; /mcp enable {name})")
                continue
            for spec in rt.tools:
                if self._refusal(name, spec):
                    continue
                desc = str(spec.get("description") or "").strip().splitlines()
                lines.append(f"  - {spec.get('name')}" + (f": {desc[0][:120]}" if desc else ""))
        return ToolResult(content="\n".join(lines) or "no MCP servers are configured")

    def _refusal(self, server: str, spec: dict[str, Any]) -> str | None:
        if self._allow is None:
            return None
        return self._allow(tool_id(server, str(spec.get("name"))), spec)

    def _strict_refusal(self, server: str, tool: str) -> str | None:
        """In strict mode, why a target is refused without touching any server process."""
        if not self._strict:
            return None
        runtimes = self._runtimes()
        if not server and tool.startswith("mcp__"):
            server = next((n for n in runtimes if tool.startswith(tool_id(n, ""))), "")
            tool = tool[len(tool_id(server, "")) :] if server else tool
        runtime = runtimes.get(server)
        if runtime is None:
            return None  # unknown: _find names the known servers, nothing starts
        if runtime.state == "disabled":
            return runtime.disabled_message()
        client = runtime.client
        if runtime.state != "ready" or client is None or not client.alive:
            return (
                f"MCP server {server} is not running, so {tool!r} cannot be proven "
                "read-only; this sub-agent starts no server"
            )
        for spec in runtime.tools:
            if tool in (str(spec.get("name")), tool_id(server, str(spec.get("name")))):
                return self._refusal(server, spec)
        return None

    def _find(
        self, server: str, tool: str, ctx: ToolContext
    ) -> tuple[ServerRuntime, dict[str, Any]] | ToolResult:
        runtimes = self._runtimes()
        if not server and tool.startswith("mcp__"):
            for name in runtimes:
                prefix = tool_id(name, "")
                if tool.startswith(prefix):
                    server, tool = name, tool[len(prefix) :]
                    break
        runtime = runtimes.get(server)
        if runtime is None:
            return ToolResult.error(f"no MCP server named {server!r}; known: {', '.join(runtimes)}")
        if runtime.state == "disabled":  # /mcp disable: nothing starts, nothing is inspected
            return ToolResult.error(runtime.disabled_message())
        # a dormant server's cached catalogue may lack a tool added since: start it to know
        dormant_miss = runtime.state == "dormant" and _spec_named(server, tool, runtime) is None
        if runtime.state == "starting" or dormant_miss:
            try:
                runtime.ensure_ready(ctx.cancel)
            except Exception as exc:  # noqa: BLE001 - reported to the model below
                return ToolResult.error(f"MCP server {server} is unavailable: {exc}")
        spec = _spec_named(server, tool, runtime)
        if spec is not None:
            return runtime, spec
        if runtime.state not in ("ready", "dormant"):
            return ToolResult.error(f"MCP server {server} is unavailable: {runtime.error}")
        names = ", ".join(str(s.get("name")) for s in runtime.tools)
        return ToolResult.error(f"MCP server {server} has no tool {tool!r}; it has: {names}")


def _spec_named(server: str, tool: str, runtime: ServerRuntime) -> dict[str, Any] | None:
    """The spec of ``tool`` (raw or sanitised name) among the runtime's known tools."""
    for spec in runtime.tools:
        name = str(spec.get("name"))
        if tool in (name, tool_id(server, name).split("__", 2)[-1]):
            return spec
    return None
