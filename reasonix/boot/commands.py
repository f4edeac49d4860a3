"""The command layer over a live runtime: :class:`RuntimeCommandHost` and :func:`build_commands`.

Every frontend gets its slash commands with one call::

    reg = build_commands(rt)                 # rt: reasonix.boot.Runtime
    reg.notices                              # command files that were skipped
    if reg.is_command(line): result = reg.run(line)

The host is the only code that reads or changes the runtime for a command;
the registry and the built-ins in ``reasonix/command`` know nothing of it.
Long host calls (``/compact``, ``/mcp auth``, MCP prompts and resources)
run under a cancel token that :meth:`RuntimeCommandHost.interrupt` cancels
(the line chat wires Ctrl-C to it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.boot.runtime import Runtime
from reasonix.cancel import Cancel
from reasonix.command.api import PickerItem
from reasonix.command.registry import CommandRegistry, command_dirs
from reasonix.errors import ConfigError, PluginError, SessionError, UsageError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["RuntimeCommandHost", "build_commands"]


class RuntimeCommandHost:
    """:class:`reasonix.command.api.CommandHost` over a :class:`Runtime`.

    ``notify`` shows a line to the user while a command is still running
    (the authorization URL of ``/mcp auth``); without it the line goes to
    ``runtime.notices``. ``open_url`` opens that URL (default: the system
    browser, on a thread; tests pass a scripted browser).
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        notify: Callable[[str], None] | None = None,
        open_url: Callable[[str], None] | None = None,
    ) -> None:
        self.rt = runtime
        self.workspace: Path = runtime.workspace
        self._notify = notify or runtime.notices.append
        self._open_url = open_url or _open_browser
        self._active: set[Cancel] = set()
        self._lock = threading.Lock()
        # /mcp disable|enable: the disabled servers the conversation was told of, and the
        # note now waiting at the head of the next user message (with its agent and set)
        self._mcp_told: frozenset[str] = frozenset()
        self._mcp_note: tuple[object, str, frozenset[str]] = (None, "", frozenset())

    # -- cancellation ---------------------------------------------------------------
    @contextlib.contextmanager
    def _cancel(self) -> Iterator[Cancel]:
        token = Cancel()
        with self._lock:
            self._active.add(token)
        try:
            yield token
        finally:
            with self._lock:
                self._active.discard(token)

    def interrupt(self, reason: str = "interrupted") -> None:
        """Cancel every host call in progress (Ctrl-C during ``/compact``, a resource read …)."""
        with self._lock:
            active = list(self._active)
        for token in active:
            token.cancel(reason)

    # -- session -------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Model, mode, session, tokens, cost, context used/window, cache ratio."""
        from reasonix.agent.telemetry import estimate_cost

        rt = self.rt
        telemetry = rt.telemetry
        total = telemetry.total
        cost = estimate_cost(total, rt.price)
        ctx = rt.context
        if ctx is not None:
            used, window, trigger = int(ctx.estimate()), int(ctx.context_window), int(ctx.trigger)
        else:
            window = rt.resolved.provider.context_window_for(rt.resolved.model)
            used, trigger = 0, 0
        return {
            "model": rt.resolved.ref,
            "mode": rt.mode,
            "effort": self.effort(),
            "session_id": rt.session.id,
            "title": rt.session.title,
            "requests": len(telemetry.per_request),
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "cache_read_tokens": total.cache_read_tokens,
            "cache_hit_ratio": telemetry.cache_hit_ratio,
            "cost": str(cost) if cost else "",
            "currency": cost.currency if cost else "",
            "context_used": used,
            "context_window": window,
            "compact_at": trigger,
            "budget": rt.run_budget.remaining(total, rt.price),  # "" when no run budget is set
        }

    def new_session(self) -> str:
        """``/new``: a fresh session; the old transcript stays on disk and can be resumed."""
        self.rt.new_session()
        return self.rt.session.id

    def clear(self) -> str:
        """``/clear`` (confirmed): start a new session and delete the old transcript.

        CMD-1: the discarded conversation is not saved; remembered facts are
        untouched (they live in the memory store, not in the transcript).
        """
        old = self.rt.session.path
        self.rt.new_session()
        with contextlib.suppress(FileNotFoundError):
            old.unlink()
        return self.rt.session.id

    def compact(self, focus: str) -> str:
        """``/compact [focus]``: prune and summarise now; the summary call counts in the cost."""
        from reasonix.agent.context import ContextManager
        from reasonix.agent.memory.commands import compact_command

        ctx = self.rt.context
        if not isinstance(ctx, ContextManager):
            return "compaction is not available in this session"
        with self._cancel() as cancel:
            try:
                text = compact_command(ctx, cancel, focus)
            finally:
                done = ctx.last_result
                for usage in done.usage if done is not None else []:
                    self.rt.telemetry.add_usage(usage)  # paid for: part of the session's cost
        loss = getattr(done, "loss", None)
        if loss is not None and not loss.empty:
            text += "\n" + loss.text()
        return text

    # -- model and effort ---------------------------------------------------------------
    def models(self) -> list[PickerItem]:
        """Models of configured providers and of presets whose key is available."""
        current = self.rt.resolved.ref
        out: list[PickerItem] = []
        for p in self.rt.config.providers:
            usable = p.source != "built-in" or not p.api_key_env or bool(p.api_key)
            if not usable:
                continue
            for m in p.models:
                ref = f"{p.name}/{m}"
                note = "current" if ref == current else f"{p.context_window_for(m):,} tokens"
                out.append(PickerItem(label=ref, value=ref, description=note))
        return out

    def switch_model(self, ref: str) -> str:
        """``/model REF``: the resolved reference now in use (the same one: nothing changes)."""
        if self.rt.config.resolve_model(ref).ref == self.rt.resolved.ref:
            return str(self.rt.resolved.ref)
        return str(self.rt.switch_model(ref).ref)

    def set_effort(self, level: str) -> str:
        """``/effort LEVEL`` ("" clears the hint)."""
        self.rt.set_effort(level)
        return self.effort()

    def effort(self) -> str:
        """The reasoning-effort hint in force ("" when unset)."""
        return str(getattr(self.rt.agent, "effort", "") or "")

    # -- sessions ----------------------------------------------------------------------
    def sessions(self) -> list[PickerItem]:
        """This workspace's other sessions, newest first."""
        import time

        from reasonix.agent.session import list_sessions

        out = []
        for info in list_sessions(self.workspace):
            if info.id == self.rt.session.id:
                continue  # the one in use is no choice
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.modified))
            label = info.title or "(untitled)"
            out.append(PickerItem(label=label, value=info.id, description=f"{when} · {info.id}"))
        return out

    def resume(self, query: str) -> str:
        """``/resume ID|TITLE``: switch to that session; its id."""
        from reasonix.agent.session import find_session

        path = find_session(self.workspace, query)  # SessionError names the candidates
        if path == self.rt.session.path:
            raise SessionError(f"session {self.rt.session.id} is the one in use")
        self.rt.resume(path)
        return self.rt.session.id

    # -- pins and the loss report ----------------------------------------------------------
    def pins(self) -> list[str]:
        """The session's pinned items."""
        return self.rt.pins()

    def pin(self, text: str) -> list[str]:
        """Pin one item for every later summary."""
        return self.rt.pin(text)

    def unpin(self, number: int) -> str:
        """Remove one pin by its number."""
        return self.rt.unpin(number)

    def context_report(self) -> str:
        """Context in use, the summaries so far and what the last one dropped, the pins."""
        from reasonix.command.builtins import format_status

        status = format_status(self.status()).splitlines()
        lines = [line for line in status if line.startswith("context")]
        reports = list(getattr(self.rt.context, "loss_reports", []) or [])
        if reports:
            lines.append(f"summaries this session: {len(reports)}; the last one:")
            lines.append(reports[-1].text())
        else:
            lines.append("no summary yet in this process")
        pins = self.rt.pins()
        lines.append("pinned: " + ("; ".join(pins) if pins else "nothing (/pin TEXT)"))
        return "\n".join(lines)

    # -- cache-break forecasts ---------------------------------------------------------
    def cache_break(self, reason: str, target: str = "") -> str:
        """What ``reason`` would cost in lost prompt cache, to confirm first ("" = no question)."""
        from reasonix.boot.parts import price_for_model

        rt = self.rt
        if not rt.config.ui.confirm_cache_break or not rt.telemetry.per_request:
            return ""
        price = None
        if reason == "model":
            resolved = rt.config.resolve_model(target)
            if resolved.ref == rt.resolved.ref:
                return ""
            price = price_for_model(resolved)
        elif reason == "effort" and target == self.effort():
            return ""
        got = rt.cache_break(reason, price)
        return got.text() if got.tokens > 0 else ""

    # -- rewind ------------------------------------------------------------------------
    def _store(self) -> Any:
        store = self.rt.checkpoints
        if store is None:
            raise UsageError("checkpoints need git, which is not installed here")
        return store

    def rewind_points(self) -> list[PickerItem]:
        """The recorded turns of this session, newest first, and "undo" after a rewind."""
        import time

        from reasonix.agent.rewind import turn_files

        store = self._store()
        out = []
        for t in reversed(store.turns(self.rt.session.id)):
            when = time.strftime("%H:%M", time.localtime(t.time))
            try:  # one unreadable checkpoint leaves the other turns listed
                files = turn_files(store, t)
            except SessionError:
                out.append(PickerItem(f"before turn {t.number}: {t.title}", str(t.number),
                                      f"{when} · checkpoint unavailable"))  # fmt: skip
                continue
            note = (
                f"{when} · {len(files)} file(s) changed" if files else f"{when} · no file changes"
            )
            out.append(PickerItem(f"before turn {t.number}: {t.title}", str(t.number), note))
        if any(r.get("type") == "rewind" for r in store.records()):
            out.append(PickerItem("undo the last rewind", "undo", "files and conversation back"))
        return out

    def rewind(self, turn: int, mode: str) -> str:
        """Rewind this session; a new conversation continues here at once."""
        from reasonix.agent.rewind import rewind

        self.rt.session.sync()
        result = rewind(self._store(), self.rt.session.path, turn, mode)
        if result.session_path is not None:
            self.rt.resume(result.session_path)
        return result.summary()

    def rewind_undo(self) -> str:
        """Undo the newest rewind; the original conversation continues here."""
        from reasonix.agent.rewind import undo

        result = undo(self._store())
        if result.session_path is not None and result.session_path != self.rt.session.path:
            self.rt.resume(result.session_path)
        return result.summary()

    # -- memory ------------------------------------------------------------------------
    def memory(self, args: str) -> str:
        """``/memory …`` through the same actions as ``reasonix memory``."""
        from reasonix.agent.memory.catalog import Memory
        from reasonix.agent.memory.commands import run_memory_command

        return run_memory_command(Memory.for_workspace(self.workspace), args)

    # -- MCP ----------------------------------------------------------------------------
    def _manager(self) -> Any:
        if self.rt.mcp is None:
            raise PluginError("no MCP servers are configured")
        return self.rt.mcp

    def mcp_servers(self) -> list[dict[str, Any]]:
        """Per server: name, type, state, tools/prompts/resources counts, error."""
        if self.rt.mcp is None:
            return []
        return [
            {
                "name": s.name,
                "type": s.type,
                "state": s.state,
                "error": s.error,
                "protocol_version": s.protocol_version,
                "tools": len(s.tools),
                "prompts": s.prompts,
                "resources": s.resources,
            }
            for s in self.rt.mcp.status(counts=True)
        ]

    def mcp_prompts(self) -> list[dict[str, Any]]:
        """Prompts of the ready servers, each with its ``mcp__…`` command name."""
        if self.rt.mcp is None:
            return []
        with self._cancel() as cancel:
            infos = self.rt.mcp.prompts(cancel)
        return [
            {
                "server": p.server,
                "name": p.name,
                "description": p.description,
                "arguments": p.arguments,
                "command": p.command,
            }
            for p in infos
        ]

    def mcp_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """``prompts/get`` rendered to the text of a user turn."""
        mgr = self._manager()
        with self._cancel() as cancel:
            return str(mgr.get_prompt(server, name, arguments, cancel))

    def mcp_resources(self) -> list[dict[str, Any]]:
        """Resources of the ready servers (for ``@server:uri`` and its autocomplete)."""
        if self.rt.mcp is None:
            return []
        with self._cancel() as cancel:
            infos = self.rt.mcp.resources(cancel)
        return [
            {
                "server": r.server,
                "uri": r.uri,
                "name": r.name,
                "description": r.description,
                "mime_type": r.mime_type,
            }
            for r in infos
        ]

    def read_resource(self, server: str, uri: str) -> str:
        """``resources/read`` as text; PluginError naming the server when it fails."""
        mgr = self._manager()
        with self._cancel() as cancel:
            return str(mgr.read_resource(server, uri, cancel))

    def mcp_enable(self, name: str, enabled: bool) -> str:
        """``/mcp enable|disable NAME`` for the rest of this process (not saved, so a
        resumed session in a new process starts with every configured server enabled).

        Nothing already sent changes: the tool list stays, a disabled server's tools
        answer with an error, and the model learns of the change from a note at the
        head of the next user message (the agent's ``turn_prefix``).
        """
        mgr = self.rt.mcp
        if mgr is None or name not in mgr.runtimes:
            known = ", ".join(mgr.runtimes) if mgr is not None else ""
            raise UsageError(f"no MCP server named {name!r} (configured: {known or 'none'})")
        changed = mgr.enable(name) if enabled else mgr.disable(name)
        self._note_mcp(mgr.disabled())
        if not changed:
            return f"MCP server {name} is already {'enabled' if enabled else 'disabled'}"
        if not enabled:
            return (
                f"MCP server {name} disabled: its process is stopped and its tools refuse "
                f"calls until /mcp enable {name} (this process only)"
            )
        state = mgr.runtimes[name].state
        when = "it starts when a tool needs it" if state == "dormant" else f"it is {state}"
        return f"MCP server {name} enabled: {when}"

    def _note_mcp(self, disabled: list[str]) -> None:
        """Put what changed since the model was last told at the head of the next user
        message; a change undone before that message leaves no note."""
        from reasonix.agent.prompt import mcp_update

        agent = self.rt.agent
        owner, note, noted = self._mcp_note
        prefix = agent.turn_prefix
        if owner is not agent:  # another conversation (/new, /resume): told nothing yet
            self._mcp_told, note = frozenset(), ""
        elif note and note not in prefix:  # the agent sent it (and cleared its prefix)
            self._mcp_told, note = noted, ""
        rest = prefix.removesuffix(note).removesuffix("\n\n") if note else prefix
        now = frozenset(disabled)
        order = list(self.rt.mcp.runtimes)
        new_note = mcp_update(
            [n for n in order if n in now - self._mcp_told],
            [n for n in order if n in self._mcp_told - now],
        )
        agent.turn_prefix = "\n\n".join(p for p in (rest, new_note) if p)
        self._mcp_note = (agent, new_note, now)

    def mcp_auth(self, name: str) -> str:
        """``/mcp auth NAME`` (D12): the OAuth flow, then a restart of a server that failed."""
        from reasonix.config.expand import chain_lookup, environ_lookup
        from reasonix.config.mcp import expand_server
        from reasonix.plugin.mcp import oauth_store
        from reasonix.plugin.mcp.oauth import HTTP_TYPES
        from reasonix.plugin.mcp.oauth_flow import authorize, probe

        cfg = self.rt.config
        declared = next((s for s in cfg.mcp_servers if s.name == name), None)
        if declared is None:
            known = ", ".join(s.name for s in cfg.mcp_servers) or "none"
            raise UsageError(f"no MCP server named {name!r} (configured: {known})")
        if declared.type not in HTTP_TYPES:
            raise UsageError(f"{name!r} is a {declared.type} server; OAuth is for http and sse")
        server = expand_server(declared, chain_lookup(cfg.project_env, environ_lookup))
        if any(k.lower() == "authorization" for k in server.headers):
            raise ConfigError(f"{name!r} has a static Authorization header; remove it to use OAuth")

        def open_url(url: str) -> None:
            self._notify(f"Authorize Reasonix for MCP server {name!r} by opening:\n  {url}")
            self._open_url(url)

        with self._cancel() as cancel:
            state = authorize(
                server.name, server.url, open_url=open_url, challenge=probe(server.url),
                cancel=cancel,
            )  # fmt: skip
        text = (
            f"authorized MCP server {name!r} (scopes: {state.tokens.scope or '(none named)'}); "
            f"credentials saved to {oauth_store.state_path(server.name)}"
        )
        if self.rt.mcp is not None and name in self.rt.mcp.runtimes:
            text += f"; the server is {self.rt.mcp.reconnect(name)}"
        return text

    # -- sub-agent profiles ------------------------------------------------------------
    def run_profile(self, name: str, task: str) -> str:
        """``/<profile> task`` (CMD-9): run the profile as a sub-agent; its result is shown
        and kept in the conversation (the task and the adjudicated result)."""
        from .subagents import run_profile_command

        with self._cancel() as cancel:
            return run_profile_command(self.rt, name, task, cancel)


def _open_browser(url: str) -> None:
    """The system browser, on a thread: some block until they exit, and the redirect
    needs the loopback listener running meanwhile."""

    def visit() -> None:
        import webbrowser

        with contextlib.suppress(Exception):  # no browser is fine: the URL was shown
            webbrowser.open(url)

    threading.Thread(target=visit, daemon=True).start()


def build_commands(rt: Runtime, *, notify: Callable[[str], None] | None = None) -> CommandRegistry:
    """The slash commands of ``rt``: built-ins, MCP prompts and the custom command files."""
    from reasonix.command.gemini import gemini_commands
    from reasonix.config.paths import home_dir

    from .skill_commands import skill_commands
    from .subagents import profile_commands

    host = RuntimeCommandHost(rt, notify=notify)
    dirs = command_dirs(rt.workspace, home_dir(), Path.home())
    profiles = profile_commands(rt, host.run_profile)
    skills = skill_commands(lambda: rt.delegation.skills if rt.delegation is not None else None)
    gemini = gemini_commands(rt.workspace, Path.home())  # Gemini CLI's .toml commands
    return CommandRegistry(host, custom_dirs=dirs, sources=[gemini, profiles, skills])
